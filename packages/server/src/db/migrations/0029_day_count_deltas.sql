-- Reserved slot (filled by its change this round).
SELECT 1;
