-- bench/tpcb.sh's server-wait cell, run by pgbench and by dbmark run tpcb
-- (-n -f, -s the tables' scale): a 10 ms sleep on the server, then one
-- account's balance. With N clients all waiting on the server at once the
-- rate is about N / 10 ms, so the two tools agree within a few percent
-- unless one of them serializes its clients.
SELECT pg_sleep(0.01);
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
