-- Events arrive here as stored (features/stats/insert.ts sends merchant, time, muid, seq, name, the
-- data's JSON text, consent, livemode) with their visit and its source (features/stats/visits.ts)
-- and the client's country and device, and are typed by ClickHouse on their way into `events`.
-- Page views keep their path, cut at 200 characters, `(none)` when absent; a purchase its
-- revenue: a JSON number or a decimal string of at most 46 digits before the point and 30 after,
-- in a three-letter currency, else a purchase without revenue.
CREATE TABLE IF NOT EXISTS events_in
(
    merchant_id UUID,
    event_time DateTime64(3, 'UTC'),
    muid String,
    seq UInt64,
    visit UInt64,
    visit_start DateTime64(3, 'UTC'),
    event_name String,
    data String,
    referrer String,
    utm_source String,
    utm_medium String,
    utm_campaign String,
    channel String,
    country String,
    device String,
    browser String,
    os String,
    consent Enum8('not_required' = 0, 'granted' = 1, 'implied' = 2, 'cookieless' = 3),
    livemode Bool
)
ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS events_typed TO events AS
WITH
    JSONExtractString(if(event_name = 'PageView', data, ''), 'path') AS raw_path,
    if(event_name = 'Purchase', data, '') AS buy,
    JSONExtractString(buy, 'currency') AS raw_currency,
    if(JSONType(buy, 'value') = 'String', JSONExtractString(buy, 'value'), JSONExtractRaw(buy, 'value')) AS raw_value,
    match(raw_currency, '^[A-Za-z]{3}$') AND match(raw_value, '^-?[0-9]{1,46}(\\.[0-9]{1,30})?$') AS paid
SELECT
    merchant_id,
    event_time,
    sipHash64(muid) AS visitor,
    seq,
    visit,
    visit_start,
    event_name,
    if(event_name = 'PageView', if(raw_path = '', '(none)', substringUTF8(raw_path, 1, 200)), '') AS path,
    if(referrer = '', '(none)', substringUTF8(referrer, 1, 200)) AS referrer,
    if(utm_source = '', '(none)', substringUTF8(utm_source, 1, 200)) AS utm_source,
    if(utm_medium = '', '(none)', substringUTF8(utm_medium, 1, 200)) AS utm_medium,
    if(utm_campaign = '', '(none)', substringUTF8(utm_campaign, 1, 200)) AS utm_campaign,
    channel,
    if(country = '', '(none)', country) AS country,
    if(device = '', '(none)', device) AS device,
    if(browser = '', '(none)', browser) AS browser,
    if(os = '', '(none)', os) AS os,
    if(paid, upper(raw_currency), '') AS currency,
    if(paid, toDecimal256(raw_value, 30), toDecimal256(0, 30)) AS revenue,
    if(paid, length(splitByChar('.', raw_value)[2]), 0) AS revenue_scale,
    consent,
    livemode
FROM events_in;
