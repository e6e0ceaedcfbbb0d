-- The table docs/examples/queries.sql reads: 1000 rows in 10 groups.
-- Portable SQL: SQLite, PostgreSQL and MariaDB/MySQL run it as it is.
DROP TABLE IF EXISTS dbmark_example;

CREATE TABLE dbmark_example (
  id  INTEGER NOT NULL PRIMARY KEY,
  grp INTEGER NOT NULL,
  val INTEGER NOT NULL
);

INSERT INTO dbmark_example (id, grp, val)
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000)
SELECT i, i % 10, (i * 37) % 101 FROM s;
