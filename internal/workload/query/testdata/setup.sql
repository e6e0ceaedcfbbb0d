-- The table the suite's queries read, the same on every engine.
DROP TABLE IF EXISTS dbmark_query_t;
CREATE TABLE dbmark_query_t (id INTEGER NOT NULL PRIMARY KEY, v INTEGER NOT NULL, s VARCHAR(20) NOT NULL);
INSERT INTO dbmark_query_t (id, v, s) VALUES (1, 10, 'a;b'), (2, 20, 'c'), (3, 30, 'd'), (4, 40, 'e');
