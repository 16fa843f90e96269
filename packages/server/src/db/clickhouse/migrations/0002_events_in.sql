-- Events arrive here as stored (features/stats/insert.ts sends merchant, time, muid, seq, name, the
-- data's JSON text, consent, livemode) and are typed by ClickHouse on their way into `events`: the
-- statistics' rules in one place. Page views keep their path, the referrer's host (lower case) and
-- the page URL's utm values (`+` read as a space), each cut at 200 characters, `(none)` when
-- absent; a purchase its revenue: a JSON number or a decimal string of at most 46 digits before the
-- point and 30 after, in a three-letter currency, else a purchase without revenue.
CREATE TABLE IF NOT EXISTS events_in
(
    merchant_id UUID,
    event_time DateTime64(3, 'UTC'),
    muid String,
    seq UInt64,
    event_name String,
    data String,
    consent Enum8('not_required' = 0, 'granted' = 1, 'implied' = 2, 'cookieless' = 3),
    livemode Bool
)
ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS events_typed TO events AS
WITH
    -- One parse of a page view's data: its three strings ('' when absent or not a string).
    JSONExtract(if(event_name = 'PageView', data, ''), 'Tuple(path Nullable(String), referrer Nullable(String), url Nullable(String))') AS page,
    if(event_name = 'Purchase', data, '') AS buy,
    ifNull(page.url, '') AS url,
    ifNull(page.path, '') AS raw_path,
    lowerUTF8(extract(ifNull(page.referrer, ''), '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)')) AS raw_referrer,
    replaceAll(extract(url, '[?&]utm_source=([^&#]*)'), '+', ' ') AS raw_utm_source,
    replaceAll(extract(url, '[?&]utm_medium=([^&#]*)'), '+', ' ') AS raw_utm_medium,
    replaceAll(extract(url, '[?&]utm_campaign=([^&#]*)'), '+', ' ') AS raw_utm_campaign,
    JSONExtractString(buy, 'currency') AS raw_currency,
    if(JSONType(buy, 'value') = 'String', JSONExtractString(buy, 'value'), JSONExtractRaw(buy, 'value')) AS raw_value,
    match(raw_currency, '^[A-Za-z]{3}$') AND match(raw_value, '^-?[0-9]{1,46}(\\.[0-9]{1,30})?$') AS paid
SELECT
    merchant_id,
    event_time,
    sipHash64(muid) AS visitor,
    seq,
    event_name,
    if(event_name = 'PageView', if(raw_path = '', '(none)', substringUTF8(raw_path, 1, 200)), '') AS path,
    if(event_name = 'PageView', if(raw_referrer = '', '(none)', substringUTF8(raw_referrer, 1, 200)), '') AS referrer,
    if(event_name = 'PageView', if(raw_utm_source = '', '(none)', substringUTF8(raw_utm_source, 1, 200)), '') AS utm_source,
    if(event_name = 'PageView', if(raw_utm_medium = '', '(none)', substringUTF8(raw_utm_medium, 1, 200)), '') AS utm_medium,
    if(event_name = 'PageView', if(raw_utm_campaign = '', '(none)', substringUTF8(raw_utm_campaign, 1, 200)), '') AS utm_campaign,
    if(paid, upper(raw_currency), '') AS currency,
    if(paid, toDecimal256(raw_value, 30), toDecimal256(0, 30)) AS revenue,
    if(paid, length(splitByChar('.', raw_value)[2]), 0) AS revenue_scale,
    consent,
    livemode
FROM events_in;
