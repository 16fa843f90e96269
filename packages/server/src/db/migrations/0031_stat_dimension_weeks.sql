-- Weekly rows of stat_dimensions (grain 10080: 7-day weeks from the epoch, features/stats/fold.ts
-- DIMENSION_GRAINS) for the aggregates kept before them: counts summed and sketches united from
-- the daily rows, as the fold keeps them from now on.
INSERT INTO "stat_dimensions" ("merchant_id", "dimension", "grain", "bucket", "value", "events", "visitors")
SELECT "merchant_id", "dimension", 10080, date_bin('7 days', "bucket", timestamptz '1970-01-01 00:00:00+00'), "value", sum("events"), stats_hll_union("visitors")
FROM "stat_dimensions"
WHERE "grain" = 1440
GROUP BY 1, 2, 3, 4, 5;
