DROP TABLE IF EXISTS dbmark_example;
