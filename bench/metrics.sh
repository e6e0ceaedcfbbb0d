#!/usr/bin/env bash
# bench/metrics.sh: what live metrics cost a run. The same run with
# --metrics-addr, scraped every second as Prometheus scrapes it (protobuf,
# which carries the native histograms too), and without, alternating (on,
# off in odd rounds, off, on in even ones), and the tps ratio per round and
# its median: the goal is 0.99 or more. dbmark's own CPU per event (user +
# system over the measured window, from the result) is compared too: on a
# machine busy with other work it holds where the rate does not. See
# bench/README.md.
#
#   bash bench/metrics.sh                     # oltp_read_write on the embedded SQLite
#   BENCH_TARGET="$DBMARK_TEST_POSTGRES" bash bench/metrics.sh   # on a server (tables prepared here)
#   BENCH_TIME=30 BENCH_ROUNDS=7 bash bench/metrics.sh
#
# Settings (environment):
#   BENCH_WORKLOAD=oltp_read_write   the workload (many operations: many histograms a scrape converts)
#   BENCH_TARGET=URL     a server; default the embedded SQLite database
#   BENCH_THREADS=2      clients
#   BENCH_TIME=20        seconds per run
#   BENCH_ROUNDS=5       rounds, each one run with metrics and one without
#   BENCH_SCRAPE=1       seconds between scrapes
#   BENCH_RESULTS=DIR    where the TSV and the summary go (default: bench/results)
#   DBMARK=PATH          the dbmark binary (default: bin/dbmark, built by make build)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

WORKLOAD=${BENCH_WORKLOAD:-oltp_read_write}
TARGET=${BENCH_TARGET:-}
THREADS=${BENCH_THREADS:-2}
TIME_S=${BENCH_TIME:-20}
ROUNDS=${BENCH_ROUNDS:-5}
SCRAPE=${BENCH_SCRAPE:-1}

case ${1:-} in -h | --help)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac
(($# == 0)) || die "no arguments expected (settings are environment variables; --help lists them)"
need_whole BENCH_THREADS="$THREADS" BENCH_TIME="$TIME_S" BENCH_ROUNDS="$ROUNDS" BENCH_SCRAPE="$SCRAPE"
for c in jq curl; do command -v $c >/dev/null || die "$c is missing (apt-get install $c)"; done
dbmark_binary

# A data directory of its own: the embedded database, no results store.
export DBMARK_HOME
DBMARK_HOME=$(mktemp -d /tmp/dbmark-metrics.XXXXXX)
SCRAPER=
cleanup() {
	[[ -z $SCRAPER ]] || kill "$SCRAPER" 2>/dev/null || true
	if [[ -n $TARGET ]]; then "$DBMARK" cleanup "$WORKLOAD" "${tables[@]}" >/dev/null 2>&1 || true; fi
	rm -rf "$DBMARK_HOME"
}
trap cleanup EXIT
tables=(--tables 2 --table-size 10000)
common=("$WORKLOAD" --threads "$THREADS" "${tables[@]}" --no-store -q)
if [[ -n $TARGET ]]; then
	tables+=(--target "$TARGET")
	common+=(--target "$TARGET")
	"$DBMARK" cleanup "$WORKLOAD" "${tables[@]}" >/dev/null 2>&1 || true
	"$DBMARK" prepare "$WORKLOAD" "${tables[@]}" >/dev/null
fi
"$DBMARK" run "${common[@]}" --time 5 >/dev/null # prepares the embedded tables, warms the cache

results_open metrics
RESULTS_TSV_RAW=$RESULTS_TSV
echo "mode	round	tps	events	cpu_us_per_event	scrapes	failed_scrapes	load1" >"$RESULTS_TSV_RAW"
ACCEPT='application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited'

# scrape URL: every BENCH_SCRAPE seconds until killed; "ok" or "failed" a line.
scrape() {
	while sleep "$SCRAPE"; do
		if curl -sf -o /dev/null -H "Accept: $ACCEPT" "$1"; then echo ok; else echo failed; fi
	done
}

# one MODE ROUND: one run, one TSV line.
one() {
	local json=$DBMARK_HOME/$1-$2.json errf=$DBMARK_HOME/$1-$2.err scrapes=$DBMARK_HOME/$1-$2.scrapes url="" pid
	: >"$scrapes"
	local extra=()
	[[ $1 == on ]] && extra=(--metrics-addr 127.0.0.1:0)
	"$DBMARK" run "${common[@]}" --time "$TIME_S" "${extra[@]}" --json "$json" >/dev/null 2>"$errf" &
	pid=$!
	if [[ $1 == on ]]; then
		for _ in $(seq 200); do
			url=$(sed -n 's/^dbmark: metrics on \(http:[^ ]*\).*/\1/p' "$errf")
			[[ -z $url ]] || break
			sleep 0.05
		done
		[[ -n $url ]] || die "no metrics address from the run: $(cat "$errf")"
		scrape "$url" >"$scrapes" &
		SCRAPER=$!
	fi
	wait "$pid" || die "the run failed: $(cat "$errf")"
	if [[ -n $SCRAPER ]]; then
		kill "$SCRAPER" 2>/dev/null || true
		wait "$SCRAPER" 2>/dev/null || true
		SCRAPER=
	fi
	local ok failed
	ok=$(grep -c '^ok' "$scrapes" || true)
	failed=$(grep -c '^failed' "$scrapes" || true)
	jq -r --arg m "$1" --arg r "$2" --arg ok "$ok" --arg f "$failed" --arg l "$(cut -d' ' -f1 /proc/loadavg)" \
		'[$m, $r, .summary.events_per_s, .summary.events, (.summary.client.per_event_us // -1), $ok, $f, $l] | @tsv' "$json" | tee -a "$RESULTS_TSV_RAW" >&2
}

log "$WORKLOAD, $THREADS clients, ${TIME_S}s runs, $ROUNDS rounds, a scrape every ${SCRAPE}s; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order=(on off); else order=(off on); fi
	for m in "${order[@]}"; do one "$m" "$r"; done
done

# The ratios of each round's two runs (tps, CPU per event), and their medians.
awk -F'\t' -v name="$(basename "$RESULTS_TSV_RAW" .tsv)" '
	NR == 1 { next }
	{ tps[$2, $1] = $3; cpu[$2, $1] = $5; rounds[$2] = 1; if ($1 == "on") { sc += $6; bad += $7 } load[++nl] = $8 }
	END {
		printf "%s: with --metrics-addr scraped every second / without\n", name
		k = 0
		for (r = 1; (r in rounds); r++) {
			ratio[++k] = tps[r, "on"] / tps[r, "off"]; cr[k] = cpu[r, "on"] / cpu[r, "off"]
			printf "round %d: tps %.0f / %.0f = %.4f; CPU per event %.1f / %.1f us = %.4f\n", r, tps[r, "on"], tps[r, "off"], ratio[k], cpu[r, "on"], cpu[r, "off"], cr[k]
		}
		asort(ratio); asort(cr); asort(load)
		printf "median tps ratio %.4f (goal >= 0.99), median CPU-per-event ratio %.4f, over %d rounds; %d scrapes, %d failed; load average %.1f-%.1f\n",
			ratio[int((k + 1) / 2)], cr[int((k + 1) / 2)], k, sc, bad, load[1], load[nl]
	}' "$RESULTS_TSV_RAW" | tee "$RESULTS_MD"
