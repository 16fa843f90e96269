-- Weekly rows of stat_buckets and stat_revenue (grain 10080: 7-day weeks from the epoch, as
-- stat_dimensions' since 0031; features/stats/fold.ts GRAINS) for the aggregates kept before them:
-- counts summed and sketches united from the daily rows, as the fold keeps them from now on.
INSERT INTO "stat_buckets" ("merchant_id", "grain", "bucket", "event_name", "events", "visitors")
SELECT "merchant_id", 10080, date_bin('7 days', "bucket", timestamptz '1970-01-01 00:00:00+00'), "event_name", sum("events"), stats_hll_union("visitors")
FROM "stat_buckets"
WHERE "grain" = 1440
GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO "stat_revenue" ("merchant_id", "grain", "bucket", "currency", "purchases", "amount")
SELECT "merchant_id", 10080, date_bin('7 days', "bucket", timestamptz '1970-01-01 00:00:00+00'), "currency", sum("purchases"), sum("amount")
FROM "stat_revenue"
WHERE "grain" = 1440
GROUP BY 1, 2, 3, 4;
