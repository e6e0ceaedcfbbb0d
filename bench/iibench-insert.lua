-- bench/iibench-insert.lua: the insert benchmark's multi-row INSERT driven by
-- sysbench, so bench/iibench.sh can compare dbmark's iibench with sysbench on
-- the same statement: the same table (purchases_index, made by dbmark
-- beforehand), the same columns, value ranges and padding (10 characters, 5
-- of them varying), --rows rows per INSERT, one INSERT per event.
--
--   sysbench bench/iibench-insert.lua --db-driver=mysql ... --rows=100 --threads=4 --time=60 run

sysbench.cmdline.options = {
	rows = {"rows per INSERT statement", 100},
	table_name = {"the table dbmark created", "purchases_index"},
}

function thread_init()
	drv = sysbench.sql.driver()
	con = drv:connect()
	head = "INSERT INTO " .. sysbench.opt.table_name ..
		" (dateandtime, cashregisterid, customerid, productid, price, data) VALUES "
end

function thread_done()
	con:disconnect()
end

function event()
	local vals = {}
	local now = os.date("!%Y-%m-%d %H:%M:%S")
	for i = 1, sysbench.opt.rows do
		vals[i] = string.format("('%s',%d,%d,%d,%d,'aaaaa%05d')", now,
			sysbench.rand.uniform(0, 999), sysbench.rand.uniform(0, 99999),
			sysbench.rand.uniform(0, 9999), sysbench.rand.uniform(0, 499),
			sysbench.rand.uniform(0, 99999))
	end
	con:query(head .. table.concat(vals, ","))
end
