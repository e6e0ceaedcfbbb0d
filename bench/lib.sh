#!/usr/bin/env bash
# bench/lib.sh, sourced by bench/run.sh and bench/tpcb.sh: what the two
# comparisons share. A run's client CPU comes from GNU time, the server's
# from /proc; every run becomes one line of a TSV file in BENCH_RESULTS, and
# the summary of ratios (dbmark / peer) is printed from that file alone, so
# a file kept in bench/results/ can be summarized again later:
#
#   bash bench/lib.sh summary sysbench bench/results/run-....tsv
#
# The caller sets ROOT (the repository) before sourcing.

GNU_TIME=/usr/bin/time
CLK_TCK=$(getconf CLK_TCK)

log() { echo "bench: $*" >&2; }
die() {
	echo "bench: ERROR: $*" >&2
	exit 1
}

# need_whole NAME=VALUE...: each VALUE is a positive whole number (NAME is
# the setting's name, for the message).
need_whole() {
	local kv
	for kv in "$@"; do
		[[ ${kv#*=} =~ ^[1-9][0-9]*$ ]] || die "$kv: not a positive whole number"
	done
}

# dbmark_binary: sets DBMARK. $DBMARK, when set, is used as it is (the
# lead's build of a revision, say); otherwise bin/dbmark is built by make.
dbmark_binary() {
	if [[ -n ${DBMARK:-} ]]; then
		[[ -x $DBMARK ]] || die "DBMARK=$DBMARK: not an executable"
		DBMARK=$(realpath "$DBMARK")
		return
	fi
	log "building dbmark (make build)"
	make -C "$ROOT" --no-print-directory build >&2 || die "make build failed"
	DBMARK=$ROOT/bin/dbmark
}

# ------------------------------------------------------------ raw figures

TSV_HEADER='tool	cell	round	run	tps	cpu_s	transactions	errors	clients	mean_latency_ms	wall_s	maxrss_kb	server_cpu_s	switches'

# results_open NAME: the TSV file for this run of script NAME, in
# $BENCH_RESULTS (default bench/results/), named by the script, the UTC time
# and the checkout's short revision ("-dirty" with uncommitted changes to
# tracked files); sets RESULTS_TSV and RESULTS_MD (the printed summary).
results_open() {
	local dir=${BENCH_RESULTS:-$ROOT/bench/results} rev
	mkdir -p "$dir" || die "BENCH_RESULTS=$dir: cannot create the directory"
	rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) || rev=norev
	if [[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]]; then rev+=-dirty; fi
	RESULTS_TSV=$(realpath "$dir")/$1-$(date -u +%Y%m%d-%H%M%S)-$rev.tsv
	# shellcheck disable=SC2034 # read by the scripts that source this file
	RESULTS_MD=${RESULTS_TSV%.tsv}.md
	echo "$TSV_HEADER" >"$RESULTS_TSV"
}

# timed TIMEFILE CMD...: runs CMD under GNU time, which writes "wall user
# sys maxrss_kb voluntary_switches involuntary_switches" to TIMEFILE;
# returns CMD's exit code.
timed() {
	local tf=$1
	shift
	"$GNU_TIME" -f "%e %U %S %M %w %c" -o "$tf" "$@"
}

# time_of TIMEFILE: "wall_s cpu_s maxrss_kb" (cpu: user + sys). GNU time
# writes "Command exited with non-zero status" first on failure: the
# figures are on the last line.
time_of() {
	local wall user sys rss _
	read -r wall user sys rss _ < <(tail -n 1 "$1") || true
	[[ -n ${rss:-} ]] || die "no GNU time output in $1"
	awk -v w="$wall" -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN { printf "%s %.2f %s\n", w, u + s, m }'
}

# switches_of TIMEFILE: the process's context switches, voluntary (it
# waited) plus involuntary (it was preempted), from timed's TIMEFILE.
switches_of() {
	local vol inv
	read -r _ _ _ _ vol inv < <(tail -n 1 "$1") || true
	[[ -n ${inv:-} ]] || die "no context switches in $1 (GNU time's %w %c)"
	echo $((vol + inv))
}

# record TOOL CELL ROUND RUN TPS CPU TX ERRORS CLIENTS LATENCY WALL RSS SERVER SWITCHES:
# one line of the TSV (the columns of TSV_HEADER), and the same figures on
# stderr as progress.
record() {
	local IFS=$'\t'
	echo "$*" >>"$RESULTS_TSV"
	awk -v tool="$1" -v cell="$2" -v r="$3" -v k="$4" -v tps="$5" -v cpu="$6" -v tx="$7" -v lat="${10}" -v srv="${13}" 'BEGIN {
		printf "bench:   %-8s %s round %s run %s: %.1f tps, client CPU %.1f µs/tx, mean latency %.3f ms, server CPU %s\n",
			tool, cell, r, k, tps, cpu * 1e6 / tx, lat, srv < 0 ? "not measured" : sprintf("%.1f µs/tx", srv * 1e6 / tx) }' >&2
}

# ------------------------------------------------------------ sysbench over TLS

# sysbench_tls_dir (the caller sets OUT): prints the directory sysbench's TLS runs start in, or
# fails with the reason on stderr. sysbench 1.0 with --mysql-ssl=on loads
# cacert.pem, client-cert.pem and client-key.pem from its working
# directory, and the server checks a client certificate against its own
# CA: the client needs one that CA signed. BENCH_SYSBENCH_TLS_DIR names a
# directory holding the three; otherwise they are made from the test
# environment's CA ($DBMARK_TEST_TLS_CA and the ca.key beside it).
sysbench_tls_dir() {
	local d=${BENCH_SYSBENCH_TLS_DIR:-} ca=${DBMARK_TEST_TLS_CA:-} f
	if [[ -n $d ]]; then
		for f in cacert.pem client-cert.pem client-key.pem; do
			[[ -r $d/$f ]] || {
				echo "BENCH_SYSBENCH_TLS_DIR=$d has no readable $f" >&2
				return 1
			}
		done
		realpath "$d"
		return
	fi
	if [[ -z $ca || ! -r $ca || ! -r $(dirname "$ca")/ca.key ]]; then
		echo "sysbench needs a client certificate signed by the server's CA: set BENCH_SYSBENCH_TLS_DIR (cacert.pem, client-cert.pem, client-key.pem), or DBMARK_TEST_TLS_CA with a readable ca.key beside it" >&2
		return 1
	fi
	d=$OUT/sysbench-tls
	mkdir -p "$d"
	if ! (
		cd "$d" &&
			cp "$ca" cacert.pem &&
			openssl req -newkey rsa:2048 -nodes -subj "/CN=sysbench" -keyout client-key.pem -out client.csr &&
			openssl x509 -req -days 30 -in client.csr -CA "$ca" -CAkey "$(dirname "$ca")/ca.key" -CAcreateserial -CAserial ca.srl -out client-cert.pem
	) >"$OUT/sysbench-tls.log" 2>&1; then
		echo "openssl could not make sysbench's client certificate (log: $OUT/sysbench-tls.log)" >&2
		return 1
	fi
	echo "$d"
}

# ------------------------------------------------------------ the server's CPU

# server_pid PIDFILE: the server's process id from its pid file, or nothing
# when the file is not readable here (a server on another machine).
server_pid() {
	local pid
	[[ -r $1 ]] || return 0
	pid=$(head -n 1 "$1")
	[[ $pid =~ ^[0-9]+$ && -r /proc/$pid/stat ]] && echo "$pid"
	return 0
}

# server_ticks PID: CPU ticks used so far by the process, its reaped
# children (a PostgreSQL backend's time moves to the postmaster when it
# exits) and its live children; -1 without a PID.
server_ticks() {
	[[ -n $1 ]] || {
		echo -1
		return
	}
	local t c
	# Fields after the command name (which may hold spaces): utime is the 12th.
	t=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$1/stat" 2>/dev/null) || {
		echo -1
		return
	}
	for c in $(ps -o pid= --ppid "$1"); do
		t=$((t + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$c/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}

# server_ticks_after_run PID: server_ticks once the run's connections have
# closed (a PostgreSQL backend's time moves to the postmaster only when it
# has exited and been reaped).
server_ticks_after_run() {
	[[ -n $1 ]] && sleep 0.3
	server_ticks "$1"
}

# server_seconds T0 T1: the CPU seconds between two server_ticks, -1 if
# either is missing.
server_seconds() {
	awk -v a="$1" -v b="$2" -v hz="$CLK_TCK" 'BEGIN { if (a < 0 || b < 0) print -1; else printf "%.2f", (b - a) / hz }'
}

# ------------------------------------------------------------ the summary

# summary PEER TSV: the Markdown table of median ratios, dbmark / PEER, one
# row per cell in the order the cells ran.
#
# A round runs one tool between two runs of the other; within it the tool
# that ran twice counts with the mean of its two rates and its CPU over
# both runs' transactions, so a steady drift cancels out of the round's
# ratio. A cell's ratio is the median over its rounds. "in flight" is
# dbmark's events/s times its mean latency (Little's law): the clients it
# kept waiting on the server at once, to be read against the clients
# column.
summary() {
	local peer=$1 tsv=$2
	echo "| cell | clients | $peer tps | dbmark tps | tps ratio | $peer CPU µs/tx | dbmark CPU µs/tx | CPU/tx ratio | server CPU/tx ratio | dbmark in flight | switches/tx: $peer, dbmark | tps ratio by round |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	awk -F'\t' -v peer="$peer" "$(<"$ROOT/bench/medians.awk")"'
	FNR == 1 && $1 == "tool" { next }
	{
		tool = $1; cell = $2; round = $3
		if (!(cell in seen)) { seen[cell] = 1; cells[++nc] = cell; clients[cell] = $9 }
		if (!((cell, round) in rseen)) { rseen[cell, round] = 1; rounds[cell] = rounds[cell] " " round }
		k = cell SUBSEP round SUBSEP tool
		tps[k] += $5; runs[k]++; cpu[k] += $6; txs[k] += $7
		if ($13 >= 0) srv[k] += $13; else nosrv[cell] = 1
		add(T, cell SUBSEP tool, $5)
		add(C, cell SUBSEP tool, $7 > 0 ? $6 * 1e6 / $7 : 0)
		if (tool == "dbmark" && $10 > 0) add(F, cell, $5 * $10 / 1000)
		if (NF >= 14 && $14 != "" && $7 > 0) add(X, cell SUBSEP tool, $14 / $7)
	}
	END {
		for (i = 1; i <= nc; i++) {
			c = cells[i]
			n = split(rounds[c], rs, " ")
			for (j = 1; j <= n; j++) {
				d = c SUBSEP rs[j] SUBSEP "dbmark"; p = c SUBSEP rs[j] SUBSEP peer
				if (!(p in tps) || !(d in tps) || tps[p] <= 0 || txs[p] <= 0 || txs[d] <= 0) continue
				add(R, c SUBSEP "tps", (tps[d] / runs[d]) / (tps[p] / runs[p]))
				if (cpu[p] > 0) add(R, c SUBSEP "cpu", (cpu[d] / txs[d]) / (cpu[p] / txs[p]))
				if (!(c in nosrv) && srv[p] > 0) add(R, c SUBSEP "srv", (srv[d] / txs[d]) / (srv[p] / txs[p]))
			}
			byround = ""
			n = split(R[c SUBSEP "tps"], rr, " ")
			for (j = 1; j <= n; j++) byround = byround (j > 1 ? ", " : "") sprintf("%.3f", rr[j])
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s, %s | %s |\n", c, clients[c],
				fmt("%.1f", T[c SUBSEP peer]), fmt("%.1f", T[c SUBSEP "dbmark"]), fmt("%.3f", R[c SUBSEP "tps"]),
				fmt("%.1f", C[c SUBSEP peer]), fmt("%.1f", C[c SUBSEP "dbmark"]), fmt("%.3f", R[c SUBSEP "cpu"]),
				fmt("%.3f", R[c SUBSEP "srv"]), fmt("%.2f", F[c]), fmt("%.2f", X[c SUBSEP peer]), fmt("%.2f", X[c SUBSEP "dbmark"]),
				byround == "" ? "n/a" : byround
		}
	}
	# fmt FORMAT LIST: the median of LIST in FORMAT, or n/a for an empty list.
	function fmt(f, list) { return list == "" ? "n/a" : sprintf(f, median(list)) }
	' "$tsv"
}

# Run as a command: bash bench/lib.sh summary PEER TSV.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	[[ ${1:-} == summary && $# == 3 && -r $3 ]] || die "usage: bash bench/lib.sh summary sysbench|pgbench FILE.tsv"
	summary "$2" "$3"
fi
