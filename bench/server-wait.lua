-- bench/server-wait.lua: the server-wait cell of bench/run.sh driven by
-- sysbench. Each event sleeps 10 ms on the server, then selects one row of
-- sbtest1 by primary key (uniform over --table-size), both as plain text
-- queries. bench/server-wait-mariadb.sql and bench/server-wait-postgres.sql
-- are the same work for dbmark. With N threads and a client that keeps all
-- of them waiting on the server, the rate is about N / 10 ms whatever the
-- client's own cost, so the two tools' rates agree within a few percent
-- unless one of them serializes its clients. With --until-ms=T (ms since
-- the epoch), the server sleeps only until T and 0 s after (run.sh's
-- waits_end cell; bench/waits-end-*.sql for dbmark).
--
--   sysbench bench/server-wait.lua --db-driver=mysql ... --table-size=100000 --threads=8 --time=30 run

sysbench.cmdline.options = {
	table_size = {"rows in sbtest1", 100000},
	until_ms = {"sleep only until this time, in ms since the epoch (0: always)", 0},
}

function thread_init()
	drv = sysbench.sql.driver()
	con = drv:connect()
	local u = sysbench.opt.until_ms
	if drv:name() == "pgsql" then
		sleep = "SELECT pg_sleep(0.01)"
		if u > 0 then
			sleep = "SELECT pg_sleep(CASE WHEN extract(epoch FROM clock_timestamp()) * 1000 < " .. u .. " THEN 0.01 ELSE 0 END)"
		end
	else
		sleep = "SELECT SLEEP(0.01)"
		if u > 0 then
			sleep = "SELECT SLEEP(IF(UNIX_TIMESTAMP(NOW(6)) * 1000 < " .. u .. ", 0.01, 0))"
		end
	end
end

function thread_done()
	con:disconnect()
end

function event()
	con:query(sleep)
	con:query("SELECT c FROM sbtest1 WHERE id = " .. sysbench.rand.uniform(1, sysbench.opt.table_size))
end
