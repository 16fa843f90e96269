CREATE TABLE "event_day_counts" (
	"merchant_id" uuid NOT NULL,
	"day" date NOT NULL,
	"event_name" text NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "event_day_counts_pkey" PRIMARY KEY("merchant_id","day","event_name")
);
