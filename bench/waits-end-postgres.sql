-- bench/run.sh's waits_end cell for dbmark on PostgreSQL (dbmark run tpcb -n -f,
-- -D table_size=N -D until=T): bench/server-wait.lua --until-ms=T in pgbench's
-- language, a 10 ms sleep on the server until T (ms since the epoch), none after.
SELECT pg_sleep(CASE WHEN extract(epoch FROM clock_timestamp()) * 1000 < :until THEN 0.01 ELSE 0 END);
\set id random(1, :table_size)
SELECT c FROM sbtest1 WHERE id = :id;
