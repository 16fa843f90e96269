-- One row per stored event, typed at write time (0002_events_in.sql). The statistics read this
-- table only: its projections are the rollups, kept by ClickHouse per part, so a delete (erasure,
-- purge, retention) rebuilds them with the rows it removes.
CREATE TABLE IF NOT EXISTS events
(
    merchant_id UUID,
    event_time DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    -- A 64-bit hash of the muid: counted and erased by, never shown.
    visitor UInt64 CODEC(ZSTD(1)),
    -- PostgreSQL's seq: a transfer checks what of a range is already here.
    seq UInt64 CODEC(Delta, ZSTD(1)),
    -- The visit (features/stats/visits.ts): its id and when it began, as the event found it.
    visit UInt64 CODEC(ZSTD(1)),
    visit_start DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    event_name LowCardinality(String),
    path LowCardinality(String),
    -- The visit's source, from its first page: every event of a visit carries it.
    referrer LowCardinality(String),
    utm_source LowCardinality(String),
    utm_medium LowCardinality(String),
    utm_campaign LowCardinality(String),
    channel LowCardinality(String),
    -- The client's, from the request that brought the event (never its address).
    country LowCardinality(String),
    device LowCardinality(String),
    browser LowCardinality(String),
    os LowCardinality(String),
    currency LowCardinality(String),
    revenue Decimal(76, 30) CODEC(ZSTD(1)),
    revenue_scale UInt8,
    consent Enum8('not_required' = 0, 'granted' = 1, 'implied' = 2, 'cookieless' = 3),
    livemode Bool,
    INDEX seq_bounds seq TYPE minmax GRANULARITY 1,
    PROJECTION hourly
    (
        SELECT merchant_id, toStartOfHour(event_time), event_name, currency,
            count(), sum(revenue), max(revenue_scale), uniq(visitor)
        GROUP BY merchant_id, toStartOfHour(event_time), event_name, currency
    ),
    PROJECTION pages_daily
    (
        SELECT merchant_id, toDate(event_time), event_name, path, count(), uniq(visitor)
        GROUP BY merchant_id, toDate(event_time), event_name, path
    ),
    PROJECTION sources_daily
    (
        SELECT merchant_id, toDate(event_time), event_name, referrer, utm_source, utm_medium, utm_campaign, channel,
            count(), uniq(visitor)
        GROUP BY merchant_id, toDate(event_time), event_name, referrer, utm_source, utm_medium, utm_campaign, channel
    ),
    -- One row per visit and day (a visit past midnight has two): what the visit metrics need.
    PROJECTION visits_daily
    (
        SELECT merchant_id, toDate(event_time), visit, min(visit_start), min(event_time), max(event_time), any(visitor),
            countIf(event_name = 'PageView'), countIf(event_name NOT IN ('PageView', 'Engagement')),
            argMinIf(path, event_time, event_name = 'PageView'), argMaxIf(path, event_time, event_name = 'PageView')
        GROUP BY merchant_id, toDate(event_time), visit
    )
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(event_time)
ORDER BY (merchant_id, toDate(event_time), visitor, event_time)
SETTINGS lightweight_mutation_projection_mode = 'rebuild', deduplicate_merge_projection_mode = 'rebuild';
