# bench/servercpu.sh, sourced by the bench scripts: the CPU time a server
# on this machine has used, read from /proc, so a run's share can be
# divided by its transactions. On a machine that client and server share,
# a transaction the server spends more on is one fewer for either tool.

CLK_TCK=$(getconf CLK_TCK)

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
	[[ -n $1 ]] || { echo -1; return; }
	local t c
	# Fields after the command name (which may hold spaces): utime is the 12th.
	t=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$1/stat" 2>/dev/null) || { echo -1; return; }
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

# resched_ipis: rescheduling interrupts so far, all CPUs together (-1 where
# /proc/interrupts has no such line). One is sent when a task woken on one
# CPU must run on another, so their number per transaction tells how many
# of a run's client-server wake-ups crossed CPUs: on a machine that client
# and server share, the runs that cross more are the slower ones, whichever
# tool drives the server.
resched_ipis() {
	awk '$1 == "RES:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; found = 1 }
		END { print found ? n : -1 }' /proc/interrupts 2>/dev/null || echo -1
}

# count_between A B: B - A, -1 if either is missing.
count_between() {
	awk -v a="$1" -v b="$2" 'BEGIN { print (a < 0 || b < 0) ? -1 : b - a }'
}
