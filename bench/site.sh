#!/usr/bin/env bash
# Load test of the results site (dbmark serve): fills a store with N varied
# results (bench/sitebench gen), serves it, drives filtered /results pages,
# /r/ID pages (with where the result stands), /standing/WORKLOAD pages, the
# /api reference page and submissions at a fixed rate, and reports the latencies
# and the server's peak resident size.
#
#   bench/site.sh [N] [STORE]     N results (default 10000) in STORE (default a
#                                 SQLite file in a temporary directory, or postgres://...)
# RATE (default 200 per second) and DURATION (default 20s, after 15 s unmeasured) set the load;
# KINDS (default "results result standing api submit") the requests; SERVE_ARGS are added to dbmark serve's; PORT (18480) is where it listens.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

N=${1:-10000}
STORE=${2:-}
RATE=${RATE:-200}
DURATION=${DURATION:-20s}
KINDS=${KINDS:-results result standing api submit}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[[ -n $STORE ]] || STORE=$WORK/site.db

go build -o "$WORK/dbmark" ./cmd/dbmark
go build -o "$WORK/sitebench" ./bench/sitebench
echo "site: filling $STORE with $N results" >&2
"$WORK/sitebench" gen -store "$STORE" -n "$N"

PORT=${PORT:-18480}
# Submissions come from many addresses (X-Forwarded-For, --trust-proxy),
# each within the default rate limits, as a public site's would.
"$WORK/dbmark" serve --listen 127.0.0.1:$PORT --store "$STORE" -q --trust-proxy ${SERVE_ARGS:-} >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do grep -q serving "$WORK/serve.out" && break; sleep 0.1; done

# The server's CPU time (user + system) per request, warm-up included: what
# a page costs whatever else the machine runs, where the latencies above
# also count the wait for a CPU on a busy machine.
cpu_ms() { awk -v t="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000 / t}' /proc/$SERVER/stat; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in $KINDS; do
	before=$(cpu_ms)
	"$WORK/sitebench" load -url http://127.0.0.1:$PORT -kind $kind -rate "$RATE" -warmup 15s -duration "$DURATION" -many-clients
	awk -v a="$before" -v b="$(cpu_ms)" -v r="$RATE" -v d="${DURATION%s}" -v k="$kind" \
		'BEGIN { printf "%s: server CPU %.2f ms a request\n", k, (b - a) / (r * (15 + d)) }'
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "server peak resident size: $(awk '/VmHWM/ {print $2, $3}' /proc/$SERVER/status)"
kill -TERM $SERVER
wait $SERVER || true
