-- The fold updates the same aggregate rows again and again (every 15-minute, hourly and daily row a
-- batch touches). With full pages each update wrote a new index entry and left the old version on
-- another page: 2% of stat_dimensions' updates were HOT after an ingestion bench, and 17 dead
-- versions piled up per live row. Half-full pages keep an update on its page (HOT: no index entry,
-- the old version pruned in place): a fold of 5,000 events took 95-101 ms against 122-141 ms at
-- fillfactor 100 (bench/README.md). New pages only: `VACUUM FULL` applies it to existing ones.
ALTER TABLE "stat_buckets" SET (fillfactor = 50);
--> statement-breakpoint
ALTER TABLE "stat_dimensions" SET (fillfactor = 50);
--> statement-breakpoint
ALTER TABLE "stat_revenue" SET (fillfactor = 50);
