-- No 15-minute rows in stat_dimensions (features/stats/fold.ts DIMENSION_GRAINS): they were half
-- the fold's rows, and a breakdown now reads a range's 15-minute edges from the page views.
DELETE FROM "stat_dimensions" WHERE "grain" = 15;
