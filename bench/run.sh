#!/usr/bin/env bash
# bench/run.sh: dbmark against sysbench 1.0 on the same servers, same tables,
# same options, run alternately; prints the raw numbers of every round and a
# Markdown table of median ratios (dbmark / sysbench). See bench/README.md.
#
#   make bench                      # starts the test servers, then runs this
#   BENCH_TIME=60 make bench
#   bash bench/run.sh [TARGET...]   # TARGET: mariadb-tcp mariadb-socket postgres-tcp postgres-socket
#
# Settings (environment):
#   BENCH_TIME=30        seconds per measured run
#   BENCH_ROUNDS=3       rounds per target and test (each: one tool, the other, the first again)
#   BENCH_WARMUP=5       seconds of one discarded run per tool before the rounds (0: none)
#   BENCH_THREADS=8      client threads
#   BENCH_TABLES=4       sbtest tables
#   BENCH_TABLE_SIZE=100000
#   BENCH_TESTS="oltp_point_select oltp_read_write"
#   BENCH_TARGETS="mariadb-tcp mariadb-socket postgres-tcp postgres-socket"
#   BENCH_DB=dbmark_bench  database created (and dropped at the end) on each engine
#   BENCH_KEEP=1         keep that database, and reuse it if prepared with the same sizes
#   BENCH_OUT=DIR        where the raw logs go (default: a new /tmp/dbmark-bench.XXXXXX)
#   SYSBENCH=sysbench    the sysbench binary
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

TIME_S=${BENCH_TIME:-30}
ROUNDS=${BENCH_ROUNDS:-3}
WARMUP=${BENCH_WARMUP:-5}
THREADS=${BENCH_THREADS:-8}
TABLES=${BENCH_TABLES:-4}
TABLE_SIZE=${BENCH_TABLE_SIZE:-100000}
TESTS=${BENCH_TESTS:-oltp_point_select oltp_read_write}
TARGETS=${BENCH_TARGETS:-mariadb-tcp mariadb-socket postgres-tcp postgres-socket}
DB=${BENCH_DB:-dbmark_bench}
KEEP=${BENCH_KEEP:-0}
SYSBENCH=${SYSBENCH:-sysbench}
GNU_TIME=/usr/bin/time
DBMARK=$ROOT/bin/dbmark

log() { echo "bench: $*" >&2; }
die() { echo "bench: ERROR: $*" >&2; exit 1; }

if (($# > 0)); then
	case $1 in -h | --help)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	esac
	TARGETS="$*"
fi

for v in TIME_S ROUNDS WARMUP THREADS TABLES TABLE_SIZE; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: not a whole number"
done
((TIME_S > 0 && ROUNDS > 0 && THREADS > 0 && TABLES > 0 && TABLE_SIZE > 0)) || die "BENCH_TIME, BENCH_ROUNDS, BENCH_THREADS, BENCH_TABLES and BENCH_TABLE_SIZE must be positive"
[[ $DB =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB=$DB: use lower-case letters, digits and _"
for t in $TARGETS; do
	case $t in mariadb-tcp | mariadb-socket | postgres-tcp | postgres-socket) ;; *) die "unknown target $t (mariadb-tcp mariadb-socket postgres-tcp postgres-socket)" ;; esac
done

# ------------------------------------------------------------------ tools

# GNU time (for user/sys CPU and peak RSS of the client) and jq (to read
# dbmark's --json), installed from Debian when missing.
need_pkgs=()
if ! "$GNU_TIME" --version 2>&1 | grep -q GNU; then need_pkgs+=(time); fi
command -v jq >/dev/null || need_pkgs+=(jq)
command -v "$SYSBENCH" >/dev/null || need_pkgs+=(sysbench)
if ((${#need_pkgs[@]})); then
	[[ $(id -u) == 0 ]] || die "missing packages (${need_pkgs[*]}); install them or run as root"
	log "installing ${need_pkgs[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need_pkgs[@]}" >&2
fi
command -v mariadb >/dev/null || die "the mariadb client is missing (scripts/testenv.sh start installs it)"
command -v psql >/dev/null || die "psql is missing (scripts/testenv.sh start installs it)"

log "building dbmark (make build)"
make --no-print-directory build >&2
[[ -x $DBMARK ]] || die "make build did not produce $DBMARK"

# The same settings as the tests; `make bench` has exported them already.
if [[ -z ${DBMARK_TEST_MYSQL:-} || -z ${DBMARK_TEST_POSTGRES:-} ]]; then
	eval "$(bash scripts/testenv.sh env)"
fi

OUT=${BENCH_OUT:-$(mktemp -d /tmp/dbmark-bench.XXXXXX)}
mkdir -p "$OUT"
RAW=$OUT/raw.tsv
: >"$RAW"

# ------------------------------------------------------------------ targets

# with_db URL DB: URL with its database (the path) replaced by DB.
with_db() { sed -E "s#^([a-z]+://[^/]*)/[^?]*#\1/$2#" <<<"$1"; }

my_client() {
	mariadb --no-defaults --protocol=TCP -h "$DBMARK_TEST_MY_HOST" -P "$DBMARK_TEST_MY_PORT" \
		-u"$DBMARK_TEST_MY_USER" -p"$DBMARK_TEST_MY_PASSWORD" -NB "$@"
}
pg_client() {
	PGPASSWORD=$DBMARK_TEST_PG_PASSWORD PGOPTIONS="-c client_min_messages=warning" psql -X -q -tA -v ON_ERROR_STOP=1 \
		-h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$@"
}

engine_of() { echo "${1%%-*}"; }

# sysbench_conn TARGET: sysbench's driver and connection options.
sysbench_conn() {
	case $1 in
	mariadb-tcp) echo "--db-driver=mysql --mysql-host=$DBMARK_TEST_MY_HOST --mysql-port=$DBMARK_TEST_MY_PORT --mysql-user=$DBMARK_TEST_MY_USER --mysql-password=$DBMARK_TEST_MY_PASSWORD --mysql-db=$DB" ;;
	mariadb-socket) echo "--db-driver=mysql --mysql-host=localhost --mysql-socket=$DBMARK_TEST_MY_SOCKET --mysql-user=$DBMARK_TEST_MY_USER --mysql-password=$DBMARK_TEST_MY_PASSWORD --mysql-db=$DB" ;;
	postgres-tcp) echo "--db-driver=pgsql --pgsql-host=$DBMARK_TEST_PG_HOST --pgsql-port=$DBMARK_TEST_PG_PORT --pgsql-user=$DBMARK_TEST_PG_USER --pgsql-password=$DBMARK_TEST_PG_PASSWORD --pgsql-db=$DB" ;;
	# libpq takes a directory as the host for a unix socket.
	postgres-socket) echo "--db-driver=pgsql --pgsql-host=$DBMARK_TEST_PG_SOCKETDIR --pgsql-port=$DBMARK_TEST_PG_PORT --pgsql-user=$DBMARK_TEST_PG_USER --pgsql-password=$DBMARK_TEST_PG_PASSWORD --pgsql-db=$DB" ;;
	esac
}

# dbmark_url TARGET: dbmark's --target.
dbmark_url() {
	case $1 in
	mariadb-tcp) with_db "$DBMARK_TEST_MYSQL" "$DB" ;;
	mariadb-socket) with_db "$DBMARK_TEST_MYSQL_SOCKET" "$DB" ;;
	postgres-tcp) with_db "$DBMARK_TEST_POSTGRES" "$DB" ;;
	postgres-socket) with_db "$DBMARK_TEST_POSTGRES_SOCKET" "$DB" ;;
	esac
}

SIZES="--tables=$TABLES --table-size=$TABLE_SIZE"

# prepared ENGINE: whether DB already holds the tables at the right size.
prepared() {
	local q="SELECT COUNT(*) FROM sbtest$TABLES" n
	case $1 in
	mariadb) n=$(my_client -e "$q" "$DB" 2>/dev/null) || return 1 ;;
	postgres) n=$(pg_client -d "$DB" -c "$q" 2>/dev/null) || return 1 ;;
	esac
	[[ $n == "$TABLE_SIZE" ]]
}

drop_db() {
	case $1 in
	mariadb) my_client -e "DROP DATABASE IF EXISTS $DB" ;;
	postgres) pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" ;;
	esac
}

# prepare ENGINE: a fresh DB with sysbench's tables; both tools use them.
prepare() {
	local e=$1 target
	if [[ $KEEP == 1 ]] && prepared "$e"; then
		log "$e: reusing $DB ($TABLES tables of $TABLE_SIZE rows)"
		return
	fi
	drop_db "$e"
	case $e in
	mariadb) my_client -e "CREATE DATABASE $DB"; target=mariadb-tcp ;;
	postgres) pg_client -d "$DBMARK_TEST_PG_DB" -c "CREATE DATABASE $DB"; target=postgres-tcp ;;
	esac
	log "$e: sysbench prepare, $TABLES tables of $TABLE_SIZE rows in $DB"
	# shellcheck disable=SC2046
	"$SYSBENCH" oltp_read_write $(sysbench_conn $target) $SIZES --threads="$TABLES" prepare >"$OUT/prepare-$e.log" 2>&1 ||
		{ tail -20 "$OUT/prepare-$e.log" >&2; die "$e: sysbench prepare failed (log: $OUT/prepare-$e.log)"; }
	case $e in
	mariadb) for ((i = 1; i <= TABLES; i++)); do my_client -e "ANALYZE TABLE sbtest$i" "$DB" >/dev/null; done ;;
	postgres) pg_client -d "$DB" -c "VACUUM ANALYZE" ;;
	esac
}

cleanup() {
	[[ $KEEP == 1 ]] && return 0
	local e
	for e in $ENGINES; do drop_db "$e" 2>/dev/null || true; done
}

# The server's CPU per transaction while each tool drives it
# (bench/servercpu.sh), when the server runs on this machine.
# shellcheck source=bench/servercpu.sh
source "$ROOT/bench/servercpu.sh"
# server_pid_of ENGINE: the server's process id, or nothing.
server_pid_of() {
	local f
	case $1 in
	mariadb) f=$(my_client -e "SELECT @@pid_file" 2>/dev/null) || return 0 ;;
	postgres) f=$(pg_client -d "$DBMARK_TEST_PG_DB" -c "SHOW data_directory" 2>/dev/null)/postmaster.pid || return 0 ;;
	esac
	server_pid "$f"
}

# ------------------------------------------------------------------ runs

# measure TOOL TARGET TEST SECONDS LOG: one run under GNU time. Prints
# "transactions tps errors cpu_s wall_s maxrss_kb server_cpu_s ipis" (server
# -1: not measured; ipis: rescheduling interrupts during the run,
# bench/servercpu.sh).
measure() {
	local tool=$1 target=$2 test=$3 secs=$4 log=$5 tf=$5.time json=$5.json rc=0 tx tps errs s0 s1 i0 i1 pid
	pid=${SERVER_PID[$(engine_of "$target")]:-}
	s0=$(server_ticks "$pid")
	i0=$(resched_ipis)
	case $tool in
	sysbench)
		# shellcheck disable=SC2046
		"$GNU_TIME" -f "%e %U %S %M" -o "$tf" \
			"$SYSBENCH" "$test" $(sysbench_conn "$target") $SIZES --threads="$THREADS" \
			--time="$secs" --events=0 --report-interval=0 run >"$log" 2>&1 || rc=$?
		;;
	dbmark)
		"$GNU_TIME" -f "%e %U %S %M" -o "$tf" \
			env DBMARK_HOME="$OUT/dbmark-home" "$DBMARK" run "$test" --target "$(dbmark_url "$target")" $SIZES \
			--threads "$THREADS" --time "$secs" --no-store -q --json "$json" >"$log" 2>&1 || rc=$?
		;;
	esac
	i1=$(resched_ipis)
	if ((rc != 0)); then
		tail -20 "$log" >&2
		die "$tool $test on $target failed with exit code $rc (log: $log)"
	fi
	case $tool in
	sysbench)
		read -r tx tps < <(awk '/^ *transactions:/ { gsub(/\(/, "", $3); print $2, $3; exit }' "$log") || true
		errs=$(awk '/^ *ignored errors:/ { print $3; exit }' "$log")
		;;
	dbmark)
		[[ $(jq -r .status "$json") == ok ]] || die "dbmark $test on $target: status $(jq -r .status "$json") (log: $log)"
		read -r tx tps errs < <(jq -r '[.summary.events, .summary.events_per_s, .summary.errors_total] | @tsv' "$json") || true
		;;
	esac
	[[ -n ${tx:-} && -n ${tps:-} ]] || die "$tool $test on $target: no transaction count in $log"
	# GNU time writes "Command exited with non-zero status" first on failure: the numbers are on the last line.
	read -r wall user sys rss < <(tail -n 1 "$tf") || true
	[[ -n ${rss:-} ]] || die "$tool $test on $target: no GNU time output in $tf"
	s1=$(server_ticks_after_run "$pid")
	echo "$tx $tps ${errs:-0} $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }') $wall $rss $(server_seconds "$s0" "$s1") $(count_between "$i0" "$i1")"
}

# record TARGET TEST ROUND TOOL K: the round's K-th measured run, appended to
# raw.tsv and printed.
record() {
	local target=$1 test=$2 round=$3 tool=$4 k=$5 r
	r=$(measure "$tool" "$target" "$test" "$TIME_S" "$OUT/$target-$test-$round-$k-$tool.log")
	read -r tx tps errs cpu wall rss srv ipis <<<"$r"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$test" "$round" "$tool" "$tx" "$tps" "$errs" "$cpu" "$wall" "$rss" "$srv" "$ipis" >>"$RAW"
	awk -v t="$target" -v te="$test" -v ro="$round" -v to="$tool" -v tx="$tx" -v tps="$tps" -v e="$errs" -v c="$cpu" -v w="$wall" -v m="$rss" -v srv="$srv" -v ipis="$ipis" \
		'BEGIN { printf "| %s | %s | %s | %s | %.1f | %d | %d | %.2f | %.2f | %.1f | %.1f | %s | %s |\n", t, te, ro, to, tps, tx, e, c, w, c * 1e6 / tx, m / 1024, srv < 0 ? "n/a" : sprintf("%.1f", srv * 1e6 / tx), ipis < 0 ? "n/a" : sprintf("%.1f", ipis * 1e3 / tx) }'
}

ENGINES=$(for t in $TARGETS; do engine_of "$t"; done | sort -u | tr '\n' ' ')
trap cleanup EXIT
declare -A SERVER_PID
for e in $ENGINES; do
	SERVER_PID[$e]=$(server_pid_of "$e")
	[[ -n ${SERVER_PID[$e]} ]] || log "$e: the server's CPU is not measured (not on this machine, or its pid file is not readable)"
done

cat <<EOF
# dbmark vs sysbench

$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -r)
$("$DBMARK" version); $("$SYSBENCH" --version)
threads $THREADS, $TABLES tables of $TABLE_SIZE rows, ${TIME_S}s per run, $ROUNDS rounds, warm-up ${WARMUP}s per tool
raw logs: $OUT

## Raw runs

| target | test | round | tool | tps | transactions | errors | CPU s (user+sys) | wall s | CPU µs/tx | max RSS MB | server CPU µs/tx | resched IPIs per 1000 tx |
|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
EOF

for e in $ENGINES; do
	prepare "$e"
	for target in $TARGETS; do
		[[ $(engine_of "$target") == "$e" ]] || continue
		for test in $TESTS; do
			if ((WARMUP > 0)); then
				log "$target $test: warm-up, ${WARMUP}s per tool (discarded)"
				measure sysbench "$target" "$test" "$WARMUP" "$OUT/$target-$test-warmup-sysbench.log" >/dev/null
				measure dbmark "$target" "$test" "$WARMUP" "$OUT/$target-$test-warmup-dbmark.log" >/dev/null
			fi
			for ((r = 1; r <= ROUNDS; r++)); do
				log "$target $test: round $r/$ROUNDS"
				# A round brackets one tool's run between two of the other's
				# (odd rounds sysbench, even rounds dbmark), so a steady drift
				# (table bloat, checkpoints, a slower hour) cancels out of its ratio.
				if ((r % 2)); then order="sysbench dbmark sysbench"; else order="dbmark sysbench dbmark"; fi
				k=0
				for tool in $order; do
					k=$((k + 1))
					record "$target" "$test" "$r" "$tool" "$k"
				done
			done
		done
	done
done

# ------------------------------------------------------------------ summary

cat <<EOF

## Medians (dbmark / sysbench)

Ratios are the median over rounds of the per-round ratio; in a round, the
tool that ran twice counts with the mean of its two rates and its CPU over
both runs' transactions. tps: higher is
better for dbmark when the ratio is above 1. CPU/tx is the client process's
user+sys CPU time divided by the transactions it completed: lower is better,
so a ratio below 1 means dbmark needs less CPU per transaction. The server
columns are the server's CPU per transaction while each tool drove it; the
IPI columns the machine's rescheduling interrupts per 1000 transactions
(wake-ups that crossed CPUs), the median of each tool's runs.

| target | test | sysbench tps | dbmark tps | tps ratio | sysbench CPU µs/tx | dbmark CPU µs/tx | CPU/tx ratio | sysbench RSS MB | dbmark RSS MB | server µs/tx with sysbench | with dbmark | server ratio | IPIs/ktx with sysbench | with dbmark |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
EOF

awk -F'\t' "$(<"$ROOT/bench/medians.awk")"'
{
	key = $1 SUBSEP $2
	if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
	run = key SUBSEP $3
	tps[run, $4] += $6; runs[run, $4]++; cpu[run, $4] += $8; txs[run, $4] += $5
	add(T, key SUBSEP $4, $6); add(C, key SUBSEP $4, $8 * 1e6 / $5); add(M, key SUBSEP $4, $10 / 1024)
	if ($11 != "" && $11 >= 0) { srv[run, $4] += $11; add(S, key SUBSEP $4, $11 * 1e6 / $5) } else nosrv[key] = 1
	if ($12 != "" && $12 >= 0) add(I, key SUBSEP $4, $12 * 1e3 / $5); else noipi[key] = 1
	rounds[key] = rounds[key] " " $3
}
END {
	for (i = 1; i <= nk; i++) {
		key = keys[i]; tr = ""; cr = ""
		n = split(rounds[key], rs, " ")
		for (j = 1; j <= n; j++) {
			run = key SUBSEP rs[j]
			if (!((run, "sysbench") in tps) || !((run, "dbmark") in tps) || done[run]++) continue
			add(R, key SUBSEP "tps", (tps[run, "dbmark"] / runs[run, "dbmark"]) / (tps[run, "sysbench"] / runs[run, "sysbench"]))
			add(R, key SUBSEP "cpu", (cpu[run, "dbmark"] / txs[run, "dbmark"]) / (cpu[run, "sysbench"] / txs[run, "sysbench"]))
			if (!(key in nosrv) && srv[run, "sysbench"] > 0)
				add(R, key SUBSEP "srv", (srv[run, "dbmark"] / txs[run, "dbmark"]) / (srv[run, "sysbench"] / txs[run, "sysbench"]))
		}
		split(key, kk, SUBSEP)
		server = "n/a | n/a | n/a"
		if (!(key in nosrv) && (key SUBSEP "srv") in R)
			server = both(S, key, "sysbench") sprintf(" | %.3f", median(R[key SUBSEP "srv"]))
		ipis = "n/a | n/a"
		if (!(key in noipi))
			ipis = both(I, key, "sysbench")
		printf "| %s | %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %.1f | %.1f | %s | %s |\n", kk[1], kk[2],
			median(T[key SUBSEP "sysbench"]), median(T[key SUBSEP "dbmark"]), median(R[key SUBSEP "tps"]),
			median(C[key SUBSEP "sysbench"]), median(C[key SUBSEP "dbmark"]), median(R[key SUBSEP "cpu"]),
			median(M[key SUBSEP "sysbench"]), median(M[key SUBSEP "dbmark"]), server, ipis
	}
}' "$RAW"
