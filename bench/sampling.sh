#!/usr/bin/env bash
# What counter sampling costs: oltp_point_select on the embedded SQLite
# database with --sample-interval 1s and with sampling off, alternating,
# and the start-up probe's time.
#
#   bash bench/sampling.sh                 3 rounds of 20 s per mode
#   BENCH_TIME=30 BENCH_ROUNDS=5 bash bench/sampling.sh
set -euo pipefail
cd "$(dirname "$0")/.."

TIME=${BENCH_TIME:-20}
ROUNDS=${BENCH_ROUNDS:-3}
THREADS=${BENCH_THREADS:-2}
DBMARK=${DBMARK:-bin/dbmark}

log() { echo "sampling: $*" >&2; }

command -v jq >/dev/null || { log "jq is missing (apt-get install jq)"; exit 1; }
make --no-print-directory build >&2

# A data directory of its own: the embedded database and no results store.
export DBMARK_HOME
DBMARK_HOME=$(mktemp -d /tmp/dbmark-sampling.XXXXXX)
trap 'rm -rf "$DBMARK_HOME"' EXIT
common=(oltp_point_select --threads "$THREADS" --table-size 100000 --no-store -q)
"$DBMARK" run "${common[@]}" --time 5 >/dev/null # prepares the table, warms the cache

# one MODE ROUND: one run, printing "mode round tps probe_ms".
one() {
	local interval=0
	[[ $1 == on ]] && interval=1s
	local out=$DBMARK_HOME/$1-$2.json
	"$DBMARK" run "${common[@]}" --time "$TIME" --sample-interval "$interval" --json "$out" >/dev/null 2>&1
	jq -r --arg m "$1" --arg r "$2" '[$m, $r, .summary.events_per_s, .environment.probe_ms, (.counters.series // [] | length)] | @tsv' "$out"
}

printf 'mode\tround\ttps\tprobe_ms\tseries\n'
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order=(on off); else order=(off on); fi
	for m in "${order[@]}"; do one "$m" "$r"; done
done | tee "$DBMARK_HOME/raw.tsv"

# The ratio of each round's two runs, and their median.
awk -F'\t' '
	{ tps[$2, $1] = $3; if ($1 == "on") { probe[++n] = $4 } rounds[$2] = 1 }
	END {
		k = 0
		for (r in rounds) { ratio[++k] = tps[r, "on"] / tps[r, "off"]; printf "round %s: sampled/off = %.4f\n", r, ratio[k] }
		asort(ratio); asort(probe)
		printf "median throughput ratio (sampling at 1 s / off): %.4f over %d rounds\n", ratio[int((k + 1) / 2)], k
		printf "start-up probe: median %.0f ms, max %.0f ms\n", probe[int((n + 1) / 2)], probe[n]
	}' "$DBMARK_HOME/raw.tsv"
