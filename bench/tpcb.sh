#!/usr/bin/env bash
# bench/tpcb.sh: `dbmark run tpcb` against pgbench on the test PostgreSQL,
# the same tables and options, run alternately; writes every run to a TSV
# file and prints a Markdown table of median ratios (dbmark / pgbench). See
# bench/README.md.
#
#   bash bench/tpcb.sh                 # servers must be up (make testenv-start)
#   BENCH_TIME=10 bash bench/tpcb.sh
#
# A cell is SCRIPT/MODE/TRANSPORT[/CLIENTS]:
#   SCRIPT     a builtin (select-only, tpcb-like, simple-update), or
#              server_wait: bench/server-wait-pgbench.sql, a 10 ms sleep on
#              the server then a select of one account, run by both tools
#              with -n -f
#   MODE       prepared, extended or simple (-M)
#   TRANSPORT  socket, tcp, or tls (TCP with TLS required: sslmode=require
#              in dbmark's URL, PGSSLMODE=require for pgbench; skipped, with
#              one line saying so, when the server has ssl off)
#   CLIENTS    -c (default BENCH_CLIENTS)
#
# Settings (environment):
#   BENCH_CELLS="select-only/prepared/socket select-only/simple/socket
#                tpcb-like/prepared/socket tpcb-like/simple/socket
#                select-only/prepared/tcp select-only/simple/tcp
#                tpcb-like/prepared/tcp tpcb-like/simple/tcp
#                select-only/prepared/tls
#                server_wait/prepared/tcp/8 server_wait/prepared/tcp/32"
#   BENCH_TIME=30        seconds per measured run
#   BENCH_ROUNDS=3       rounds per cell (each: one tool, the other, the first again)
#   BENCH_WARMUP=5       seconds of one discarded run per tool and cell (0: none)
#   BENCH_CLIENTS=8      -c of a cell that names none
#   BENCH_JOBS=2         -j (pgbench's threads; dbmark accepts it)
#   BENCH_SCALE=10       -s
#   BENCH_DB=dbmark_pgbench_bench  database created (and dropped at the end)
#   BENCH_RESULTS=DIR    where the TSV of every run and the summary go (default: bench/results)
#   BENCH_OUT=DIR        where the tools' logs go (default: a new /tmp/dbmark-tpcb-bench.XXXXXX)
#   DBMARK=PATH          the dbmark binary (default: bin/dbmark, built by make build)
#   PGBENCH=pgbench      the pgbench binary
# The server is that of scripts/testenv.sh, or the one named by
# DBMARK_TEST_POSTGRES, DBMARK_TEST_POSTGRES_SOCKET and DBMARK_TEST_PG_*
# (HOST, PORT, SOCKETDIR, USER, PASSWORD, DB) when those are exported;
# DBMARK_TEST_POSTGRES_TLS, when set, is dbmark's URL for the tls cells.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

TIME_S=${BENCH_TIME:-30}
ROUNDS=${BENCH_ROUNDS:-3}
WARMUP=${BENCH_WARMUP:-5}
CLIENTS=${BENCH_CLIENTS:-8}
JOBS=${BENCH_JOBS:-2}
SCALE=${BENCH_SCALE:-10}
CELLS=${BENCH_CELLS:-select-only/prepared/socket select-only/simple/socket tpcb-like/prepared/socket tpcb-like/simple/socket select-only/prepared/tcp select-only/simple/tcp tpcb-like/prepared/tcp tpcb-like/simple/tcp select-only/prepared/tls server_wait/prepared/tcp/8 server_wait/prepared/tcp/32}
DB=${BENCH_DB:-dbmark_pgbench_bench}
PGBENCH=${PGBENCH:-pgbench}
WAIT_SCRIPT=$ROOT/bench/server-wait-pgbench.sql

case ${1:-} in -h | --help)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac
(($# == 0)) || die "no arguments expected (cells are chosen with BENCH_CELLS; --help lists the settings)"

need_whole BENCH_TIME="$TIME_S" BENCH_ROUNDS="$ROUNDS" BENCH_CLIENTS="$CLIENTS" BENCH_JOBS="$JOBS" BENCH_SCALE="$SCALE"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "BENCH_WARMUP=$WARMUP: not a whole number"
[[ $DB =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB=$DB: use lower-case letters, digits and _"

# The cells, normalized to SCRIPT/MODE/TRANSPORT/CLIENTS.
sel=()
for c in $CELLS; do
	IFS=/ read -r script mode tr clients extra <<<"$c"
	[[ -z ${extra:-} && -n ${tr:-} ]] || die "BENCH_CELLS: $c: not SCRIPT/MODE/TRANSPORT[/CLIENTS]"
	case $script in select-only | tpcb-like | simple-update | server_wait) ;;
	*) die "BENCH_CELLS: $c: unknown script $script (select-only tpcb-like simple-update server_wait)" ;;
	esac
	case $mode in prepared | extended | simple) ;; *) die "BENCH_CELLS: $c: unknown mode $mode (prepared extended simple)" ;; esac
	case $tr in socket | tcp | tls) ;; *) die "BENCH_CELLS: $c: unknown transport $tr (socket tcp tls)" ;; esac
	clients=${clients:-$CLIENTS}
	[[ $clients =~ ^[1-9][0-9]*$ ]] || die "BENCH_CELLS: $c: clients must be a positive whole number"
	sel+=("$script/$mode/$tr/$clients")
done
((${#sel[@]})) || die "BENCH_CELLS is empty"

"$GNU_TIME" --version 2>&1 | grep -q GNU || die "GNU time is missing (apt-get install time)"
command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
command -v "$PGBENCH" >/dev/null || die "pgbench is missing (apt-get install postgresql-client)"
command -v psql >/dev/null || die "psql is missing"
dbmark_binary
if [[ -z ${DBMARK_TEST_POSTGRES:-} ]]; then
	eval "$(bash scripts/testenv.sh env)"
fi

OUT=${BENCH_OUT:-$(mktemp -d /tmp/dbmark-tpcb-bench.XXXXXX)}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
results_open tpcb
export PGPASSWORD=$DBMARK_TEST_PG_PASSWORD

pg_client() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -tA -v ON_ERROR_STOP=1 -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$@"; }
with_db() { sed -E "s#^([a-z]+://[^/]*)/[^?]*#\1/$2#" <<<"$1"; }

# pgbench_host TRANSPORT: libpq takes the socket's directory as the host.
pgbench_host() { [[ $1 == socket ]] && echo "$DBMARK_TEST_PG_SOCKETDIR" || echo "$DBMARK_TEST_PG_HOST"; }

# dbmark_url TRANSPORT: dbmark's --target. tls: sslmode=require (TLS,
# the certificate not checked, as PGSSLMODE=require does for pgbench).
dbmark_url() {
	local u
	case $1 in
	socket) with_db "$DBMARK_TEST_POSTGRES_SOCKET" "$DB" ;;
	tcp) with_db "$DBMARK_TEST_POSTGRES" "$DB" ;;
	tls)
		u=${DBMARK_TEST_POSTGRES_TLS:-}
		if [[ -z $u ]]; then
			u=$(sed -E 's/([?&])sslmode=[^&]*&?/\1/; s/[?&]$//' <<<"$DBMARK_TEST_POSTGRES")
			[[ $u == *\?* ]] && u+="&sslmode=require" || u+="?sslmode=require"
		fi
		with_db "$u" "$DB"
		;;
	esac
}

cleanup() { pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true; }
trap cleanup EXIT
cleanup
pg_client -d "$DBMARK_TEST_PG_DB" -c "CREATE DATABASE $DB"
log "pgbench -i -s $SCALE in $DB (both tools run on these tables)"
"$PGBENCH" -i -q -s "$SCALE" -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$DB" >"$OUT/init.log" 2>&1 ||
	{
		tail "$OUT/init.log" >&2
		die "pgbench -i failed"
	}

# The server's CPU per transaction while each tool drives it, when the
# server runs on this machine.
PG_PID=
if datadir=$(pg_client -d "$DB" -c "SHOW data_directory" 2>/dev/null); then
	PG_PID=$(server_pid "$datadir/postmaster.pid")
fi
[[ -n $PG_PID ]] || log "the server's CPU is not measured: its postmaster is not on this machine or not readable"

# TLS_REASON: why the tls cells cannot run, or nothing.
TLS_REASON=
if [[ " ${sel[*]}" == */tls/* ]]; then
	ssl=$(pg_client -d "$DB" -c "SHOW ssl" 2>/dev/null) || ssl=unknown
	if [[ $ssl != on ]]; then
		TLS_REASON="the server has ssl = $ssl (scripts/testenv.sh start turns it on)"
		log "tls cells skipped: $TLS_REASON"
	fi
fi

# measure TOOL SCRIPT MODE TRANSPORT CLIENTS SECONDS LOG: one run under GNU
# time; prints "tps cpu_s transactions errors mean_latency_ms wall_s
# maxrss_kb server_cpu_s" (server -1: not measured). With a builtin script
# both tools vacuum before the run, as pgbench does by default; the
# server-wait script touches no table it would vacuum (-n).
measure() {
	local tool=$1 script=$2 mode=$3 tr=$4 clients=$5 secs=$6 log=$7 tf=$7.time json=$7.json rc=0
	local tx tps errs lat s0 s1 t wall cpu rss work=() cmd=()
	if [[ $script == server_wait ]]; then
		work=(-n -f "$WAIT_SCRIPT" -s "$SCALE")
	else
		work=(-b "$script")
	fi
	work+=(-c "$clients" -j "$JOBS" -T "$secs" -M "$mode")
	case $tool in
	pgbench)
		cmd=(env)
		[[ $tr == tls ]] && cmd+=(PGSSLMODE=require)
		cmd+=("$PGBENCH" -h "$(pgbench_host "$tr")" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "${work[@]}" "$DB")
		;;
	dbmark)
		cmd=(env DBMARK_HOME="$OUT/dbmark-home" "$DBMARK" run tpcb --target "$(dbmark_url "$tr")" "${work[@]}" --no-store -q --json "$json")
		;;
	esac
	s0=$(server_ticks "$PG_PID")
	timed "$tf" "${cmd[@]}" >"$log" 2>&1 || rc=$?
	s1=$(server_ticks_after_run "$PG_PID")
	((rc == 0)) || {
		tail -20 "$log" >&2
		die "$tool $script -M $mode over $tr failed with exit code $rc (log: $log)"
	}
	case $tool in
	pgbench)
		# pgbench's "latency average" without -P is derived from the
		# clients and the rate, not measured.
		read -r tx tps errs lat < <(awk '/actually processed:/ { n = $NF } /^number of failed transactions:/ { f = $5 }
			/^latency average = / { l = $4 } /^tps = / { t = $3 } END { if (n != "") print n, t + 0, f + 0, l + 0 }' "$log") || true
		;;
	dbmark)
		[[ $(jq -r .status "$json") == ok ]] || die "dbmark: status $(jq -r .status "$json") (log: $log)"
		read -r tx tps errs lat < <(jq -r '[.summary.events, .summary.events_per_s, .summary.errors_total, (.summary.latency.mean_ms // 0)] | @tsv' "$json") || true
		;;
	esac
	[[ -n ${tx:-} && -n ${tps:-} ]] || die "$tool: no transaction count in $log"
	((tx > 0)) || die "$tool $script -M $mode over $tr: no transaction completed (log: $log)"
	t=$(time_of "$tf")
	read -r wall cpu rss <<<"$t"
	echo "$tps $cpu $tx ${errs:-0} ${lat:-0} $wall $rss $(server_seconds "$s0" "$s1") $(switches_of "$tf")"
}

SKIPPED=()
for cell in "${sel[@]}"; do
	IFS=/ read -r script mode tr clients <<<"$cell"
	if [[ $tr == tls && -n $TLS_REASON ]]; then
		SKIPPED+=("$cell: $TLS_REASON")
		continue
	fi
	if ((WARMUP > 0)); then
		log "$cell: warm-up, ${WARMUP}s per tool (discarded)"
		for tool in pgbench dbmark; do measure "$tool" "$script" "$mode" "$tr" "$clients" "$WARMUP" "$OUT/${cell//\//-}-warmup-$tool.log" >/dev/null; done
	fi
	for ((r = 1; r <= ROUNDS; r++)); do
		log "$cell: round $r/$ROUNDS"
		# A round brackets one tool's run between two of the other's
		# (odd rounds pgbench, even rounds dbmark), so a steady drift
		# (table bloat, a slower hour) cancels out of its ratio.
		if ((r % 2)); then order="pgbench dbmark pgbench"; else order="dbmark pgbench dbmark"; fi
		k=0
		for tool in $order; do
			k=$((k + 1))
			m=$(measure "$tool" "$script" "$mode" "$tr" "$clients" "$TIME_S" "$OUT/${cell//\//-}-$r-$k-$tool.log")
			read -r tps cpu tx errs lat wall rss srv sw <<<"$m"
			record "$tool" "$cell" "$r" "$k" "$tps" "$cpu" "$tx" "$errs" "$clients" "$lat" "$wall" "$rss" "$srv" "$sw"
		done
	done
done

{
	cat <<EOF
# dbmark vs pgbench

$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -r);
$("$DBMARK" version); $("$PGBENCH" --version); server $(pg_client -d "$DB" -c "SHOW server_version");
-j $JOBS, scale $SCALE, ${TIME_S}s per run, $ROUNDS rounds, warm-up ${WARMUP}s per tool and cell.
Raw figures: $(basename "$RESULTS_TSV").

EOF
	summary pgbench "$RESULTS_TSV"
	for s in "${SKIPPED[@]}"; do printf '\nSkipped %s\n' "$s"; done
	printf '\nDips in the dbmark runs (bench/dips.sh; steady runs: none on a quiet machine):\n\n'
	bash "$ROOT/bench/dips.sh" "$OUT"
} | tee "$RESULTS_MD"
log "raw figures: $RESULTS_TSV; logs: $OUT"
