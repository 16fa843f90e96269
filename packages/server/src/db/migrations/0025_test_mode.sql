-- Reserved slot (filled by its feature).
SELECT 1;
