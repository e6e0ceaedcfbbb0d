#!/usr/bin/env bash
# bench/fileio.sh: dbmark fileio against fio on the same prepared file, same
# block size, O_DIRECT, run alternately; prints the raw numbers of every
# round and a Markdown table of median ratios (dbmark / fio). See
# bench/README.md.
#
#   bash bench/fileio.sh
#   BENCH_TIME=30 BENCH_SIZE=4G bash bench/fileio.sh
#
# Settings (environment):
#   BENCH_DIR=DIR        directory on the disk under test (default: a new one under /var/tmp)
#   BENCH_SIZE=2G        size of the one test file (check df: it must fit)
#   BENCH_TIME=20        seconds per measured run
#   BENCH_ROUNDS=3       rounds (each: one tool, the other, the first again)
#   BENCH_THREADS="1 4 16"
#   BENCH_DEPTHS="16 32" io_uring queue depths (one thread)
#   BENCH_MODES="rndrd rndwr seqrd seqwr"
#   FIO=fio              the fio binary
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SIZE=${BENCH_SIZE:-2G}
TIME_S=${BENCH_TIME:-20}
ROUNDS=${BENCH_ROUNDS:-3}
THREADS=${BENCH_THREADS:-1 4 16}
DEPTHS=${BENCH_DEPTHS:-16 32}
MODES=${BENCH_MODES:-rndrd rndwr seqrd seqwr}
FIO=${FIO:-fio}
GNU_TIME=/usr/bin/time
DBMARK=$ROOT/bin/dbmark

log() { echo "bench: $*" >&2; }
die() { echo "bench: ERROR: $*" >&2; exit 1; }

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
	exit 0
fi
for v in TIME_S ROUNDS; do [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: not a positive whole number"; done
command -v "$FIO" >/dev/null || die "fio is missing (apt-get install fio)"
command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
"$GNU_TIME" --version 2>&1 | grep -q GNU || die "GNU time is missing (apt-get install time)"

log "building dbmark (make build)"
make -s build >&2

DIR=${BENCH_DIR:-$(mktemp -d /var/tmp/dbmark-fileio.XXXXXX)}
OUT=$(mktemp -d /tmp/dbmark-fileio-bench.XXXXXX)
export DBMARK_HOME=$OUT/home
COMMON=(--dir "$DIR" --file-num 1 --file-total-size "$SIZE")
"$DBMARK" prepare fileio "${COMMON[@]}" >&2
# cleanup removes only what prepare made; the directory goes too when this script made it.
trap '"$DBMARK" cleanup fileio "${COMMON[@]}" >&2 || true; [[ -n ${BENCH_DIR:-} ]] || rmdir "$DIR" 2>/dev/null || true' EXIT
FILE=$DIR/test_file.0

# fio's name of each mode. dbmark's seqwr empties the files first (it is
# sysbench's creation test), so the overwrite in place that fio's write
# does is dbmark's seqrewr.
fio_rw() { case $1 in rndrd) echo randread ;; rndwr) echo randwrite ;; seqrd) echo read ;; seqwr) echo write ;; esac; }
db_mode() { case $1 in seqwr) echo seqrewr ;; *) echo "$1" ;; esac; }
dir_of() { case $1 in rndrd | seqrd) echo read ;; *) echo write ;; esac; }

# fio's sequential jobs each walk the file from offset 0, so several jobs
# would read or write the same block at nearly the same moment; dbmark's
# threads share one cursor (sysbench's semantics) and touch each block
# once a pass. Giving each job a region of its own makes the same I/O:
# every block once, in sequential streams.
seq_regions() {
	local mode=$1 thr=$2 bytes
	case $mode in seqrd | seqwr) ;; *) return ;; esac
	((thr > 1)) || return
	bytes=$(numfmt --from=iec "$SIZE")
	echo "--size=$((bytes / thr / 16384 * 16384)) --offset_increment=$((bytes / thr / 16384 * 16384))"
}

# one TOOL MODE THREADS ENGINE DEPTH -> "iops cpu_us_per_io p50_us p95_us"
one() {
	local tool=$1 mode=$2 thr=$3 eng=$4 depth=$5 tf js d
	tf=$OUT/time.$$ js=$OUT/out.json d=$(dir_of "$mode")
	if [[ $tool == fio ]]; then
		local ioe=psync
		[[ $eng == io_uring ]] && ioe=io_uring
		# shellcheck disable=SC2046 # seq_regions prints separate options
		"$GNU_TIME" -f "%e %U %S" -o "$tf" "$FIO" --name=cell --filename="$FILE" --size="$SIZE" $(seq_regions "$mode" "$thr") --rw="$(fio_rw "$mode")" \
			--bs=16k --direct=1 --ioengine=$ioe --iodepth="$depth" --numjobs="$thr" --group_reporting \
			--time_based --runtime="$TIME_S" --output-format=json --output="$js" >/dev/null
		read -r _ u s <"$tf"
		jq -r --arg d "$d" --argjson cpu "$(echo "$u + $s" | bc -l)" \
			'.jobs[0][$d] as $x | [$x.iops, ($cpu * 1e6 / $x.total_ios), ($x.clat_ns.percentile["50.000000"] / 1000), ($x.clat_ns.percentile["95.000000"] / 1000)] | @tsv' "$js"
	else
		local extra=()
		[[ $eng == io_uring ]] && extra=(--engine io_uring --iodepth "$depth")
		"$GNU_TIME" -f "%e %U %S" -o "$tf" "$DBMARK" run fileio "${COMMON[@]}" --mode "$(db_mode "$mode")" --block-size 16K --direct \
			--threads "$thr" --time "$TIME_S" --fsync-freq 0 --fsync-end=off --percentiles 50,95 --no-store --json "$js" "${extra[@]}" >/dev/null
		read -r _ u s <"$tf"
		jq -r --arg d "$d" --argjson cpu "$(echo "$u + $s" | bc -l)" \
			'.summary as $s | ($s.ops[] | select(.name == $d)) as $o | [$s.events_per_s, ($cpu * 1e6 / $s.events), ($o.latency.percentiles[0].ms * 1000), ($o.latency.percentiles[1].ms * 1000)] | @tsv' "$js"
	fi
}

cells=()
for m in $MODES; do for t in $THREADS; do cells+=("$m $t sync 1"); done; done
for q in $DEPTHS; do cells+=("rndrd 1 io_uring $q"); done

RAW=$OUT/raw.tsv
: >"$RAW"
log "file $FILE ($SIZE), $TIME_S s a run, $ROUNDS rounds, raw numbers in $RAW"
for ((r = 1; r <= ROUNDS; r++)); do
	for c in "${cells[@]}"; do
		read -r m t e q <<<"$c"
		# A round brackets one tool's run between two of the other's (odd
		# rounds fio, even rounds dbmark), so a steady drift of the disk
		# cancels out of the round's ratio.
		order="fio dbmark fio"
		((r % 2 == 0)) && order="dbmark fio dbmark"
		for tool in $order; do
			res=$(one "$tool" "$m" "$t" "$e" "$q")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$t" "$e" "$q" "$r" "$tool" "$res" >>"$RAW"
			log "round $r $m threads=$t $e depth=$q $tool: $res"
		done
	done
done

echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r), $SIZE file, ${TIME_S}s a run, $ROUNDS rounds, 16 KiB, O_DIRECT"
echo
echo "| mode | threads | engine | fio IOPS | dbmark IOPS | IOPS ratio | fio CPU µs/IO | dbmark CPU µs/IO | CPU/IO ratio | p50 ratio | p95 ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk -F'\t' "$(<"$ROOT/bench/medians.awk")"'
{
	k = $1 "|" $2 "|" $3 ($3 == "io_uring" ? " depth " $4 : "")
	if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
	v[k, $6, "iops"] = v[k, $6, "iops"] " " $7
	v[k, $6, "cpu"] = v[k, $6, "cpu"] " " $8
	# The tool that ran twice in a round counts with the mean of its runs.
	n[k, $5, $6]++
	for (j = 1; j <= 4; j++) sum[k, $5, $6, j] += $(6 + j)
}
END {
	for (i = 1; i <= nk; i++) {
		k = keys[i]; ri = rc = r50 = r95 = ""
		for (r = 1; r <= 99; r++) {
			if (!((k, r, "fio") in n) || !((k, r, "dbmark") in n)) continue
			for (j = 1; j <= 4; j++) { f[j] = sum[k, r, "fio", j] / n[k, r, "fio"]; d[j] = sum[k, r, "dbmark", j] / n[k, r, "dbmark"] }
			ri = ri " " d[1] / f[1]; rc = rc " " d[2] / f[2]; r50 = r50 " " d[3] / f[3]; r95 = r95 " " d[4] / f[4]
		}
		split(k, p, "|")
		printf "| %s | %s | %s | %.0f | %.0f | %.3f | %.1f | %.1f | %.2f | %.2f | %.2f |\n", p[1], p[2], p[3],
			median(v[k, "fio", "iops"]), median(v[k, "dbmark", "iops"]), median(ri),
			median(v[k, "fio", "cpu"]), median(v[k, "dbmark", "cpu"]), median(rc), median(r50), median(r95)
	}
}' "$RAW"
