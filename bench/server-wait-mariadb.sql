-- bench/run.sh's server-wait cell for dbmark on MariaDB (dbmark run tpcb -n -f,
-- -D table_size=N): the work of bench/server-wait.lua in pgbench's language.
SELECT SLEEP(0.01);
\set id random(1, :table_size)
SELECT c FROM sbtest1 WHERE id = :id;
