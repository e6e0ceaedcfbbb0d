#!/usr/bin/env bash
# bench/dips.sh: the dips dbmark found in a bench session's runs. Every
# run of run.sh and tpcb.sh is a steady one (the same work for its whole
# time, nothing made to stall it), so each dip is either the machine's
# (other work took the CPUs or the disk) or a false alarm; on a quiet
# machine the answer is "no dips in N runs". See bench/README.md.
#
#   bash bench/dips.sh DIR|FILE.json ...   # a session's BENCH_OUT, or result documents
#
# A run is judged when it has the 10 full measured intervals the detector
# needs (dbmark records one a second, so --time 10 or more); shorter runs
# are counted apart. Exit 0 whatever it finds: a measurement to read.
set -euo pipefail

(($# > 0)) || {
	echo "usage: bash bench/dips.sh DIR|FILE.json ... (a bench session's BENCH_OUT)" >&2
	exit 1
}
command -v jq >/dev/null || {
	echo "dips.sh: jq is needed (apt-get install jq)" >&2
	exit 1
}

# One line per run: judged (1/0), its dips' count, then one line per dip.
# The intervals the detector reads: not the warm-up, not a last interval
# a limit cut to under half of the longest.
# shellcheck disable=SC2016
filter='def num: . * 1000 | round / 1000;
	def val($u): "\(num)" + (if $u == "%" then "%" elif $u == "" then "" else " " + $u end);
	select(type == "object" and has("summary") and has("series"))
	| ([.series[].duration_s] | max // 0) as $full
	| ([.series[] | select((.warmup | not) and .duration_s >= $full / 2)] | length) as $n
	| (.summary.headline_unit // "events/s") as $unit
	| (.summary.dips // []) as $dips
	| "run \(if $n >= 10 then 1 else 0 end) \($dips | length)",
	  ($dips[] | "dip \(input_filename | split("/") | last): \(.from_s * 10 | round / 10)-\(.to_s * 10 | round / 10) s: \($unit) \(.change * 100 | round)%"
		+ (if (.movers // []) == [] then "; no sampled counter stood out"
		   else "; " + ([.movers[] | .unit as $u | "\(.name) \(.during | val($u)) (typically \(.typical | val($u)))"] | join(", ")) end))'

runs=0 judged=0 with=0 dips=0
while read -r kind a b; do
	case $kind in
	run)
		runs=$((runs + 1)) judged=$((judged + a))
		((b > 0)) && with=$((with + 1)) dips=$((dips + b))
		;;
	dip) printf '%s %s\n' "$a" "$b" ;;
	esac
done < <(find "$@" -name '*.json' -type f -print0 | sort -z | xargs -0 -r jq -r "$filter")

short=$((runs - judged))
more=""
((short > 0)) && more=" ($short more too short to judge: under 10 full intervals)"
if ((dips == 0)); then
	echo "no dips in $judged runs$more"
else
	echo "$dips dips in $with of $judged runs$more"
fi
