-- The statistics' work moves out of the insert (docs/decisions/stats.md): the statement that stores
-- events records, per merchant, the `seq` range it inserted; features/stats/fold.ts later reads
-- those events and adds them to the aggregates of 0017 (a background loop, and every stats read
-- first). A range holds exactly that statement's rows: it reserved the numbers in `event_seqs`.
CREATE TABLE "stat_pending" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"merchant_id" uuid NOT NULL,
	"first_seq" bigint NOT NULL,
	"last_seq" bigint NOT NULL
);
