-- Events the collectors refused as sent by bots, counted per merchant and 15 minutes
-- (features/stats/bots.ts): what a merchant is shown of what was filtered.
CREATE TABLE IF NOT EXISTS bot_events
(
    merchant_id UUID,
    bucket DateTime('UTC'),
    events UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (merchant_id, bucket);
