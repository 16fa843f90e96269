-- A daily (or hourly) row's visitors, counted from its sketch by the first read after the sketch
-- changed (features/stats/visitor-counts.ts); NULL until then. Every write of a sketch sets it
-- back to NULL. A 90-day series reads 90 of these, not 90 sketches of 16 KB.
ALTER TABLE "stat_buckets" ADD COLUMN "visitor_count" integer;
