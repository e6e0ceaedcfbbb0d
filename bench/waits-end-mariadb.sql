-- bench/run.sh's waits_end cell for dbmark on MariaDB (dbmark run tpcb -n -f,
-- -D table_size=N -D until=T): bench/server-wait.lua --until-ms=T in pgbench's
-- language, a 10 ms sleep on the server until T (ms since the epoch), none after.
SELECT SLEEP(IF(UNIX_TIMESTAMP(NOW(6)) * 1000 < :until, 0.01, 0));
\set id random(1, :table_size)
SELECT c FROM sbtest1 WHERE id = :id;
