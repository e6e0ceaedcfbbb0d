#!/usr/bin/env bash
# bench/run.sh: dbmark against sysbench 1.0 on the same servers, the same
# tables and the same work, run alternately; writes every run to a TSV file
# and prints a Markdown table of median ratios (dbmark / sysbench). See
# bench/README.md.
#
#   make bench                       # starts the test servers, then runs this
#   BENCH_TIME=60 make bench
#   bash bench/run.sh [TARGET...]    # only the cells on these targets
#
# A cell is TARGET/TEST[/CLIENTS]:
#   TARGET  mariadb-tcp, mariadb-socket, mariadb-tls (TCP, TLS required),
#           postgres-tcp, postgres-socket
#   TEST    a sysbench OLTP test (oltp_point_select, oltp_read_write, ...),
#           or server_wait: per event a 10 ms sleep on the server, then a
#           point select on sbtest1 (sysbench: bench/server-wait.lua; dbmark:
#           the same in pgbench's language, bench/server-wait-mariadb.sql or
#           bench/server-wait-postgres.sql, through `dbmark run tpcb -n -f`)
#           or waits_end: the same, the sleep only in the first
#           BENCH_WAITS_END seconds of each run (0 after: a server whose
#           cache has warmed; bench/waits-end-*.sql for dbmark)
#   CLIENTS client threads (default BENCH_THREADS)
# A mariadb-tls cell is skipped, with one line saying why, when the server
# has no TLS or sysbench has no client certificate (BENCH_SYSBENCH_TLS_DIR).
#
# Settings (environment):
#   BENCH_CELLS="mariadb-tcp/oltp_point_select mariadb-tcp/oltp_read_write
#                mariadb-socket/oltp_point_select mariadb-socket/oltp_read_write
#                mariadb-tls/oltp_point_select
#                mariadb-tcp/server_wait/8 mariadb-tcp/server_wait/32
#                postgres-tcp/oltp_point_select postgres-tcp/oltp_read_write
#                postgres-socket/oltp_point_select postgres-socket/oltp_read_write
#                mariadb-tcp/waits_end/8 postgres-socket/waits_end/8"
#   BENCH_TIME=30        seconds per measured run
#   BENCH_ROUNDS=3       rounds per cell (each: one tool, the other, the first again)
#   BENCH_WARMUP=5       seconds of one discarded run per tool and cell (0: none)
#   BENCH_THREADS=8      client threads of a cell that names none
#   BENCH_TABLES=4       sbtest tables
#   BENCH_TABLE_SIZE=100000
#   BENCH_WAITS_END=3    seconds of sleeps at the start of a waits_end run
#   BENCH_DB=dbmark_bench  database created (and dropped at the end) on each engine
#   BENCH_KEEP=1         keep that database, and reuse it if prepared with the same sizes
#   BENCH_RESULTS=DIR    where the TSV of every run and the summary go (default: bench/results)
#   BENCH_OUT=DIR        where the tools' logs go (default: a new /tmp/dbmark-bench.XXXXXX)
#   BENCH_SYSBENCH_TLS_DIR=DIR  cacert.pem, client-cert.pem and client-key.pem for
#                        sysbench's TLS (default: made from the test environment's CA)
#   DBMARK=PATH          the dbmark binary (default: bin/dbmark, built by make build)
#   SYSBENCH=sysbench    the sysbench binary
# The servers are those of scripts/testenv.sh, or any named by the
# DBMARK_TEST_* variables it exports (export them all to point elsewhere).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

TIME_S=${BENCH_TIME:-30}
ROUNDS=${BENCH_ROUNDS:-3}
WARMUP=${BENCH_WARMUP:-5}
THREADS=${BENCH_THREADS:-8}
TABLES=${BENCH_TABLES:-4}
TABLE_SIZE=${BENCH_TABLE_SIZE:-100000}
WAITS_END=${BENCH_WAITS_END:-3}
CELLS=${BENCH_CELLS:-mariadb-tcp/oltp_point_select mariadb-tcp/oltp_read_write mariadb-socket/oltp_point_select mariadb-socket/oltp_read_write mariadb-tls/oltp_point_select mariadb-tcp/server_wait/8 mariadb-tcp/server_wait/32 postgres-tcp/oltp_point_select postgres-tcp/oltp_read_write postgres-socket/oltp_point_select postgres-socket/oltp_read_write mariadb-tcp/waits_end/8 postgres-socket/waits_end/8}
DB=${BENCH_DB:-dbmark_bench}
KEEP=${BENCH_KEEP:-0}
SYSBENCH=${SYSBENCH:-sysbench}

case ${1:-} in -h | --help)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac

need_whole BENCH_TIME="$TIME_S" BENCH_ROUNDS="$ROUNDS" BENCH_THREADS="$THREADS" BENCH_TABLES="$TABLES" BENCH_TABLE_SIZE="$TABLE_SIZE"
[[ $WAITS_END =~ ^[0-9]+$ ]] || die "BENCH_WAITS_END=$WAITS_END: not a whole number of seconds"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "BENCH_WARMUP=$WARMUP: not a whole number"
[[ $DB =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB=$DB: use lower-case letters, digits and _"

# The cells, normalized to TARGET/TEST/CLIENTS; arguments keep those on
# the targets they name.
sel=()
for c in $CELLS; do
	IFS=/ read -r target test clients extra <<<"$c"
	[[ -z ${extra:-} && -n ${test:-} ]] || die "BENCH_CELLS: $c: not TARGET/TEST[/CLIENTS]"
	case $target in mariadb-tcp | mariadb-socket | mariadb-tls | postgres-tcp | postgres-socket) ;;
	*) die "BENCH_CELLS: $c: unknown target $target (mariadb-tcp mariadb-socket mariadb-tls postgres-tcp postgres-socket)" ;;
	esac
	[[ $test == server_wait || $test == waits_end || $test =~ ^oltp_[a-z_]+$ ]] ||
		die "BENCH_CELLS: $c: unknown test $test (a sysbench oltp_* test, server_wait or waits_end)"
	clients=${clients:-$THREADS}
	[[ $clients =~ ^[1-9][0-9]*$ ]] || die "BENCH_CELLS: $c: clients must be a positive whole number"
	if (($# > 0)) && [[ " $* " != *" $target "* ]]; then continue; fi
	sel+=("$target/$test/$clients")
done
for a in "$@"; do
	case $a in mariadb-tcp | mariadb-socket | mariadb-tls | postgres-tcp | postgres-socket) ;;
	*) die "unknown target $a (mariadb-tcp mariadb-socket mariadb-tls postgres-tcp postgres-socket)" ;;
	esac
done
((${#sel[@]})) || die "no cell left to run (BENCH_CELLS and the targets given select none)"

# ------------------------------------------------------------------ tools

# GNU time (the client's user/sys CPU and peak RSS) and jq (to read
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
dbmark_binary

# The same settings as the tests; `make bench` has exported them already.
if [[ -z ${DBMARK_TEST_MYSQL:-} || -z ${DBMARK_TEST_POSTGRES:-} ]]; then
	eval "$(bash scripts/testenv.sh env)"
fi

OUT=${BENCH_OUT:-$(mktemp -d /tmp/dbmark-bench.XXXXXX)}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
results_open run

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
	local my="--db-driver=mysql --mysql-user=$DBMARK_TEST_MY_USER --mysql-password=$DBMARK_TEST_MY_PASSWORD --mysql-db=$DB"
	local pg="--db-driver=pgsql --pgsql-port=$DBMARK_TEST_PG_PORT --pgsql-user=$DBMARK_TEST_PG_USER --pgsql-password=$DBMARK_TEST_PG_PASSWORD --pgsql-db=$DB"
	case $1 in
	mariadb-tcp) echo "$my --mysql-host=$DBMARK_TEST_MY_HOST --mysql-port=$DBMARK_TEST_MY_PORT" ;;
	mariadb-socket) echo "$my --mysql-host=localhost --mysql-socket=$DBMARK_TEST_MY_SOCKET" ;;
	# sysbench 1.0.20 spells TLS --mysql-ssl=on; with it the client
	# library requires TLS (no fallback to plain TCP).
	mariadb-tls) echo "$my --mysql-host=$DBMARK_TEST_MY_HOST --mysql-port=$DBMARK_TEST_MY_PORT --mysql-ssl=on" ;;
	postgres-tcp) echo "$pg --pgsql-host=$DBMARK_TEST_PG_HOST" ;;
	# libpq takes a directory as the host for a unix socket.
	postgres-socket) echo "$pg --pgsql-host=$DBMARK_TEST_PG_SOCKETDIR" ;;
	esac
}

# dbmark_url TARGET: dbmark's --target. TLS: go-sql-driver's tls=skip-verify
# requires TLS without checking the certificate, as sysbench does not
# check it either unless told to.
dbmark_url() {
	local u
	case $1 in
	mariadb-tcp) with_db "$DBMARK_TEST_MYSQL" "$DB" ;;
	mariadb-socket) with_db "$DBMARK_TEST_MYSQL_SOCKET" "$DB" ;;
	mariadb-tls)
		u=${DBMARK_TEST_MYSQL_TLS:-}
		if [[ -z $u ]]; then
			u=$DBMARK_TEST_MYSQL
			[[ $u == *\?* ]] && u+="&tls=skip-verify" || u+="?tls=skip-verify"
		fi
		with_db "$u" "$DB"
		;;
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
	mariadb)
		my_client -e "CREATE DATABASE $DB"
		target=mariadb-tcp
		;;
	postgres)
		pg_client -d "$DBMARK_TEST_PG_DB" -c "CREATE DATABASE $DB"
		target=postgres-tcp
		;;
	esac
	log "$e: sysbench prepare, $TABLES tables of $TABLE_SIZE rows in $DB"
	# shellcheck disable=SC2046,SC2086 # options split into words on purpose
	"$SYSBENCH" oltp_read_write $(sysbench_conn "$target") $SIZES --threads="$TABLES" prepare >"$OUT/prepare-$e.log" 2>&1 ||
		{
			tail -20 "$OUT/prepare-$e.log" >&2
			die "$e: sysbench prepare failed (log: $OUT/prepare-$e.log)"
		}
	case $e in
	mariadb) for ((i = 1; i <= TABLES; i++)); do my_client -e "ANALYZE TABLE sbtest$i" "$DB" >/dev/null; done ;;
	postgres) pg_client -d "$DB" -c "VACUUM ANALYZE" ;;
	esac
}

ENGINES=$(for c in "${sel[@]}"; do engine_of "$c"; done | sort -u | tr '\n' ' ')
cleanup() {
	[[ $KEEP == 1 ]] && return 0
	local e
	for e in $ENGINES; do drop_db "$e" 2>/dev/null || true; done
}

# server_pid_of ENGINE: the server's process id, or nothing.
server_pid_of() {
	local f
	case $1 in
	mariadb) f=$(my_client -e "SELECT @@pid_file" 2>/dev/null) || return 0 ;;
	postgres) f=$(pg_client -d "$DBMARK_TEST_PG_DB" -c "SHOW data_directory" 2>/dev/null)/postmaster.pid || return 0 ;;
	esac
	server_pid "$f"
}

# ------------------------------------------------------------------ TLS

# ssl_accepts: the MariaDB server's count of TLS handshakes so far.
ssl_accepts() { my_client -e "SHOW GLOBAL STATUS LIKE 'Ssl_accepts'" | awk '{ print $2 }'; }

# tls_check: sets TLS_REASON to why the mariadb-tls cells cannot run (empty
# when they can) and SYSBENCH_TLS_DIR.
TLS_REASON=
SYSBENCH_TLS_DIR=
tls_check() {
	local have
	have=$(my_client -e "SHOW VARIABLES LIKE 'have_ssl'" 2>/dev/null | awk '{ print $2 }')
	if [[ $have != YES ]]; then
		TLS_REASON="the server has no TLS (have_ssl = ${have:-unknown}; scripts/testenv.sh start turns it on)"
		return
	fi
	SYSBENCH_TLS_DIR=$(sysbench_tls_dir 2>"$OUT/tls-reason") || TLS_REASON=$(<"$OUT/tls-reason")
}

# ------------------------------------------------------------------ runs

# measure TOOL TARGET TEST CLIENTS SECONDS LOG: one run under GNU time.
# Prints "tps cpu_s transactions errors mean_latency_ms wall_s maxrss_kb
# server_cpu_s" (server -1: not measured).
measure() {
	local tool=$1 target=$2 test=$3 clients=$4 secs=$5 log=$6 tf=$6.time json=$6.json rc=0
	local tx tps errs lat s0 s1 a0 a1 pid t wall cpu rss dir=$OUT cmd=()
	pid=${SERVER_PID[$(engine_of "$target")]:-}
	# ends_at: when a waits_end run's sleeps end, in ms since the epoch.
	local ends_at
	ends_at=$(($(date +%s%3N) + WAITS_END * 1000))
	case $tool in
	sysbench)
		if [[ $test == server_wait ]]; then
			cmd=("$SYSBENCH" "$ROOT/bench/server-wait.lua" --table-size="$TABLE_SIZE")
		elif [[ $test == waits_end ]]; then
			cmd=("$SYSBENCH" "$ROOT/bench/server-wait.lua" --table-size="$TABLE_SIZE" --until-ms="$ends_at")
		else
			# shellcheck disable=SC2206
			cmd=("$SYSBENCH" "$test" $SIZES)
		fi
		# shellcheck disable=SC2207
		cmd+=($(sysbench_conn "$target") --threads="$clients" --time="$secs" --events=0 --report-interval=0 run)
		[[ $target == mariadb-tls ]] && dir=$SYSBENCH_TLS_DIR
		;;
	dbmark)
		cmd=(env DBMARK_HOME="$OUT/dbmark-home" "$DBMARK" run)
		if [[ $test == server_wait ]]; then
			# Plain text queries, as sysbench's con:query in the Lua script
			# (-M is PostgreSQL's; --db-ps-mode MySQL's).
			cmd+=(tpcb -n -f "$ROOT/bench/server-wait-$(engine_of "$target").sql" -D "table_size=$TABLE_SIZE")
			case $target in mariadb-*) cmd+=(--db-ps-mode disable) ;; *) cmd+=(-M simple) ;; esac
		elif [[ $test == waits_end ]]; then
			cmd+=(tpcb -n -f "$ROOT/bench/waits-end-$(engine_of "$target").sql" -D "table_size=$TABLE_SIZE" -D "until=$ends_at")
			case $target in mariadb-*) cmd+=(--db-ps-mode disable) ;; *) cmd+=(-M simple) ;; esac
		else
			# shellcheck disable=SC2206
			cmd+=("$test" $SIZES)
		fi
		cmd+=(--target "$(dbmark_url "$target")" --threads "$clients" --time "$secs" --no-store -q --json "$json")
		;;
	esac
	[[ $target == mariadb-tls ]] && a0=$(ssl_accepts)
	s0=$(server_ticks "$pid")
	(cd "$dir" && timed "$tf" "${cmd[@]}") >"$log" 2>&1 || rc=$?
	s1=$(server_ticks_after_run "$pid")
	if ((rc != 0)); then
		tail -20 "$log" >&2
		die "$tool $test on $target failed with exit code $rc (log: $log)"
	fi
	case $tool in
	sysbench)
		read -r tx tps < <(awk '/^ *transactions:/ { gsub(/\(/, "", $3); print $2, $3; exit }' "$log") || true
		errs=$(awk '/^ *ignored errors:/ { print $3; exit }' "$log")
		lat=$(awk '/^Latency/ { l = 1 } l && /^ *avg:/ { print $2; exit }' "$log")
		;;
	dbmark)
		[[ $(jq -r .status "$json") == ok ]] || die "dbmark $test on $target: status $(jq -r .status "$json") (log: $log)"
		read -r tx tps errs lat < <(jq -r '[.summary.events, .summary.events_per_s, .summary.errors_total, (.summary.latency.mean_ms // 0)] | @tsv' "$json") || true
		;;
	esac
	[[ -n ${tx:-} && -n ${tps:-} ]] || die "$tool $test on $target: no transaction count in $log"
	((tx > 0)) || die "$tool $test on $target: no transaction completed (log: $log)"
	if [[ $target == mariadb-tls ]]; then
		a1=$(ssl_accepts)
		((a1 - a0 >= clients)) || die "$tool on mariadb-tls: the server accepted $((a1 - a0)) TLS connections for $clients clients (log: $log)"
	fi
	t=$(time_of "$tf")
	read -r wall cpu rss <<<"$t"
	echo "$tps $cpu $tx ${errs:-0} ${lat:-0} $wall $rss $(server_seconds "$s0" "$s1") $(switches_of "$tf")"
}

trap cleanup EXIT
declare -A SERVER_PID
for e in $ENGINES; do
	SERVER_PID[$e]=$(server_pid_of "$e")
	[[ -n ${SERVER_PID[$e]} ]] || log "$e: the server's CPU is not measured (not on this machine, or its pid file is not readable)"
done

SKIPPED=()
if [[ " ${sel[*]}" == *" mariadb-tls/"* ]]; then
	tls_check
	[[ -z $TLS_REASON ]] || log "mariadb-tls cells skipped: $TLS_REASON"
fi

for e in $ENGINES; do
	prepare "$e"
	for cell in "${sel[@]}"; do
		IFS=/ read -r target test clients <<<"$cell"
		[[ $(engine_of "$target") == "$e" ]] || continue
		if [[ $target == mariadb-tls && -n $TLS_REASON ]]; then
			SKIPPED+=("$cell: $TLS_REASON")
			continue
		fi
		if ((WARMUP > 0)); then
			log "$cell: warm-up, ${WARMUP}s per tool (discarded)"
			for tool in sysbench dbmark; do measure "$tool" "$target" "$test" "$clients" "$WARMUP" "$OUT/${cell//\//-}-warmup-$tool.log" >/dev/null; done
		fi
		for ((r = 1; r <= ROUNDS; r++)); do
			log "$cell: round $r/$ROUNDS"
			# A round brackets one tool's run between two of the other's
			# (odd rounds sysbench, even rounds dbmark), so a steady drift
			# (table bloat, checkpoints, a slower hour) cancels out of its ratio.
			if ((r % 2)); then order="sysbench dbmark sysbench"; else order="dbmark sysbench dbmark"; fi
			k=0
			for tool in $order; do
				k=$((k + 1))
				m=$(measure "$tool" "$target" "$test" "$clients" "$TIME_S" "$OUT/${cell//\//-}-$r-$k-$tool.log")
				read -r tps cpu tx errs lat wall rss srv sw <<<"$m"
				record "$tool" "$cell" "$r" "$k" "$tps" "$cpu" "$tx" "$errs" "$clients" "$lat" "$wall" "$rss" "$srv" "$sw"
			done
		done
	done
done

# ------------------------------------------------------------------ summary

{
	cat <<EOF
# dbmark vs sysbench

$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -r);
$("$DBMARK" version); $("$SYSBENCH" --version | head -n 1);
$TABLES tables of $TABLE_SIZE rows, ${TIME_S}s per run, $ROUNDS rounds, warm-up ${WARMUP}s per tool and cell.
Raw figures: $(basename "$RESULTS_TSV").

EOF
	summary sysbench "$RESULTS_TSV"
	for s in "${SKIPPED[@]}"; do printf '\nSkipped %s\n' "$s"; done
	printf '\nDips in the dbmark runs (bench/dips.sh; steady runs: none on a quiet machine):\n\n'
	bash "$ROOT/bench/dips.sh" "$OUT"
} | tee "$RESULTS_MD"
log "raw figures: $RESULTS_TSV; logs: $OUT"
