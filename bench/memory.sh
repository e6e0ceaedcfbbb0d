#!/usr/bin/env bash
# Memory soak: dbmark with many threads for a long run, sampling the client's
# resident set size, to show that memory stays flat however long a run lasts.
# Each sample splits the resident size into anonymous memory (the heap,
# stacks, the runtime's own) and file pages (the binary's code and data,
# mapped in as they are first used), and gives the Go heap that was still
# live after the last collection (GODEBUG=gctrace=1): the data the run
# keeps, which is what must not grow. The run's own metrics (--metrics-addr)
# split the anonymous memory further: the heap's spans in use, the heap
# held free and not yet returned to the system, and goroutine stacks.
#
#   make testenv-start && bash bench/memory.sh
#   MEM_TIME=600 MEM_THREADS=256 MEM_TARGET=postgres-tcp bash bench/memory.sh
#   MEM_TEST=tpcb MEM_THREADS=8 bash bench/memory.sh     # pgbench's tpcb-like, scale 10
#
#   MEM_TIME=600        seconds of the run
#   MEM_THREADS=256     client threads (connections)
#   MEM_TEST=oltp_point_select   or another OLTP test, or tpcb
#   MEM_SCRIPT=tpcb-like         with MEM_TEST=tpcb: the builtin script (-b)
#   MEM_TARGET=postgres-tcp | mariadb-tcp
#   MEM_EVERY=10        seconds between RSS samples
#   DBMARK=PATH         the dbmark binary (default: bin/dbmark, built by make build)
#   MEM_RATE=N          open loop at N transactions/s in all (default: closed loop);
#                       with many clients on a small machine, the clients stay many
#                       while the server is not saturated
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TIME_S=${MEM_TIME:-600}
THREADS=${MEM_THREADS:-256}
TEST=${MEM_TEST:-oltp_point_select}
TARGET=${MEM_TARGET:-postgres-tcp}
EVERY=${MEM_EVERY:-10}
RATE=${MEM_RATE:-}

if [[ -z ${DBMARK_TEST_POSTGRES:-} || -z ${DBMARK_TEST_MYSQL:-} ]]; then
	eval "$(bash scripts/testenv.sh env)"
fi
case $TARGET in
postgres-tcp) URL=$DBMARK_TEST_POSTGRES ;;
mariadb-tcp) URL=$DBMARK_TEST_MYSQL ;;
*)
	echo "memory.sh: MEM_TARGET=$TARGET: use postgres-tcp or mariadb-tcp" >&2
	exit 1
	;;
esac

if [[ -n ${DBMARK:-} ]]; then
	BIN=$DBMARK
else
	make -s build
	BIN=bin/dbmark
fi
OUT=$(mktemp -d /tmp/dbmark-memory.XXXXXX)
if [[ $TEST == tpcb ]]; then
	# pgbench's tables at scale 10, prepared once and kept for the next soak.
	OPTS=(--target "$URL" -b "${MEM_SCRIPT:-tpcb-like}" -M prepared)
	if ! $BIN run tpcb "${OPTS[@]}" -t 1 -n --no-store -q >/dev/null 2>&1; then
		$BIN prepare tpcb --target "$URL" -s 10 -q >"$OUT/prepare.log" 2>&1 ||
			{ cat "$OUT/prepare.log" >&2; exit 1; }
	fi
else
	OPTS=(--target "$URL" --tables 4 --table-size 100000)
	# The soak's own tables: prepared once, kept for the next soak.
	if ! $BIN run "$TEST" "${OPTS[@]}" --events 1 --time 0 --no-store -q >/dev/null 2>&1; then
		$BIN cleanup "$TEST" "${OPTS[@]}" -q >/dev/null
		$BIN prepare "$TEST" "${OPTS[@]}" --threads 4 -q >/dev/null
	fi
fi

# The runtime prints one line per collection on stderr, ending its heap
# sizes with "before->after->live MB".
RUN_OPTS=()
[[ -n $RATE ]] && RUN_OPTS=(--rate "$RATE")
GODEBUG=gctrace=1 $BIN run "$TEST" "${OPTS[@]}" "${RUN_OPTS[@]}" --threads "$THREADS" --time "$TIME_S" --no-store -q --json "$OUT/result.json" \
	--metrics-addr 127.0.0.1:0 >"$OUT/run.log" 2>"$OUT/gc.log" &
PID=$!
status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$PID/status" 2>/dev/null || echo 0; }
live_mb() { grep -o '[0-9]*->[0-9]*->[0-9]* MB' "$OUT/gc.log" 2>/dev/null | tail -n 1 | sed -E 's/.*->([0-9]+) MB/\1/'; }
# runtime_mib: the heap in use, the heap free and not returned, and the
# stacks, in MiB, from a scrape of the run's metrics ("? ? ?" without one).
runtime_mib() {
	local url
	url=$(grep -o 'metrics on http://[^ ]*' "$OUT/gc.log" 2>/dev/null | head -n 1 | sed 's/^metrics on //')
	[[ -n $url ]] && curl -sf --max-time 2 "$url" | awk '
		$1 == "go_memstats_heap_inuse_bytes" { use = $2 }
		$1 == "go_memstats_heap_idle_bytes" { idle = $2 }
		$1 == "go_memstats_heap_released_bytes" { rel = $2 }
		$1 == "go_memstats_stack_inuse_bytes" { st = $2 }
		END { if (use == "") print "? ? ?"; else printf "%.1f %.1f %.1f\n", use/1048576, (idle-rel)/1048576, st/1048576 }' ||
		echo "? ? ?"
}
echo "| elapsed s | RSS MiB | anonymous MiB | file MiB | heap in use MiB | heap free, kept MiB | stacks MiB | live heap MB (last GC) | collections | threads (OS) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
start=$(date +%s)
peak=0
first=""
while kill -0 "$PID" 2>/dev/null; do
	sleep "$EVERY"
	[[ -r /proc/$PID/status ]] || break
	rss_kb=$(status_kb VmRSS)
	anon_kb=$(status_kb RssAnon)
	file_kb=$(status_kb RssFile)
	os_threads=$(status_kb Threads)
	[[ -n $rss_kb && $rss_kb -gt 0 ]] || continue
	((rss_kb > peak)) && peak=$rss_kb
	[[ -z $first && $(($(date +%s) - start)) -ge 60 ]] && first=$rss_kb
	live=$(live_mb)
	gcs=$(grep -c '^gc ' "$OUT/gc.log" 2>/dev/null || true)
	read -r heap kept stacks < <(runtime_mib)
	printf "| %d | %.1f | %.1f | %.1f | %s | %s | %s | %s | %s | %d |\n" "$(($(date +%s) - start))" "$(echo "$rss_kb/1024" | bc -l)" \
		"$(echo "${anon_kb:-0}/1024" | bc -l)" "$(echo "${file_kb:-0}/1024" | bc -l)" "$heap" "$kept" "$stacks" "${live:-none yet}" "${gcs:-0}" "$os_threads"
	last=$rss_kb
done
wait "$PID" || true
tps=$(jq -r '.summary.events_per_s' "$OUT/result.json" 2>/dev/null || echo "?")
printf "\npeak RSS %.1f MiB; after the first minute %.1f MiB, at the end %.1f MiB; %s tps; %s threads, %s s, %s\n" \
	"$(echo "$peak/1024" | bc -l)" "$(echo "${first:-0}/1024" | bc -l)" "$(echo "${last:-0}/1024" | bc -l)" "$tps" "$THREADS" "$TIME_S" "$TARGET${RATE:+, --rate $RATE}"
echo "logs: $OUT"
