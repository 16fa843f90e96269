-- The fold updates the same aggregate rows again and again (every 15-minute, hourly and daily row a
-- batch touches). With full pages each update wrote a new index entry and left the old version on
-- another page: 2% of stat_dimensions' updates were HOT after an ingestion bench, and 17 dead
-- versions piled up per live row. Half-full pages keep an update on its page (HOT: no index entry,
-- the old version pruned in place): refolding 1.26M collected events took 34.2-36.1 s of backend CPU
-- against 38.3-38.6 s at fillfactor 100 (bench/README.md, "Part 5"), for about a fifth more disk.
-- New pages only: `VACUUM FULL` applies it to existing ones.
ALTER TABLE "stat_buckets" SET (fillfactor = 50);
--> statement-breakpoint
ALTER TABLE "stat_dimensions" SET (fillfactor = 50);
--> statement-breakpoint
ALTER TABLE "stat_revenue" SET (fillfactor = 50);
