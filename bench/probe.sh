#!/usr/bin/env bash
# bench/probe.sh: the client's CPU per statement of dbmark, of its peer
# (sysbench on MariaDB, pgbench on PostgreSQL) and of the bare-driver probe
# (bench/probe: N goroutines on the same drivers running one prepared point
# select, nothing else), on each transport, run in turn in the same rounds.
# Fixed counts of transactions, not fixed times: CPU per transaction is the
# figure, and it holds on a machine busy with other work where the rate
# does not. See bench/README.md.
#
#   bash bench/probe.sh                  # servers must be up (scripts/testenv.sh start)
#   bash bench/probe.sh summary bench/results/probe-....tsv   # the table again from a kept file
#   BENCH_CELLS="mariadb-tcp postgres-socket" BENCH_TOOLS="probe dbmark" bash bench/probe.sh
#   BENCH_TOOLS="dbmark dbmark@GOMAXPROCS=1 probe probe+lock" bash bench/probe.sh   # an A/B
#   BENCH_CALLGRIND=1 BENCH_TOOLS="probe dbmark" bash bench/probe.sh   # instructions per transaction
#   BENCH_TOOLS="probe probe+blocking dbmark dbmark+blocking peer" bash bench/probe.sh   # the transports' A/B
#
# A cell is ENGINE-TRANSPORT: mariadb-tcp, mariadb-socket, mariadb-tls,
# postgres-tcp, postgres-socket, postgres-tls. The work: on MariaDB
# sysbench's oltp_point_select on its 4 tables of 100,000 rows (sysbench,
# `dbmark run oltp_point_select`, the probe's `SELECT c FROM sbtestN WHERE
# id=?` on a random table); on PostgreSQL pgbench's select-only, -M
# prepared, on pgbench -i -s 10's tables (pgbench -S, `dbmark run tpcb -S`,
# the probe's prepared select of one account); -n (no vacuum) for both.
# mariadb-wait and postgres-wait (TCP): BENCH_WAIT_CLIENTS clients each
# sleeping 10 ms on the server, then a point select (bench/server-wait*:
# sysbench's Lua script and dbmark's tpcb -f, as text queries on MariaDB;
# pgbench -f and dbmark's, -M prepared); no probe; the tps must stay
# level with the peer's (about clients / 10 ms) and dbmark keep every
# client in flight.
#
# Tools: probe, dbmark, peer (sysbench or pgbench by engine), before (the
# dbmark binary DBMARK_BEFORE names, as dbmark runs: an A/B). A tool may
# carry environment settings after @ (dbmark@GOMAXPROCS=1@GOGC=off), and
# the probe +lock (each client goroutine locked to its OS thread); a
# dbmark, before or probe tool runs on Go's transport, +blocking on the
# blocking one, +poller on the poller one (--transport; probe+lock+blocking
# for both).
#
# Context switches a transaction: the process's, voluntary and involuntary
# (GNU time), less its start-up's likewise.
# Client CPU: user + system of the whole process (GNU time), less its
# start-up: each round also runs every tool BENCH_START_RUNS times with one
# transaction per client, and a transaction's CPU is (CPU of the run - the
# mean of those) / (its transactions - one per client). dbmark's start-up
# (its commands, the machine's description, connecting) is tens of ms, a
# few percent of a 100,000-transaction run on a fast machine, which would
# be counted as a cost per transaction it is not. The rate is reported
# too but on a shared machine it is noise.
# BENCH_CALLGRIND=1 runs each tool under valgrind --tool=callgrind at
# BENCH_CG_TX and twice that, and reports (Ir(2n) - Ir(n)) / n:
# user-space instructions per transaction, start-up cancelled out, in all
# and on the client path (ir_split), which repeats under load.
#
# Settings (environment):
#   BENCH_CELLS="mariadb-tcp mariadb-socket mariadb-tls postgres-tcp postgres-socket postgres-tls"
#   BENCH_TOOLS="probe dbmark peer"
#   BENCH_TX=200000      transactions per run, over all clients
#   BENCH_ROUNDS=3       rounds; each runs every tool once, in an order that turns
#   BENCH_CLIENTS=8      clients (connections) of every tool; pgbench -j 2
#   BENCH_CG_TX=4000     transactions of the smaller callgrind run
#   BENCH_START_RUNS=3   start-up runs (one transaction per client) per tool and round; 0: none
#   BENCH_WAIT_CLIENTS=32 BENCH_WAIT_TX=32000   the wait cells' clients and transactions
#   BENCH_DB=dbmark_probe_bench   database made on each server (dropped at the end)
#   BENCH_RESULTS=DIR    where the TSV and the summary go (default: bench/results)
#   DBMARK=PATH          the dbmark binary (default: bin/dbmark, built by make build)
#   DBMARK_BEFORE=PATH   another dbmark binary, the tool "before"
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

CELLS=${BENCH_CELLS:-mariadb-tcp mariadb-socket mariadb-tls postgres-tcp postgres-socket postgres-tls}
TOOLS=${BENCH_TOOLS:-probe dbmark peer}
TX=${BENCH_TX:-200000}
ROUNDS=${BENCH_ROUNDS:-3}
CLIENTS=${BENCH_CLIENTS:-8}
CG=${BENCH_CALLGRIND:-0}
CG_TX=${BENCH_CG_TX:-4000}
START_RUNS=${BENCH_START_RUNS:-3}
WAIT_CLIENTS=${BENCH_WAIT_CLIENTS:-32}
WAIT_TX=${BENCH_WAIT_TX:-32000}
DB=${BENCH_DB:-dbmark_probe_bench}
TABLES=4
TABLE_SIZE=100000
SCALE=10

# summary TSV: per cell and tool, the median CPU per transaction and its
# ratio to the probe's in the same round (median over rounds, and by
# round), and callgrind's counts when TSV has its -ir.tsv beside it.
summary() {
	cat <<EOF
# client CPU per transaction: dbmark, its peer and the bare-driver probe

$(nproc) CPUs, $(uname -r).
$(awk -F'\t' 'NR == 2 { print $9 " clients, " $7 " transactions per run" }' "$1"), $(cut -f3 "$1" | sort -n | tail -n 1) rounds. Raw: $(basename "$1").

$([[ -r ${1%.tsv}-start.tsv ]] && echo "CPU/tx without start-up (the mean of $(awk -F'	' 'NR == 1 { print $5 }' "${1%.tsv}-start.tsv")-transaction runs, subtracted); start-up: its CPU ms, median." || echo "CPU/tx with start-up (no start-up runs).")

| cell | tool | CPU µs/tx | start-up ms | tps | in flight | switches/tx | CPU/tx ÷ probe's (wait cells: dbmark's) | by round |$([[ -r ${1%.tsv}-ir.tsv ]] && echo " instructions/tx |")
|---|---|---:|---:|---:|---:|---:|---:|---|$([[ -r ${1%.tsv}-ir.tsv ]] && echo "---:|")
EOF
	awk -F'\t' -v cg="$([[ -r ${1%.tsv}-ir.tsv ]] && echo 1 || echo 0)" "$(<"$ROOT/bench/medians.awk")"'
	FILENAME ~ /-ir\.tsv$/ { add(I, $2 SUBSEP $1, $4); add(P, $2 SUBSEP $1, $5); next }
	FILENAME ~ /-flight\.tsv$/ { add(F, $2 SUBSEP $1, $4); next }
	FILENAME ~ /-start\.tsv$/ { S0[$2, $3, $1] = $4; S0TX[$2, $3, $1] = $5; add(S, $2 SUBSEP $1, $4); next }
	FILENAME ~ /-cs\.tsv$/ { add(X, $2 SUBSEP $1, $4); next }
	FNR == 1 { next }
	{
		if (!($2 in seen)) { seen[$2] = 1; cells[++nc] = $2 }
		if (!(($2, $1) in tseen)) { tseen[$2, $1] = 1; tools[$2] = tools[$2] " " $1 }
		k = $2 SUBSEP $3 SUBSEP $1
		u = (k in S0) ? ($6 - S0[k]) * 1e6 / ($7 - S0TX[k]) : $6 * 1e6 / $7
		C[$2, $3, $1] = u; add(U, $2 SUBSEP $1, u); add(T, $2 SUBSEP $1, $5)
		rounds[$2] = $3 > rounds[$2] ? $3 : rounds[$2]
	}
	END {
		for (i = 1; i <= nc; i++) {
			c = cells[i]; nt = split(substr(tools[c], 2), ts, " ")
			for (j = 1; j <= nt; j++) {
				t = ts[j]; by = ""; R = ""
				for (r = 1; r <= rounds[c]; r++) {
					ref = ((c, r, "probe") in C) ? "probe" : "dbmark"
					if (!((c, r, t) in C) || !((c, r, ref) in C)) continue
					x = C[c, r, t] / C[c, r, ref]; R = R (R == "" ? "" : " ") x; by = by (by == "" ? "" : ", ") sprintf("%.3f", x)
				}
				fl = (c SUBSEP t) in F ? sprintf("%.2f", median(F[c SUBSEP t])) : ""
				st = (c SUBSEP t) in S ? sprintf("%.0f", median(S[c SUBSEP t]) * 1000) : "n/a"
				cs = (c SUBSEP t) in X ? sprintf("%.2f", median(X[c SUBSEP t])) : "n/a"
				printf "| %s | %s | %.2f | %s | %.0f | %s | %s | %s | %s |", c, t, median(U[c SUBSEP t]), st, median(T[c SUBSEP t]), fl, cs, R == "" ? "n/a" : sprintf("%.3f", median(R)), by
				if (cg) printf " %s |", (c SUBSEP t) in I ? sprintf("%.0f (path %.0f)", median(I[c SUBSEP t]), median(P[c SUBSEP t])) : "n/a"
				printf "\n"
			}
		}
	}' $([[ -r ${1%.tsv}-start.tsv ]] && echo "${1%.tsv}-start.tsv") $([[ -r ${1%.tsv}-cs.tsv ]] && echo "${1%.tsv}-cs.tsv") "$1" $([[ -r ${1%.tsv}-ir.tsv ]] && echo "${1%.tsv}-ir.tsv") $([[ -r ${1%.tsv}-flight.tsv ]] && echo "${1%.tsv}-flight.tsv")
}

if [[ ${1:-} == summary ]]; then
	[[ $# == 2 && -r $2 ]] || die "usage: bash bench/probe.sh summary FILE.tsv"
	summary "$2"
	exit 0
fi
case ${1:-} in -h | --help)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac
(($# == 0)) || die "no arguments expected (settings are environment variables; --help lists them)"
need_whole BENCH_TX="$TX" BENCH_ROUNDS="$ROUNDS" BENCH_CLIENTS="$CLIENTS" BENCH_CG_TX="$CG_TX" BENCH_WAIT_CLIENTS="$WAIT_CLIENTS" BENCH_WAIT_TX="$WAIT_TX"
[[ $START_RUNS =~ ^[0-9]+$ ]] || die "BENCH_START_RUNS=$START_RUNS: not a whole number (0: no start-up runs)"
((TX % CLIENTS == 0 && CG_TX % CLIENTS == 0)) || die "BENCH_TX and BENCH_CG_TX must be multiples of BENCH_CLIENTS=$CLIENTS (pgbench counts per client)"
((WAIT_TX % WAIT_CLIENTS == 0)) || die "BENCH_WAIT_TX must be a multiple of BENCH_WAIT_CLIENTS=$WAIT_CLIENTS (pgbench counts per client)"
[[ $DB =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB=$DB: use lower-case letters, digits and _"
for c in $CELLS; do
	case $c in mariadb-tcp | mariadb-socket | mariadb-tls | mariadb-wait | postgres-tcp | postgres-socket | postgres-tls | postgres-wait) ;;
	*) die "BENCH_CELLS: $c: unknown (mariadb-tcp mariadb-socket mariadb-tls mariadb-wait postgres-tcp postgres-socket postgres-tls postgres-wait)" ;;
	esac
done
for t in $TOOLS; do
	[[ ${t%%@*} =~ ^((probe|probe\+lock|dbmark|before)(\+blocking|\+poller)?|peer)$ ]] || die "BENCH_TOOLS: $t: unknown (probe, probe+lock, dbmark, before, each +blocking, +poller or neither, peer; each with @VAR=VALUE settings)"
	[[ ${t%%@*} != before || -x ${DBMARK_BEFORE:-} ]] || die "BENCH_TOOLS: $t needs DBMARK_BEFORE, an executable dbmark"
done
command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
[[ $CG == 0 ]] || command -v valgrind >/dev/null || die "BENCH_CALLGRIND=1: valgrind is missing (apt-get install valgrind)"
if [[ -z ${DBMARK_TEST_MYSQL:-} || -z ${DBMARK_TEST_POSTGRES:-} ]]; then
	eval "$(bash scripts/testenv.sh env)"
fi
dbmark_binary
OUT=$(mktemp -d /tmp/dbmark-probe-bench.XXXXXX)
log "building the probe (go build ./bench/probe)"
go build -o "$OUT/probe" ./bench/probe || die "go build ./bench/probe failed"
results_open probe

with_db() { sed -E "s#^([a-z]+://[^/]*)/[^?]*#\1/$2#" <<<"$1"; }
my_client() {
	mariadb --no-defaults --protocol=TCP -h "$DBMARK_TEST_MY_HOST" -P "$DBMARK_TEST_MY_PORT" \
		-u"$DBMARK_TEST_MY_USER" -p"$DBMARK_TEST_MY_PASSWORD" -NB "$@"
}
pg_client() {
	PGPASSWORD=$DBMARK_TEST_PG_PASSWORD PGOPTIONS="-c client_min_messages=warning" psql -X -q -tA -v ON_ERROR_STOP=1 \
		-h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$@"
}

# url CELL: dbmark's (and the probe's) --target.
url() {
	case $1 in
	mariadb-tcp | mariadb-wait) with_db "$DBMARK_TEST_MYSQL" "$DB" ;;
	mariadb-socket) with_db "$DBMARK_TEST_MYSQL_SOCKET" "$DB" ;;
	mariadb-tls) with_db "$DBMARK_TEST_MYSQL_TLS" "$DB" ;;
	postgres-tcp | postgres-wait) with_db "$DBMARK_TEST_POSTGRES" "$DB" ;;
	postgres-socket) with_db "$DBMARK_TEST_POSTGRES_SOCKET" "$DB" ;;
	postgres-tls) with_db "$DBMARK_TEST_POSTGRES_TLS" "$DB" ;;
	esac
}

ENGINES=$(for c in $CELLS; do echo "${c%%-*}"; done | sort -u | tr '\n' ' ')
cleanup() {
	[[ " $ENGINES " == *" mariadb "* ]] && my_client -e "DROP DATABASE IF EXISTS $DB" 2>/dev/null
	[[ " $ENGINES " == *" postgres "* ]] && pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" 2>/dev/null
	return 0
}
trap cleanup EXIT
for e in $ENGINES; do
	case $e in
	mariadb)
		my_client -e "DROP DATABASE IF EXISTS $DB; CREATE DATABASE $DB"
		log "mariadb: sysbench prepare, $TABLES tables of $TABLE_SIZE rows"
		sysbench oltp_read_write --db-driver=mysql --mysql-host="$DBMARK_TEST_MY_HOST" --mysql-port="$DBMARK_TEST_MY_PORT" \
			--mysql-user="$DBMARK_TEST_MY_USER" --mysql-password="$DBMARK_TEST_MY_PASSWORD" --mysql-db="$DB" \
			--tables=$TABLES --table-size=$TABLE_SIZE --threads=$TABLES prepare >"$OUT/prepare-mariadb.log" 2>&1 ||
			die "sysbench prepare failed (log: $OUT/prepare-mariadb.log)"
		;;
	postgres)
		pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
		log "postgres: pgbench -i -s $SCALE"
		PGPASSWORD=$DBMARK_TEST_PG_PASSWORD pgbench -i -q -s $SCALE -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" \
			-U "$DBMARK_TEST_PG_USER" "$DB" >"$OUT/prepare-postgres.log" 2>&1 || die "pgbench -i failed (log: $OUT/prepare-postgres.log)"
		;;
	esac
done
SYSBENCH_TLS_DIR=
if [[ " $CELLS " == *" mariadb-tls "* && " $TOOLS " == *" peer"* ]]; then
	SYSBENCH_TLS_DIR=$(sysbench_tls_dir) || die "mariadb-tls: no client certificate for sysbench"
fi

# kind TOOL: the tool without its settings and transport (dbmark, probe+lock...).
kind() {
	local k=${1%%@*}
	k=${k%+blocking}
	echo "${k%+poller}"
}

# tx_of CELL: transactions of one run in CELL; clients_of CELL: its clients.
tx_of() { if [[ $1 == *-wait ]]; then echo "$WAIT_TX"; else echo "$TX"; fi; }
clients_of() { if [[ $1 == *-wait ]]; then echo "$WAIT_CLIENTS"; else echo "$CLIENTS"; fi; }

# command TOOL CELL TX JSON: sets CMD (the command line) and DIR (where it runs).
command_of() {
	local tool=$1 cell=$2 tx=$3 json=$4 base envs=() kv bin=$DBMARK tr=go clients
	base=$(kind "$tool")
	clients=$(clients_of "$cell")
	[[ ${tool%%@*} == *+blocking ]] && tr=blocking
	[[ ${tool%%@*} == *+poller ]] && tr=poller
	[[ $base == before ]] && bin=$DBMARK_BEFORE
	IFS=@ read -ra kv <<<"${tool#"${tool%%@*}"}"
	for k in "${kv[@]}"; do [[ -n $k ]] && envs+=("$k"); done
	DIR=$OUT
	CMD=(env "${envs[@]}")
	case $base/$cell in
	dbmark/postgres-wait | before/postgres-wait)
		CMD+=(DBMARK_HOME="$OUT/dbmark-home" "$bin" run tpcb -n -f "$ROOT/bench/server-wait-pgbench.sql" -s $SCALE -M prepared
			-c "$clients" -j 2 -t $((tx / clients)) --target "$(url "$cell")" --transport $tr --no-store -q --json "$json")
		;;
	dbmark/mariadb-wait | before/mariadb-wait)
		CMD+=(DBMARK_HOME="$OUT/dbmark-home" "$bin" run tpcb -n -f "$ROOT/bench/server-wait-mariadb.sql" -D "table_size=$TABLE_SIZE"
			--db-ps-mode disable -c "$clients" -t $((tx / clients)) --target "$(url "$cell")" --transport $tr --no-store -q --json "$json")
		;;
	peer/postgres-wait)
		CMD+=(PGPASSWORD="$DBMARK_TEST_PG_PASSWORD" pgbench -n -f "$ROOT/bench/server-wait-pgbench.sql" -s $SCALE -M prepared
			-c "$clients" -j 2 -t $((tx / clients)) -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$DB")
		;;
	peer/mariadb-wait)
		CMD+=(sysbench "$ROOT/bench/server-wait.lua" --table-size=$TABLE_SIZE --db-driver=mysql --mysql-host="$DBMARK_TEST_MY_HOST"
			--mysql-port="$DBMARK_TEST_MY_PORT" --mysql-user="$DBMARK_TEST_MY_USER" --mysql-password="$DBMARK_TEST_MY_PASSWORD"
			--mysql-db="$DB" --threads="$clients" --events="$tx" --time=0 --report-interval=0 run)
		;;
	probe*/mariadb-*) CMD+=("$OUT/probe" -url "$(url "$cell")" -clients "$CLIENTS" -n "$tx" -tables $TABLES -rows $TABLE_SIZE) ;;
	probe*/postgres-*) CMD+=("$OUT/probe" -url "$(url "$cell")" -clients "$CLIENTS" -n "$tx" -rows $((SCALE * 100000))) ;;
	dbmark/mariadb-* | before/mariadb-*)
		CMD+=(DBMARK_HOME="$OUT/dbmark-home" "$bin" run oltp_point_select --tables $TABLES --table-size $TABLE_SIZE
			--target "$(url "$cell")" --transport $tr --threads "$CLIENTS" --events "$tx" --time 0 --no-store -q --json "$json")
		;;
	dbmark/postgres-* | before/postgres-*)
		CMD+=(DBMARK_HOME="$OUT/dbmark-home" "$bin" run tpcb -S -M prepared -n -c "$CLIENTS" -j 2 -t $((tx / CLIENTS))
			--target "$(url "$cell")" --transport $tr --no-store -q --json "$json")
		;;
	peer/mariadb-*)
		CMD+=(sysbench oltp_point_select --tables=$TABLES --table-size=$TABLE_SIZE --db-driver=mysql --mysql-user="$DBMARK_TEST_MY_USER"
			--mysql-password="$DBMARK_TEST_MY_PASSWORD" --mysql-db="$DB" --threads="$CLIENTS" --events="$tx" --time=0 --report-interval=0)
		case $cell in
		mariadb-socket) CMD+=(--mysql-host=localhost --mysql-socket="$DBMARK_TEST_MY_SOCKET") ;;
		mariadb-tls) CMD+=(--mysql-host="$DBMARK_TEST_MY_HOST" --mysql-port="$DBMARK_TEST_MY_PORT" --mysql-ssl=on) DIR=$SYSBENCH_TLS_DIR ;;
		*) CMD+=(--mysql-host="$DBMARK_TEST_MY_HOST" --mysql-port="$DBMARK_TEST_MY_PORT") ;;
		esac
		CMD+=(run)
		;;
	peer/postgres-*)
		local host=$DBMARK_TEST_PG_HOST
		[[ $cell == postgres-socket ]] && host=$DBMARK_TEST_PG_SOCKETDIR
		[[ $cell == postgres-tls ]] && CMD+=(PGSSLMODE=require)
		CMD+=(PGPASSWORD="$DBMARK_TEST_PG_PASSWORD" pgbench -S -M prepared -n -c "$CLIENTS" -j 2 -t $((tx / CLIENTS))
			-h "$host" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$DB")
		;;
	esac
	[[ $base == probe+lock ]] && CMD+=(-lock-thread)
	[[ $base == probe* ]] && CMD+=(-transport $tr)
	return 0
}

# measure TOOL CELL LOG [TX]: one run of the cell's transactions (or TX) under GNU
# time; prints "tps cpu_s wall_s maxrss_kb mean_latency_ms in_flight
# switches" (the latency and the clients in flight (Little's law)
# dbmark's, 0 for the others; switches: the process's context switches).
measure() {
	local tool=$1 cell=$2 log=$3 tf=$3.time json=$3.json rc=0 wall cpu rss tx lat=0 fl=0
	tx=${4:-$(tx_of "$cell")}
	command_of "$tool" "$cell" "$tx" "$json"
	(cd "$DIR" && timed "$tf" "${CMD[@]}") >"$log" 2>&1 || rc=$?
	((rc == 0)) || {
		tail -20 "$log" >&2
		die "$tool on $cell failed with exit code $rc (log: $log)"
	}
	if [[ $(kind "$tool") == dbmark || $(kind "$tool") == before ]]; then
		[[ $(jq -r '.status + " " + (.summary.events | tostring)' "$json") == "ok $tx" ]] || die "dbmark on $cell: not $tx events (log: $log)"
		read -r lat fl < <(jq -r '[(.summary.latency.mean_ms // 0), (.summary.effective_concurrency // 0)] | @tsv' "$json")
	fi
	read -r wall cpu rss <<<"$(time_of "$tf")"
	awk -v w="$wall" -v c="$cpu" -v r="$rss" -v n="$tx" -v l="$lat" -v f="$fl" -v x="$(switches_of "$tf")" \
		'BEGIN { printf "%.1f %s %s %s %s %s %s\n", (w > 0 ? n / w : 0), c, w, r, l, f, x }'
}

# instructions TOOL CELL TX: runs the tool under callgrind; prints the
# file of its per-function instruction counts (self, Ir).
instructions() {
	local tool=$1 cell=$2 tx=$3 f pre=() i=1
	f=$OUT/cg-${cell}-${tool//[^a-z0-9]/_}-$tx
	command_of "$tool" "$cell" "$tx" "$f.json"
	while [[ ${CMD[$i]} == *=* ]]; do pre+=("${CMD[$i]}") && i=$((i + 1)); done
	# Go's asynchronous preemption signals trip callgrind's signal
	# handling; a long report interval keeps dbmark's once-a-second work,
	# stretched by callgrind's slowness, out of the counts.
	local extra=()
	[[ $(kind "$tool") == dbmark || $(kind "$tool") == before ]] && extra=(--report-interval 3600s)
	(cd "$DIR" && env "${pre[@]}" GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$f.out" "${CMD[@]:$i}" "${extra[@]}") >"$f.log" 2>&1 ||
		die "$tool on $cell under callgrind failed (log: $f.log)"
	callgrind_annotate --auto=no --threshold=100 "$f.out" | awk '/file:function/ { on = 1; next }
		on && $1 ~ /^[0-9,]+$/ { v = $1; gsub(",", "", v); fn = $0; sub(/^ *[0-9,]+ *\([^)]*\) */, "", fn); sub(/ \[.*$/, "", fn); sub(/^.*:/, "", fn); print v "\t" fn }' >"$f.fn"
	echo "$f.fn"
}

# ir_split A B N: instructions per transaction between a run of N and one
# of 2N (B - A over N, start-up cancelled out): "total client_path", the
# client path being the driver's code, the tool's own, allocation, and
# time, context and sync calls; the rest (the scheduler's idle loops,
# the collector, end-of-run percentiles) varies from run to run under
# callgrind as the machine's load does.
ir_split() {
	awk -F'\t' -v n="$3" 'FNR == 1 { k++ } { d[$2] += (k == 1 ? -$1 : $1) }
	END {
		for (f in d) {
			t += d[f]
			if (f ~ /dbmark|^main\.|go-sql-driver|jackc|^time\.|^runtime\.(nanotime|walltime)|^context\.|^sync\.|^internal\/sync/ ||
				f ~ /^runtime\.(malloc|nextFreeFast|newobject|convT|growslice|memclrNoHeap|\(\*mspan\)\.writeHeap|makeslice|heapSetType|\(\*mcache\))/) c += d[f]
		}
		printf "%.0f %.0f\n", t / n, c / n
	}' "$1" "$2"
}

for cell in $CELLS; do
	# The probe has no server-wait work: the wait cells run the others.
	tools=()
	for tool in $TOOLS; do [[ $cell == *-wait && $(kind "$tool") == probe* ]] || tools+=("$tool"); done
	n=${#tools[@]}
	log "$cell: warm-up (one run per tool, discarded)"
	for tool in "${tools[@]}"; do measure "$tool" "$cell" "$OUT/$cell-warmup-${tool//[^a-z0-9]/_}.log" >/dev/null; done
	for ((r = 1; r <= ROUNDS; r++)); do
		# The order turns by one tool each round, so no tool always runs
		# first or after the same other.
		order=("${tools[@]}")
		k=$(((r - 1) % n))
		order=("${order[@]:$k}" "${order[@]:0:$k}")
		for tool in "${order[@]}"; do
			read -r tps cpu wall rss lat fl cs <<<"$(measure "$tool" "$cell" "$OUT/$cell-$r-${tool//[^a-z0-9]/_}.log")"
			record "$tool" "$cell" "$r" 1 "$tps" "$cpu" "$(tx_of "$cell")" 0 "$(clients_of "$cell")" "$lat" "$wall" "$rss" -1
			[[ $fl == 0 ]] || echo "$tool	$cell	$r	$fl" >>"${RESULTS_TSV%.tsv}-flight.tsv"
			cs0=0
			if ((START_RUNS > 0)); then
				c0=$(clients_of "$cell") sum=0 sumcs=0
				for ((k = 1; k <= START_RUNS; k++)); do
					read -r _ scpu _ _ _ _ scs <<<"$(measure "$tool" "$cell" "$OUT/$cell-$r-start$k-${tool//[^a-z0-9]/_}.log" "$c0")"
					sum=$(awk -v a="$sum" -v b="$scpu" 'BEGIN { print a + b }')
					sumcs=$((sumcs + scs))
				done
				scpu=$(awk -v a="$sum" -v n="$START_RUNS" 'BEGIN { printf "%.4f", a / n }')
				cs0=$((sumcs / START_RUNS))
				log "  $tool $cell round $r: start-up $scpu s CPU, $cs0 context switches (mean of $START_RUNS runs of $c0 transactions)"
				echo "$tool	$cell	$r	$scpu	$c0" >>"${RESULTS_TSV%.tsv}-start.tsv"
			fi
			# Context switches a transaction, start-up's taken out as its CPU is.
			awk -v t="$tool" -v c="$cell" -v r="$r" -v x="$cs" -v x0="$cs0" -v n="$(tx_of "$cell")" -v n0="$(( START_RUNS > 0 ? $(clients_of "$cell") : 0 ))" \
				'BEGIN { printf "%s\t%s\t%s\t%.3f\n", t, c, r, (x - x0) / (n - n0) }' >>"${RESULTS_TSV%.tsv}-cs.tsv"
			if [[ $CG != 0 ]]; then
				read -r ir path <<<"$(ir_split "$(instructions "$tool" "$cell" "$CG_TX")" "$(instructions "$tool" "$cell" $((2 * CG_TX)))" "$CG_TX")"
				log "  $tool $cell round $r: $ir instructions per transaction, $path on the client path (callgrind)"
				echo "$tool	$cell	$r	$ir	$path" >>"${RESULTS_TSV%.tsv}-ir.tsv"
			fi
		done
	done
done

{
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg); $("$DBMARK" version); tools: $TOOLS."
	summary "$RESULTS_TSV"
} | tee "$RESULTS_MD"
