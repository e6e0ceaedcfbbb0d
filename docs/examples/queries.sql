-- count: every row
SELECT count(*) FROM dbmark_example;

-- groups: an aggregate per group
SELECT grp, count(*), sum(val), min(val), max(val)
FROM dbmark_example
GROUP BY grp
ORDER BY grp;

-- point: one row by its key
SELECT val FROM dbmark_example WHERE id = 500;

-- scan: every row, in order
SELECT id, grp, val FROM dbmark_example ORDER BY val, id;
