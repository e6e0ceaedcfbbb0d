#!/usr/bin/env bash
# bench/tpcb.sh: dbmark against pgbench on the test PostgreSQL, the same
# tables and options, run alternately; prints every round and a Markdown
# table of median ratios (dbmark / pgbench). See bench/README.md.
#
#   bash bench/tpcb.sh                 # servers must be up (make testenv-start)
#   BENCH_TIME=10 bash bench/tpcb.sh
#
# Settings (environment):
#   BENCH_TIME=30        seconds per measured run
#   BENCH_ROUNDS=3       rounds per cell (each: one tool, the other, the first again)
#   BENCH_WARMUP=5       seconds of one discarded run per tool and cell (0: none)
#   BENCH_CLIENTS=8      -c
#   BENCH_JOBS=2         -j
#   BENCH_SCALE=10       -s
#   BENCH_SCRIPTS="select-only tpcb-like"
#   BENCH_MODES="prepared simple"
#   BENCH_TRANSPORTS="socket tcp"
#   BENCH_DB=dbmark_pgbench_bench  database created (and dropped at the end)
#   BENCH_OUT=DIR        where the raw logs go (default: a new /tmp/dbmark-tpcb-bench.XXXXXX)
#   PGBENCH=pgbench      the pgbench binary
#   BENCH_CPUS=          a taskset CPU list (e.g. 0): run both tools, and the
#                        server's new backends, on these CPUs only; the
#                        server must be on this machine and the script
#                        allowed to set its postmaster's affinity (restored
#                        at the end). Empty: left to the kernel.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

TIME_S=${BENCH_TIME:-30}
ROUNDS=${BENCH_ROUNDS:-3}
WARMUP=${BENCH_WARMUP:-5}
CLIENTS=${BENCH_CLIENTS:-8}
JOBS=${BENCH_JOBS:-2}
SCALE=${BENCH_SCALE:-10}
SCRIPTS=${BENCH_SCRIPTS:-select-only tpcb-like}
MODES=${BENCH_MODES:-prepared simple}
TRANSPORTS=${BENCH_TRANSPORTS:-socket tcp}
DB=${BENCH_DB:-dbmark_pgbench_bench}
PGBENCH=${PGBENCH:-pgbench}
GNU_TIME=/usr/bin/time
DBMARK=$ROOT/bin/dbmark

log() { echo "bench: $*" >&2; }
die() { echo "bench: ERROR: $*" >&2; exit 1; }

case ${1:-} in -h | --help)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac

for v in TIME_S ROUNDS WARMUP CLIENTS JOBS SCALE; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: not a whole number"
done
((TIME_S > 0 && ROUNDS > 0 && CLIENTS > 0 && JOBS > 0 && SCALE > 0)) || die "BENCH_TIME, BENCH_ROUNDS, BENCH_CLIENTS, BENCH_JOBS and BENCH_SCALE must be positive"
[[ $DB =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB=$DB: use lower-case letters, digits and _"
"$GNU_TIME" --version 2>&1 | grep -q GNU || die "GNU time is missing (apt-get install time)"
command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
command -v "$PGBENCH" >/dev/null || die "pgbench is missing (apt-get install postgresql-client)"
command -v psql >/dev/null || die "psql is missing"

log "building dbmark (make build)"
make --no-print-directory build >&2
if [[ -z ${DBMARK_TEST_POSTGRES:-} ]]; then
	eval "$(bash scripts/testenv.sh env)"
fi

OUT=${BENCH_OUT:-$(mktemp -d /tmp/dbmark-tpcb-bench.XXXXXX)}
mkdir -p "$OUT"
RAW=$OUT/raw.tsv
: >"$RAW"
export PGPASSWORD=$DBMARK_TEST_PG_PASSWORD

pg_client() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -tA -v ON_ERROR_STOP=1 -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$@"; }
with_db() { sed -E "s#^([a-z]+://[^/]*)/[^?]*#\1/$2#" <<<"$1"; }

# pgbench_host TRANSPORT: libpq takes the socket's directory as the host.
pgbench_host() { [[ $1 == socket ]] && echo "$DBMARK_TEST_PG_SOCKETDIR" || echo "$DBMARK_TEST_PG_HOST"; }
dbmark_url() { [[ $1 == socket ]] && with_db "$DBMARK_TEST_POSTGRES_SOCKET" "$DB" || with_db "$DBMARK_TEST_POSTGRES" "$DB"; }

PG_MASK=
cleanup() {
	[[ -n $PG_MASK ]] && taskset -p "$PG_MASK" "$PG_PID" >/dev/null
	pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
}
trap cleanup EXIT
cleanup
pg_client -d "$DBMARK_TEST_PG_DB" -c "CREATE DATABASE $DB"
log "pgbench -i -s $SCALE in $DB (both tools run on these tables)"
"$PGBENCH" -i -q -s "$SCALE" -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$DB" >"$OUT/init.log" 2>&1 ||
	{ tail "$OUT/init.log" >&2; die "pgbench -i failed"; }

# The server's CPU per transaction while each tool drives it
# (bench/servercpu.sh), when the server runs on this machine.
# shellcheck source=bench/servercpu.sh
source "$ROOT/bench/servercpu.sh"
PG_PID=
if datadir=$(pg_client -d "$DB" -c "SHOW data_directory" 2>/dev/null); then
	PG_PID=$(server_pid "$datadir/postmaster.pid")
fi
[[ -n $PG_PID ]] || log "the server's CPU is not measured: its postmaster is not on this machine or not readable"

# BENCH_CPUS: the tools run under taskset, and the postmaster's affinity
# (which each new backend inherits) is set to the same CPUs. With one CPU
# the kernel has no placement to choose: no wake-up crosses CPUs, and runs
# differ by the tools' own work (on two CPUs a run settles into a state
# where client and server wake each other on one CPU or across, and a
# cell's rounds spread by 10% and more; bench/README.md).
PIN=()
if [[ -n ${BENCH_CPUS:-} ]]; then
	command -v taskset >/dev/null || die "BENCH_CPUS needs taskset (apt-get install util-linux)"
	[[ -n $PG_PID ]] || die "BENCH_CPUS needs the server on this machine: its postmaster's affinity is set too"
	mask=$(taskset -p "$PG_PID" | awk '{ print $NF }') || die "cannot read the postmaster's CPU affinity"
	taskset -p -c "$BENCH_CPUS" "$PG_PID" >/dev/null || die "BENCH_CPUS=$BENCH_CPUS: cannot set the postmaster's CPU affinity (run as root or as the server's user)"
	PG_MASK=$mask
	PIN=(taskset -c "$BENCH_CPUS")
	log "tools and new backends on CPUs $BENCH_CPUS"
fi

# measure TOOL SCRIPT MODE TRANSPORT SECONDS LOG: one run under GNU time;
# prints "transactions tps cpu_s wall_s maxrss_kb server_cpu_s ipis"
# (server -1: not measured; ipis: rescheduling interrupts during the run,
# bench/servercpu.sh). Both tools vacuum before the run, as pgbench does by
# default.
measure() {
	local tool=$1 script=$2 mode=$3 tr=$4 secs=$5 log=$6 tf=$6.time json=$6.json rc=0 tx tps s0 s1 i0 i1
	s0=$(server_ticks "$PG_PID")
	i0=$(resched_ipis)
	case $tool in
	pgbench)
		"$GNU_TIME" -f "%e %U %S %M" -o "$tf" ${PIN[@]+"${PIN[@]}"} "$PGBENCH" -h "$(pgbench_host "$tr")" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" \
			-b "$script" -c "$CLIENTS" -j "$JOBS" -T "$secs" -M "$mode" "$DB" >"$log" 2>&1 || rc=$?
		;;
	dbmark)
		"$GNU_TIME" -f "%e %U %S %M" -o "$tf" ${PIN[@]+"${PIN[@]}"} env DBMARK_HOME="$OUT/dbmark-home" "$DBMARK" run tpcb --target "$(dbmark_url "$tr")" \
			-b "$script" -c "$CLIENTS" -j "$JOBS" -T "$secs" -M "$mode" --no-store -q --json "$json" >"$log" 2>&1 || rc=$?
		;;
	esac
	((rc == 0)) || { tail -20 "$log" >&2; die "$tool $script -M $mode over $tr failed with exit code $rc (log: $log)"; }
	case $tool in
	pgbench) read -r tx tps < <(awk '/actually processed:/ { n = $NF } /^tps = / { print n, $3; exit }' "$log") || true ;;
	dbmark)
		[[ $(jq -r .status "$json") == ok ]] || die "dbmark: status $(jq -r .status "$json") (log: $log)"
		read -r tx tps < <(jq -r '[.summary.events, .summary.events_per_s] | @tsv' "$json") || true
		;;
	esac
	[[ -n ${tx:-} && -n ${tps:-} ]] || die "$tool: no transaction count in $log"
	i1=$(resched_ipis)
	read -r wall user sys rss < <(tail -n 1 "$tf") || true
	s1=$(server_ticks_after_run "$PG_PID")
	echo "$tx $tps $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }') $wall $rss $(server_seconds "$s0" "$s1") $(count_between "$i0" "$i1")"
}

cat <<EOF
# dbmark vs pgbench

$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -r)
$("$DBMARK" version); $("$PGBENCH" --version)
-c $CLIENTS -j $JOBS, scale $SCALE, ${TIME_S}s per run, $ROUNDS rounds, warm-up ${WARMUP}s per tool and cell${BENCH_CPUS:+, tools and server on CPUs $BENCH_CPUS}
raw logs: $OUT

## Raw runs

| cell | round | tool | tps | transactions | CPU s (user+sys) | wall s | CPU µs/tx | max RSS MB | server CPU µs/tx | resched IPIs per 1000 tx |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
EOF

for tr in $TRANSPORTS; do
	for script in $SCRIPTS; do
		for mode in $MODES; do
			cell="$script -M $mode $tr"
			if ((WARMUP > 0)); then
				for tool in pgbench dbmark; do measure $tool "$script" "$mode" "$tr" "$WARMUP" "$OUT/warmup-$tool.log" >/dev/null; done
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
					read -r tx tps cpu wall rss srv ipis < <(measure $tool "$script" "$mode" "$tr" "$TIME_S" "$OUT/${script}-${mode}-${tr}-$r-$k-$tool.log")
					printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cell" "$r" "$tool" "$tx" "$tps" "$cpu" "$wall" "$rss" "$srv" "$ipis" >>"$RAW"
					awk -v c="$cell" -v r="$r" -v t="$tool" -v tx="$tx" -v tps="$tps" -v cpu="$cpu" -v w="$wall" -v m="$rss" -v srv="$srv" -v ipis="$ipis" \
						'BEGIN { printf "| %s | %s | %s | %.1f | %d | %.2f | %.2f | %.1f | %.1f | %s | %s |\n", c, r, t, tps, tx, cpu, w, cpu * 1e6 / tx, m / 1024, srv < 0 ? "n/a" : sprintf("%.1f", srv * 1e6 / tx), ipis < 0 ? "n/a" : sprintf("%.1f", ipis * 1e3 / tx) }'
				done
			done
		done
	done
done

cat <<EOF

## Medians (dbmark / pgbench)

The ratios are the median over rounds of each round's ratio; in a round,
the tool that ran twice counts with the mean of its two rates and its CPU
over both runs' transactions. A tps ratio above 1 means dbmark ran more
transactions per second; a CPU/tx ratio below 1 means it spent less client
CPU per transaction. The server columns are the server's CPU per
transaction (all its processes) while each tool drove it; the IPI columns
the machine's rescheduling interrupts per 1000 transactions (wake-ups that
crossed CPUs), the median of each tool's runs. The last column lists each
round's tps ratio, in order: how far they spread tells whether the median
differs from 1 by more than the machine varies from one round to the next.

| cell | pgbench tps | dbmark tps | tps ratio | pgbench CPU µs/tx | dbmark CPU µs/tx | CPU/tx ratio | pgbench RSS MB | dbmark RSS MB | server µs/tx with pgbench | with dbmark | server ratio | IPIs/ktx with pgbench | with dbmark | tps ratio by round |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
EOF

awk -F'\t' "$(<"$ROOT/bench/medians.awk")"'
{
	if (!($1 in seen)) { seen[$1] = 1; cells[++nc] = $1 }
	k = $1 SUBSEP $2 SUBSEP $3
	tps[k] += $5; runs[k]++; cpu[k] += $6; txs[k] += $4
	add(T, $1 SUBSEP $3, $5); add(C, $1 SUBSEP $3, $6 * 1e6 / $4); add(M, $1 SUBSEP $3, $8 / 1024)
	if ($9 != "" && $9 >= 0) { srv[k] += $9; add(S, $1 SUBSEP $3, $9 * 1e6 / $4) } else nosrv[$1] = 1
	if ($10 != "" && $10 >= 0) add(I, $1 SUBSEP $3, $10 * 1e3 / $4); else noipi[$1] = 1
	rounds[$1] = rounds[$1] " " $2
}
END {
	for (i = 1; i <= nc; i++) {
		c = cells[i]
		n = split(rounds[c], rs, " ")
		for (j = 1; j <= n; j++) {
			r = rs[j]
			d = c SUBSEP r SUBSEP "dbmark"; p = c SUBSEP r SUBSEP "pgbench"
			if (done[c, r]++ || !(p in tps) || !(d in tps)) continue
			add(R, c SUBSEP "tps", (tps[d] / runs[d]) / (tps[p] / runs[p]))
			add(R, c SUBSEP "cpu", (cpu[d] / txs[d]) / (cpu[p] / txs[p]))
			if (!(c in nosrv) && srv[p] > 0) add(R, c SUBSEP "srv", (srv[d] / txs[d]) / (srv[p] / txs[p]))
		}
		server = "n/a | n/a | n/a"
		if (!(c in nosrv) && (c SUBSEP "srv") in R)
			server = both(S, c, "pgbench") sprintf(" | %.3f", median(R[c SUBSEP "srv"]))
		ipis = "n/a | n/a"
		if (!(c in noipi))
			ipis = both(I, c, "pgbench")
		n = split(R[c SUBSEP "tps"], rr, " ")
		byround = ""
		for (j = 1; j <= n; j++) byround = byround (j > 1 ? ", " : "") sprintf("%.3f", rr[j])
		printf "| %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %.1f | %.1f | %s | %s | %s |\n", c,
			median(T[c SUBSEP "pgbench"]), median(T[c SUBSEP "dbmark"]), median(R[c SUBSEP "tps"]),
			median(C[c SUBSEP "pgbench"]), median(C[c SUBSEP "dbmark"]), median(R[c SUBSEP "cpu"]),
			median(M[c SUBSEP "pgbench"]), median(M[c SUBSEP "dbmark"]), server, ipis, byround
	}
}' "$RAW"
