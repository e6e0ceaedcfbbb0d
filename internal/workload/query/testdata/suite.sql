-- count: every row
SELECT count(*) FROM dbmark_query_t;

-- scan: the rows in order, a string with a semicolon among them
SELECT id, v, s
FROM dbmark_query_t
WHERE s <> 'x;'
ORDER BY id;

# touch: a statement that returns no rows
UPDATE dbmark_query_t SET v = v + 1 WHERE id <= 2;
