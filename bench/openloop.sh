#!/usr/bin/env bash
# bench/openloop.sh: how late an open loop starts its events, and what the
# waiting costs, for dbmark and its peers: one client at a fixed rate on an
# idle server, where the server's time is a few microseconds and any
# schedule lag is the client's own. See bench/README.md.
#
#   bash bench/openloop.sh               # servers must be up (scripts/testenv.sh start)
#   BENCH_RATES="2000" BENCH_TOOLS="dbmark-sqlite pgbench" bash bench/openloop.sh
#   DBMARK_BEFORE=/tmp/dbmark-old bash bench/openloop.sh   # adds the before-* tools: an A/B
#
# Tools (each at every rate, one client, point selects):
#   dbmark-sqlite  dbmark run oltp_point_select on the embedded SQLite
#   dbmark-pg      dbmark run tpcb -S -R on the test PostgreSQL over TCP
#   pgbench        pgbench -S -R on the same tables: its "rate limit schedule
#                  lag", and the lag of each transaction from its -l log
#   dbmark-my      dbmark run oltp_point_select --rate on the test MariaDB over TCP
#   sysbench       sysbench oltp_point_select --rate on the same tables; it
#                  reports no lag (its latency starts when a thread takes the
#                  event from its queue), only its latency
#   before-sqlite, before-pg, before-my: dbmark's as DBMARK_BEFORE runs them
#
# Per run: events/s, schedule lag (mean, p50, p99), latency p50 (from the
# intended start where the tool measures it so), service p50 (dbmark), and
# the client's CPU per event over the middle of the run (user + system
# from /proc, from 2 s after the start to 1 s before the end, over the
# events the rate schedules in that time).
#
# Settings (environment):
#   BENCH_RATES="200 2000 10000"   events per second
#   BENCH_TOOLS="dbmark-sqlite dbmark-pg pgbench dbmark-my sysbench"
#                                  (with DBMARK_BEFORE, before-* are added)
#   BENCH_TIME=10        seconds per run (at least 5)
#   BENCH_ROUNDS=3       rounds; each runs every tool once, in an order
#                        that turns round by round
#   BENCH_DB=dbmark_openloop_bench  database created on each server (dropped at the end)
#   BENCH_RESULTS=DIR    where the TSV of every run and the summary go (default: bench/results)
#   DBMARK=PATH          the dbmark binary (default: bin/dbmark, built by make build)
#   DBMARK_BEFORE=PATH   another dbmark binary to run beside it
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

RATES=${BENCH_RATES:-200 2000 10000}
TOOLS=${BENCH_TOOLS:-dbmark-sqlite dbmark-pg pgbench dbmark-my sysbench}
TIME_S=${BENCH_TIME:-10}
ROUNDS=${BENCH_ROUNDS:-3}
DB=${BENCH_DB:-dbmark_openloop_bench}

case ${1:-} in -h | --help)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac
(($# == 0)) || die "no arguments expected (settings are environment variables; --help lists them)"
need_whole BENCH_TIME="$TIME_S" BENCH_ROUNDS="$ROUNDS"
((TIME_S >= 5)) || die "BENCH_TIME=$TIME_S: at least 5 (CPU is taken over the middle of the run)"
for r in $RATES; do need_whole "BENCH_RATES=$r"; done
[[ $DB =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB=$DB: use lower-case letters, digits and _"
if [[ -n ${DBMARK_BEFORE:-} ]]; then
	[[ -x $DBMARK_BEFORE ]] || die "DBMARK_BEFORE=$DBMARK_BEFORE: not an executable"
	DBMARK_BEFORE=$(realpath "$DBMARK_BEFORE")
	[[ -n ${BENCH_TOOLS:-} ]] || TOOLS+=" before-sqlite before-pg before-my"
fi
for t in $TOOLS; do
	case $t in dbmark-sqlite | dbmark-pg | pgbench | dbmark-my | sysbench) ;;
	before-*) [[ -n ${DBMARK_BEFORE:-} ]] || die "BENCH_TOOLS: $t needs DBMARK_BEFORE" ;;
	*) die "BENCH_TOOLS: $t: unknown (dbmark-sqlite dbmark-pg pgbench dbmark-my sysbench before-sqlite before-pg before-my)" ;;
	esac
done
command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
dbmark_binary
if [[ -z ${DBMARK_TEST_MYSQL:-} || -z ${DBMARK_TEST_POSTGRES:-} ]]; then
	eval "$(bash scripts/testenv.sh env)"
fi
uses() { [[ " $TOOLS " == *" $1"* ]]; }

OUT=$(mktemp -d /tmp/dbmark-openloop.XXXXXX)
export DBMARK_HOME=$OUT/home # the embedded database; no results store
dir=${BENCH_RESULTS:-$ROOT/bench/results}
mkdir -p "$dir"
rev=$(git rev-parse --short HEAD 2>/dev/null) || rev=norev
[[ -z $(git status --porcelain --untracked-files=no 2>/dev/null) ]] || rev+=-dirty
TSV=$(realpath "$dir")/openloop-$(date -u +%Y%m%d-%H%M%S)-$rev.tsv
printf 'tool\trate\tround\tevents_per_s\tlag_mean_ms\tlag_p50_ms\tlag_p99_ms\tlatency_p50_ms\tservice_p50_ms\tcpu_us_per_event\n' >"$TSV"

with_db() { sed -E "s#^([a-z]+://[^/]*)/[^?]*#\1/$2#" <<<"$1"; }
my_client() {
	mariadb --no-defaults --protocol=TCP -h "$DBMARK_TEST_MY_HOST" -P "$DBMARK_TEST_MY_PORT" \
		-u"$DBMARK_TEST_MY_USER" -p"$DBMARK_TEST_MY_PASSWORD" -NB "$@"
}
export PGPASSWORD=$DBMARK_TEST_PG_PASSWORD
pg_client() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -tA -v ON_ERROR_STOP=1 -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$@"; }
PG_URL=$(with_db "$DBMARK_TEST_POSTGRES" "$DB")
MY_URL=$(with_db "$DBMARK_TEST_MYSQL" "$DB")
SB_MY="--db-driver=mysql --mysql-host=$DBMARK_TEST_MY_HOST --mysql-port=$DBMARK_TEST_MY_PORT --mysql-user=$DBMARK_TEST_MY_USER --mysql-password=$DBMARK_TEST_MY_PASSWORD --mysql-db=$DB --tables=1 --table-size=10000"

cleanup() {
	if uses dbmark-pg || uses pgbench || uses before-pg; then pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true; fi
	if uses dbmark-my || uses sysbench || uses before-my; then my_client -e "DROP DATABASE IF EXISTS $DB" || true; fi
	rm -rf "$OUT"
}
trap cleanup EXIT
if uses dbmark-pg || uses pgbench || uses before-pg; then
	pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
	pgbench -i -q -s 1 -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$DB" >"$OUT/init.log" 2>&1 || die "pgbench -i failed"
fi
if uses dbmark-my || uses sysbench || uses before-my; then
	my_client -e "DROP DATABASE IF EXISTS $DB; CREATE DATABASE $DB"
	# shellcheck disable=SC2086 # options split into words on purpose
	sysbench oltp_point_select $SB_MY prepare >"$OUT/prepare.log" 2>&1 || die "sysbench prepare failed"
fi
if uses dbmark-sqlite || uses before-sqlite; then
	"$DBMARK" run oltp_point_select --table-size 10000 --no-store -q --time 2 >/dev/null 2>&1 # makes the table
fi

# cpu_ticks PID: the process's user + system clock ticks so far.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# measured RATE LOG CMD...: runs CMD in the background, its output in LOG,
# and prints the client's CPU in µs per event the rate schedules over the
# middle of the run.
measured() {
	local rate=$1 log=$2 pid t0 t1
	shift 2
	"$@" >"$log" 2>&1 &
	pid=$!
	sleep 2
	t0=$(cpu_ticks $pid)
	sleep $((TIME_S - 3))
	t1=$(cpu_ticks $pid)
	wait $pid || die "$1 failed: $(tail -3 "$log")"
	awk -v d=$((t1 - t0)) -v hz="$CLK_TCK" -v n=$((rate * (TIME_S - 3))) 'BEGIN { printf "%.1f", d / hz * 1e6 / n }'
}

# dbmark_figures JSON: events/s, lag mean, p50, p99, latency p50, service p50.
dbmark_figures() {
	jq -r '.summary | def p($h; $q): ($h.percentiles // [] | map(select(.p == $q)) | .[0].ms // ""); [.events_per_s, .schedule_lag.mean_ms, p(.schedule_lag; 50), p(.schedule_lag; 99), p(.latency; 50), p(.service; 50)] | @tsv' "$1"
}

# one TOOL RATE ROUND: one run, one line of the TSV.
one() {
	local tool=$1 rate=$2 round=$3 bin=$DBMARK f=$OUT/$1-$2-$3 cpu figures
	[[ $tool == before-* ]] && bin=$DBMARK_BEFORE
	case $tool in
	*-sqlite)
		cpu=$(measured "$rate" "$f.log" "$bin" run oltp_point_select --table-size 10000 --no-store -q --threads 1 --rate "$rate" --time "$TIME_S" --json "$f.json")
		figures=$(dbmark_figures "$f.json")
		;;
	*-pg)
		cpu=$(measured "$rate" "$f.log" "$bin" run tpcb -n -S -c 1 -j 1 -R "$rate" -T "$TIME_S" --target "$PG_URL" --no-store -q --json "$f.json")
		figures=$(dbmark_figures "$f.json")
		;;
	*-my)
		cpu=$(measured "$rate" "$f.log" "$bin" run oltp_point_select --tables 1 --table-size 10000 --target "$MY_URL" --no-store -q --threads 1 --rate "$rate" --time "$TIME_S" --json "$f.json")
		figures=$(dbmark_figures "$f.json")
		;;
	pgbench)
		cpu=$(measured "$rate" "$f.log" pgbench -n -S -c 1 -j 1 -R "$rate" -T "$TIME_S" -l --log-prefix="$f" -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$DB")
		# The log: client, transaction, latency µs (from the scheduled
		# start), script, epoch s, µs, schedule lag µs.
		figures=$(awk -v tps="$(awk '/^tps = .*without/ { print $3 }' "$f.log")" -v mean="$(awk '/rate limit schedule lag: avg/ { print $6 }' "$f.log")" '
			{ lag[NR] = $7; lat[NR] = $3 }
			END {
				n = asort(lag); asort(lat)
				printf "%s\t%s\t%.6f\t%.6f\t%.6f\t\n", tps, mean, lag[int(n * 0.5) + 1] / 1e3, lag[int(n * 0.99) + 1] / 1e3, lat[int(n * 0.5) + 1] / 1e3
			}' "$f".[0-9]*)
		rm -f "$f".[0-9]*
		;;
	sysbench)
		# shellcheck disable=SC2086 # options split into words on purpose
		cpu=$(measured "$rate" "$f.log" sysbench oltp_point_select $SB_MY --threads=1 --rate="$rate" --time="$TIME_S" --percentile=50 run)
		figures=$(awk '/transactions:/ { gsub(/\(/, "", $3); tps = $3 } /50th percentile:/ { p50 = $3 } END { printf "%s\t\t\t\t%s\t\n", tps, p50 }' "$f.log")
		;;
	esac
	printf '%s\t%s\t%s\t%s\t%s\n' "$tool" "$rate" "$round" "$figures" "$cpu" | tee -a "$TSV" >&2
}

read -ra tools <<<"$TOOLS"
for ((round = 1; round <= ROUNDS; round++)); do
	for rate in $RATES; do
		# Each round starts one tool further along the list, so no tool
		# always runs right after the same other one.
		for ((i = 0; i < ${#tools[@]}; i++)); do
			one "${tools[(i + round - 1) % ${#tools[@]}]}" "$rate" "$round"
		done
	done
done

# The medians over rounds, one row per tool and rate.
MD=${TSV%.tsv}.md
awk -F'\t' "$(cat "$ROOT/bench/medians.awk")"'
	NR == 1 { next }
	{ k = $1 "\t" $2; if (!(k in seen)) { order[++n] = k; seen[k] = 1 }
	  for (c = 4; c <= 10; c++) if ($c != "") add(col, k SUBSEP c, $c) }
	END {
		print "| tool | rate | events/s | lag mean ms | lag p50 ms | lag p99 ms | latency p50 ms | service p50 ms | client CPU µs/event |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= n; i++) {
			split(order[i], kr, "\t"); line = "| " kr[1] " | " kr[2]
			for (c = 4; c <= 10; c++) line = line " | " ((order[i] SUBSEP c) in col ? sprintf(c == 4 ? "%.0f" : (c == 10 ? "%.1f" : "%.3f"), median(col[order[i] SUBSEP c])) : "-")
			print line " |"
		}
	}' "$TSV" | tee "$MD"
log "raw figures: $TSV; summary: $MD"
