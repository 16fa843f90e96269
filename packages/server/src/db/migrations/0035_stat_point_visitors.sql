-- A multi-row point's visitors (a local day read as hourly rows, a month as weeks and days),
-- counted by a read and kept with a print of the rows it united (their number, the sums of their
-- events, sketch lengths and xmin; features/stats/series.ts). A later read of the same
-- point takes the count only while the print is the same: any write of one of those rows gives it
-- a new xmin, so nothing else has to clear these rows. `names` is '' unfiltered, else the sorted
-- filter as JSON.
CREATE TABLE "stat_point_visitors" (
	"merchant_id" uuid NOT NULL,
	"names" text NOT NULL,
	"lo" timestamp with time zone NOT NULL,
	"hi" timestamp with time zone NOT NULL,
	"print" uuid NOT NULL,
	"visitors" integer NOT NULL,
	CONSTRAINT "stat_point_visitors_pkey" PRIMARY KEY("merchant_id","names","lo","hi")
);
