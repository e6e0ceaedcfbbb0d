DROP TABLE IF EXISTS dbmark_query_t;
