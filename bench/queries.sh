#!/usr/bin/env bash
# bench/queries.sh: the Wisconsin benchmark timed by dbmark against the
# engines' own clients, run alternately; writes every timing to a TSV file
# and prints Markdown tables of median ratios (dbmark / client). See
# bench/README.md.
#
#   bash bench/queries.sh                    # servers must be up (make testenv-start)
#   BENCH_PARTS=load bash bench/queries.sh
#   bash bench/queries.sh summary FILE.tsv   # the tables again, from a kept TSV (with the
#                                            # run's BENCH_LOAD_SCALE, _THREADS for the load's rows)
#
# Two parts:
#   queries  per query: `dbmark run wisconsin` against psql with \timing
#            (PostgreSQL) and the mariadb client's own time per statement
#            (`mariadb -vvv`, MariaDB), the same statements in the same
#            order on the same relations; each query runs ITERATIONS times
#            in a row. With BENCH_ORDER=query a round takes the queries in
#            turn, and for each runs the client on it, then dbmark (`--only`
#            that query), or the reverse (the order alternates by query
#            and round): both tools time a query within seconds of each
#            other, which a loaded machine needs. With BENCH_ORDER=suite a
#            round runs each tool on the whole suite once, the client first
#            in odd rounds; its client CPU per suite is then comparable.
#            Per round and tool a query's time is the median of its
#            iterations (the hot column: the fastest); its ratio is the
#            median over rounds of dbmark's time over the client's.
#            Server time (BENCH_SERVER_TIME=1): the server logs its own
#            time for every execution (PostgreSQL: log_min_duration_statement
#            = 0 on the bench database, from the server's log file; MariaDB:
#            the slow query log with long_query_time = 0 into mysql.slow_log,
#            microseconds), paired with the tool's time for that execution:
#            the tool's overhead is its time minus the server's. Per query
#            the ratio (S + dbmark's overhead) / (S + the client's), S the
#            server's median time over both tools' executions and each
#            overhead the median over the tool's executions, takes the
#            server's own spread out of the comparison.
#   load     `dbmark prepare wisconsin` at LOAD_SCALE against a plain COPY
#            (PostgreSQL) or LOAD DATA LOCAL INFILE (MariaDB) of the same
#            rows into the same tables (the rows dumped once from dbmark's
#            tables to files, loaded by psql's \copy or the mariadb client,
#            one table after another), and against that plus the prepare's
#            other steps done by the client (BPRIME, the unique1 indexes,
#            VACUUM ANALYZE or ANALYZE TABLE).
#
# Settings (environment):
#   BENCH_PARTS="queries load"
#   BENCH_ENGINES="postgres mariadb"   engines of the queries part
#   BENCH_SCALE=100000       --scale of the queries part
#   BENCH_ITERATIONS=5       runs of each query in a row, per tool and round
#   BENCH_ROUNDS=3           rounds of each part
#   BENCH_ORDER=query        query (the tools alternate query by query) or suite
#   BENCH_MY_SKIP="q9_join_aselb_noindex q10_join_abprime_noindex q11_join_cselaselb_noindex"
#                            queries not run on MariaDB: its joins without an
#                            index are nested loops, minutes each at 100,000
#   BENCH_LOAD_SCALE=1000000 --scale of the load part
#   BENCH_LOAD_THREADS=1     dbmark prepare --threads (the COPY is one psql)
#   BENCH_LOAD_ENGINES=postgres   engines of the load part (postgres mariadb)
#   BENCH_RESULTS=DIR        where the TSV of every timing and the summary go (default: bench/results)
#   BENCH_OUT=DIR            where the tools' logs and the row files go (default: a new /tmp/dbmark-queries-bench.XXXXXX)
#   BENCH_SERVER_TIME=1      0: no server time (neither log is needed)
#   BENCH_PG_LOG=FILE        PostgreSQL's log file (default: scripts/testenv.sh's,
#                            beside DBMARK_TEST_PG_SOCKETDIR); read from this machine
#   DBMARK=PATH              the dbmark binary (default: bin/dbmark, built by make build)
# The servers are those of scripts/testenv.sh, or the ones named by
# DBMARK_TEST_POSTGRES, DBMARK_TEST_MYSQL and DBMARK_TEST_PG_* / _MY_*
# when those are exported. The databases BENCH_DB (dbmark_queries_bench)
# and BENCH_LOAD_DB (dbmark_load_bench) are made and dropped.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

PARTS=${BENCH_PARTS:-queries load}
ENGINES=${BENCH_ENGINES:-postgres mariadb}
SCALE=${BENCH_SCALE:-100000}
ITERATIONS=${BENCH_ITERATIONS:-5}
ROUNDS=${BENCH_ROUNDS:-3}
ORDER=${BENCH_ORDER:-query}
MY_SKIP=${BENCH_MY_SKIP-q9_join_aselb_noindex q10_join_abprime_noindex q11_join_cselaselb_noindex}
LOAD_SCALE=${BENCH_LOAD_SCALE:-1000000}
LOAD_THREADS=${BENCH_LOAD_THREADS:-1}
LOAD_ENGINES=${BENCH_LOAD_ENGINES:-postgres}
SERVER_TIME=${BENCH_SERVER_TIME:-1}
QDB=${BENCH_DB:-dbmark_queries_bench}
LDB=${BENCH_LOAD_DB:-dbmark_load_bench}

case ${1:-} in -h | --help)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac
SUMMARY_FILE=
if [[ ${1:-} == summary ]]; then
	(($# == 2)) && [[ -r $2 ]] || die "summary: one readable TSV file of this script expected"
	SUMMARY_FILE=$2
	shift 2
fi
(($# == 0)) || die "no arguments expected but summary FILE (the settings are environment variables; --help lists them)"

need_whole BENCH_SCALE="$SCALE" BENCH_ITERATIONS="$ITERATIONS" BENCH_ROUNDS="$ROUNDS" BENCH_LOAD_SCALE="$LOAD_SCALE" BENCH_LOAD_THREADS="$LOAD_THREADS"
for d in "$QDB" "$LDB"; do [[ $d =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB/BENCH_LOAD_DB=$d: use lower-case letters, digits and _"; done
case $ORDER in query | suite) ;; *) die "BENCH_ORDER=$ORDER: query or suite" ;; esac
case $SERVER_TIME in 0 | 1) ;; *) die "BENCH_SERVER_TIME=$SERVER_TIME: 0 or 1" ;; esac
for p in $PARTS; do
	case $p in queries | load) ;; *) die "BENCH_PARTS: unknown part $p (queries load)" ;; esac
done
for e in $ENGINES; do
	case $e in postgres | mariadb) ;; *) die "BENCH_ENGINES: unknown engine $e (postgres mariadb)" ;; esac
done
for e in $LOAD_ENGINES; do
	case $e in postgres | mariadb) ;; *) die "BENCH_LOAD_ENGINES: unknown engine $e (postgres mariadb)" ;; esac
done
if [[ -z $SUMMARY_FILE ]]; then
	"$GNU_TIME" --version 2>&1 | grep -q GNU || die "GNU time is missing (apt-get install time)"
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	command -v psql >/dev/null || die "psql is missing (apt-get install postgresql-client)"
	[[ " $ENGINES $LOAD_ENGINES " != *" mariadb "* ]] || command -v mariadb >/dev/null ||
		die "the mariadb client is missing (apt-get install mariadb-client)"
	dbmark_binary
	if [[ -z ${DBMARK_TEST_POSTGRES:-} ]]; then
		eval "$(bash scripts/testenv.sh env)"
	fi
	PG_LOG=
	if ((SERVER_TIME)) && [[ " $PARTS " == *" queries "* && " $ENGINES " == *" postgres "* ]]; then
		PG_LOG=${BENCH_PG_LOG:-${DBMARK_TEST_PG_SOCKETDIR:+$(dirname "$DBMARK_TEST_PG_SOCKETDIR")/postgresql.log}}
		[[ -n $PG_LOG && -r $PG_LOG ]] ||
			die "PostgreSQL's log file ${PG_LOG:-(unknown)} is not readable here: set BENCH_PG_LOG, or BENCH_SERVER_TIME=0"
	fi

	OUT=${BENCH_OUT:-$(mktemp -d /tmp/dbmark-queries-bench.XXXXXX)}
	mkdir -p "$OUT"
	OUT=$(realpath "$OUT")
	results_open queries
	# Every timing, one line each: a query's iteration, or a load step.
	# server_seconds: the server's own time for that execution, from its log
	# ("-" when not measured).
	echo "part	engine	tool	round	query	iteration	seconds	server_seconds" >"$RESULTS_TSV"
	export PGPASSWORD=$DBMARK_TEST_PG_PASSWORD DBMARK_HOME=$OUT/dbmark-home
	PSQL=(env PGOPTIONS="-c client_min_messages=warning" psql -X -q -tA -v ON_ERROR_STOP=1 -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER")
	MYSQL=(mariadb --no-defaults --protocol=TCP -h "$DBMARK_TEST_MY_HOST" -P "$DBMARK_TEST_MY_PORT" -u"$DBMARK_TEST_MY_USER" -p"$DBMARK_TEST_MY_PASSWORD")
fi

pg_client() { "${PSQL[@]}" "$@"; }
my_client() { "${MYSQL[@]}" "$@"; }
with_db() { sed -E "s#^([a-z]+://[^/]*)/[^?]*#\1/$2#" <<<"$1"; }

# MariaDB's slow log settings as they were, restored at the end.
MY_LOG_SAVED=

# my_log_on: MariaDB logs every statement (long_query_time 0, set globally:
# each run's connection is new) into mysql.slow_log, whose query_time
# has microseconds.
my_log_on() {
	MY_LOG_SAVED=$(my_client -N -B -e "SELECT @@global.log_output, @@global.slow_query_log, @@global.long_query_time")
	my_client -e "SET GLOBAL log_output = 'TABLE', GLOBAL long_query_time = 0, GLOBAL slow_query_log = 1"
}

my_log_restore() {
	[[ -n $MY_LOG_SAVED ]] || return 0
	local out slow long
	read -r out slow long <<<"$MY_LOG_SAVED"
	my_client -e "SET GLOBAL slow_query_log = $slow, GLOBAL long_query_time = $long, GLOBAL log_output = '$out'; TRUNCATE TABLE mysql.slow_log" || true
	MY_LOG_SAVED=
}

cleanup() {
	my_log_restore
	pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $QDB WITH (FORCE)" -c "DROP DATABASE IF EXISTS $LDB WITH (FORCE)" || true
	if [[ " $ENGINES $LOAD_ENGINES " == *" mariadb "* ]]; then
		my_client -e "DROP DATABASE IF EXISTS $QDB; DROP DATABASE IF EXISTS $LDB; DROP DATABASE IF EXISTS ${LDB}_copy" || true
	fi
	if [[ -n ${LOAD_SAMPLER:-} ]]; then kill "$LOAD_SAMPLER" 2>/dev/null || true; fi
}
if [[ -z $SUMMARY_FILE ]]; then
	trap cleanup EXIT
	cleanup
fi

# tsv PART ENGINE TOOL ROUND QUERY ITERATION SECONDS [SERVER]: one line of the TSV.
tsv() {
	local IFS=$'\t'
	echo "$*" >>"$RESULTS_TSV"
}

# ------------------------------------------------------------ server time

# server_mark ENGINE: where the server's log of the next run begins.
server_mark() {
	((SERVER_TIME)) || return 0
	if [[ $1 == postgres ]]; then
		MARK=$(stat -c %s "$PG_LOG")
	else
		my_client -e "TRUNCATE TABLE mysql.slow_log"
	fi
}

# server_times ENGINE: "label<TAB>seconds" for each statement of the suite
# the server logged since server_mark, in the order run. A statement is
# told by its text (its trailing ; and blanks aside): the tools' other
# statements (settings, dbmark's checks of the relations) are left out.
# PostgreSQL's duration is that of the simple protocol's one message,
# which both tools use: from the statement's arrival to its last row
# handed to the socket.
server_times() {
	local map=$OUT/$1-stmts.tsv
	if [[ $1 == postgres ]]; then
		tail -c "+$((MARK + 1))" "$PG_LOG" |
			awk -F'\t' -v map="$map" "$(<"$ROOT/bench/stmts.awk")"'
			match($0, /LOG:  duration: [0-9.]+ ms  statement: /) {
				head = substr($0, RSTART, RLENGTH); split(head, h, " ")
				l = lookup(substr($0, RSTART + RLENGTH))
				if (l != "") printf "%s\t%.6f\n", l, h[3] / 1000
			}'
	else
		# The slow log's row is written after the reply is sent: a run's
		# last one may follow the tool's exit by a moment.
		my_client -N -B -e "SELECT TIME_TO_SEC(query_time), sql_text FROM mysql.slow_log WHERE db = '$QDB' ORDER BY start_time, thread_id" |
			awk -F'\t' -v map="$map" "$(<"$ROOT/bench/stmts.awk")"'
			{ l = lookup(substr($0, length($1) + 2)); if (l != "") printf "%s\t%.6f\n", l, $1 }'
	fi
}

# attach_server ENGINE RUNTSV: RUNTSV's lines (one run's, of the query
# part) to the TSV, each with the server's time for the same execution:
# the k-th execution of a statement by the run is the k-th the server
# logged.
attach_server() {
	local engine=$1 run=$2 st=$OUT/server.times try
	if ! ((SERVER_TIME)); then
		awk -v OFS='\t' '{ print $0, "-" }' "$run" >>"$RESULTS_TSV"
		return
	fi
	for try in 1 2 3 4 5; do
		server_times "$engine" >"$st"
		[[ $(wc -l <"$st") -lt $(grep -c '^queries' "$run") ]] || break
		sleep 0.2
	done
	awk -F'\t' -v OFS='\t' -v e="$engine" -v map="$OUT/$engine-stmts.tsv" "$(<"$ROOT/bench/stmts.awk")"'
		NR == FNR { s[$1, ++n[$1]] = $2; next }
		$1 == "queries" {
			l = canon[$5]; k = ++used[l]
			if (!((l, k) in s)) { print "bench: ERROR: " e ": the server logged " n[l] + 0 " runs of " l "'"'"'s statement, fewer than the tool ran" > "/dev/stderr"; bad = 1; exit }
			print $0, s[l, k]; next
		}
		{ print $0, "-" }
		END { if (bad) exit 1; for (l in n) if (n[l] != used[l]) { print "bench: ERROR: " e ": the server logged " n[l] " runs of " l ", the tool " used[l] + 0 > "/dev/stderr"; exit 1 } }
	' "$st" "$run" >>"$RESULTS_TSV" || die "$engine: the server's log does not match the run's statements (log: $st, run: $run)"
}

# ------------------------------------------------------------ queries

# labels: every query's label, from a run of the suite on a small SQLite
# database (the labels are the same on every engine).
labels() {
	local db=$OUT/labels.db
	rm -f "$db"
	{
		"$DBMARK" prepare wisconsin --scale 1000 --target "sqlite://$db" -q &&
			"$DBMARK" run wisconsin --scale 1000 --iterations 1 --target "sqlite://$db" --no-store -q --json "$OUT/labels.json"
	} >"$OUT/labels.log" 2>&1 || die "the suite's labels: dbmark failed on SQLite (log: $OUT/labels.log)"
	jq -r '.queries.list[].label' "$OUT/labels.json"
}

# run_dbmark ENGINE URL ROUND ONLY [TAG]: one run of the queries ONLY by
# dbmark; its runs' times, and its CPU, go to the TSV.
run_dbmark() {
	local engine=$1 url=$2 round=$3 only=$4 json=$OUT/$1-$3-${5:-suite}-dbmark.json rc=0
	server_mark "$engine"
	timed "$json.time" "$DBMARK" run wisconsin --target "$url" --scale "$SCALE" --iterations "$ITERATIONS" --only "$only" \
		--no-store -q --json "$json" >"${json%.json}.log" 2>&1 || rc=$?
	((rc == 0)) && [[ $(jq -r .status "$json") == ok ]] || {
		tail -5 "${json%.json}.log" >&2
		die "dbmark run wisconsin on $engine failed (exit $rc; log: ${json%.json}.log)"
	}
	# The runs in the order they ran: a query's iterations in a row, the
	# queries in the suite's order (one stream).
	jq -r --arg e "$engine" --arg r "$round" '.queries.list[] | .label as $l | .runs[] |
		["queries", $e, "dbmark", $r, $l, .iteration, .s] | @tsv' "$json" >"$OUT/run.tsv"
	attach_server "$engine" "$OUT/run.tsv"
	tsv cpu "$engine" dbmark "$round" - - "$(time_of "$json.time" | cut -d' ' -f2)" -
}

# client_script ENGINE JSON FILE: the client's script: each query of
# dbmark's run (its label and statement in JSON) ITERATIONS times in a
# row, in the suite's order; FILE.labels gets one label per statement;
# FILE.d/LABEL (and .labels) is the same for each query alone.
client_script() {
	local engine=$1 json=$2 file=$3 i
	: >"$file.labels"
	if [[ $engine == postgres ]]; then
		# \timing's "Time:" goes to stdout, the rows to /dev/null.
		printf '\\timing on\n\\o /dev/null\n' >"$file"
	else
		: >"$file"
	fi
	mkdir -p "$file.d"
	while IFS=$'\t' read -r label sql; do
		head -n "$([[ $engine == postgres ]] && echo 2 || echo 0)" "$file" >"$file.d/$label"
		: >"$file.d/$label.labels"
		for ((i = 1; i <= ITERATIONS; i++)); do
			printf '%s;\n' "$sql" | tee -a "$file" >>"$file.d/$label"
			echo "$label" | tee -a "$file.labels" >>"$file.d/$label.labels"
		done
	done < <(jq -r '.queries.list[] | [.label, .sql] | @tsv' "$json")
}

# run_client ENGINE DB ROUND SCRIPT [TAG]: one run of the script by the
# engine's client; each statement's time, as the client prints it, goes to
# the TSV. psql prints milliseconds to the microsecond; the mariadb
# client seconds to the millisecond.
run_client() {
	local engine=$1 db=$2 round=$3 file=$4 log=$OUT/$1-$3-${5:-suite}-client.log times=$OUT/$1-$3-${5:-suite}-client.times
	server_mark "$engine"
	if [[ $engine == postgres ]]; then
		timed "$log.time" "${PSQL[@]}" -d "$db" -f "$file" >"$log" 2>&1 || {
			tail -5 "$log" >&2
			die "psql failed on the suite (log: $log)"
		}
		awk '/^Time: / { printf "%.6f\n", $2 / 1000 }' "$log" >"$times"
	else
		# -vvv prints "N rows in set (0.012 sec)" or "Query OK, ... (0.001
		# sec)" after each statement; batch mode, so rows are not boxed.
		timed "$log.time" "${MYSQL[@]}" -D "$db" -B -vvv <"$file" >"$log" 2>&1 || {
			tail -5 "$log" >&2
			die "the mariadb client failed on the suite (log: $log)"
		}
		grep -oE '\([0-9]+\.[0-9]+ sec\)$' "$log" | tr -d '()' | awk '{ print $1 }' >"$times"
	fi
	local want got
	want=$(wc -l <"$file.labels")
	got=$(wc -l <"$times")
	((want == got)) || die "$engine client: $got statement times in $log, want $want (one per statement)"
	paste "$file.labels" "$times" | awk -F'\t' -v e="$engine" -v r="$round" -v OFS='\t' '
		$1 != last { it = 0; last = $1 } { print "queries", e, "client", r, $1, ++it, $2 }' >"$OUT/run.tsv"
	attach_server "$engine" "$OUT/run.tsv"
	tsv cpu "$engine" client "$round" - - "$(time_of "$log.time" | cut -d' ' -f2)" -
}

queries_engine() {
	local engine=$1 url only skip=() l r
	case $engine in
	postgres)
		pg_client -d "$DBMARK_TEST_PG_DB" -c "CREATE DATABASE $QDB"
		url=$(with_db "$DBMARK_TEST_POSTGRES" "$QDB")
		;;
	mariadb)
		my_client -e "CREATE DATABASE $QDB"
		url=$(with_db "$DBMARK_TEST_MYSQL" "$QDB")
		read -ra skip <<<"$MY_SKIP"
		;;
	esac
	only=
	for l in $ALL_LABELS; do
		[[ " ${skip[*]} " == *" $l "* ]] || only+=${only:+,}$l
	done
	log "$engine: dbmark prepare wisconsin --scale $SCALE"
	"$DBMARK" prepare wisconsin --target "$url" --scale "$SCALE" -q >"$OUT/$engine-prepare.log" 2>&1 ||
		die "prepare on $engine failed (log: $OUT/$engine-prepare.log)"
	if ((SERVER_TIME)); then
		# Logged from here on, for the runs' new connections only.
		if [[ $engine == postgres ]]; then
			pg_client -d "$DBMARK_TEST_PG_DB" -c "ALTER DATABASE $QDB SET log_min_duration_statement = 0"
		else
			my_log_on
		fi
	fi
	# The warm-up: dbmark once, whose statements become the client's script.
	log "$engine: warm-up (dbmark once, discarded)"
	"$DBMARK" run wisconsin --target "$url" --scale "$SCALE" --iterations 1 --only "$only" --no-store -q \
		--json "$OUT/$engine-warmup.json" >"$OUT/$engine-warmup.log" 2>&1 ||
		die "dbmark run wisconsin on $engine failed (log: $OUT/$engine-warmup.log)"
	jq -r '.queries.list[] | [.label, .sql] | @tsv' "$OUT/$engine-warmup.json" >"$OUT/$engine-stmts.tsv"
	client_script "$engine" "$OUT/$engine-warmup.json" "$OUT/$engine-suite.sql"
	local q i
	for ((r = 1; r <= ROUNDS; r++)); do
		log "$engine: round $r/$ROUNDS"
		if [[ $ORDER == suite ]]; then
			if ((r % 2)); then
				run_client "$engine" "$QDB" "$r" "$OUT/$engine-suite.sql"
				run_dbmark "$engine" "$url" "$r" "$only"
			else
				run_dbmark "$engine" "$url" "$r" "$only"
				run_client "$engine" "$QDB" "$r" "$OUT/$engine-suite.sql"
			fi
			continue
		fi
		i=0
		for q in ${only//,/ }; do
			i=$((i + 1))
			if (((r + i) % 2)); then
				run_client "$engine" "$QDB" "$r" "$OUT/$engine-suite.sql.d/$q" "$q"
				run_dbmark "$engine" "$url" "$r" "$q" "$q"
			else
				run_dbmark "$engine" "$url" "$r" "$q" "$q"
				run_client "$engine" "$QDB" "$r" "$OUT/$engine-suite.sql.d/$q" "$q"
			fi
		done
	done
	if [[ $engine == mariadb ]]; then
		my_log_restore
		my_client -e "DROP DATABASE $QDB"
	else
		pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE $QDB WITH (FORCE)"
	fi
}

# ------------------------------------------------------------ load

# timed_step ENGINE ROUND TOOL CMD...: CMD under GNU time (its input
# TIMED_IN, if set), its wall time to the TSV.
timed_step() {
	local engine=$1 round=$2 tool=$3 tf=$OUT/load-$1-$2-$3.time log=$OUT/load-$1-$2-$3.log
	shift 3
	timed "$tf" "$@" <"${TIMED_IN:-/dev/null}" >"$log" 2>&1 || {
		tail -5 "$log" >&2
		die "load on $engine round $round, $tool failed (log: $log)"
	}
	tsv load "$engine" "$tool" "$round" - - "$(tail -n 1 "$tf" | awk '{ print $1 }')" -
}

load_dbmark() {
	local engine=$1 round=$2 url=$3
	"$DBMARK" cleanup wisconsin --target "$url" -q >/dev/null
	[[ $engine == mariadb ]] || pg_client -d "$LDB" -c CHECKPOINT
	log "$engine load round $round: dbmark prepare wisconsin --scale $LOAD_SCALE --threads $LOAD_THREADS"
	timed_step "$engine" "$round" dbmark "$DBMARK" prepare wisconsin --target "$url" --scale "$LOAD_SCALE" --threads "$LOAD_THREADS" -q
}

# load_copy ENGINE ROUND: the same rows into the same tables (like dbmark's,
# which are there: dbmark loads first in round 1 and each round leaves
# them), in a schema (MariaDB: a database) of its own dropped after.
load_copy() {
	local engine=$1 round=$2
	if [[ $engine == postgres ]]; then
		pg_client -d "$LDB" -c "DROP SCHEMA IF EXISTS copypeer CASCADE" -c "CREATE SCHEMA copypeer" -f "$OUT/$engine-copy-ddl.sql"
		pg_client -d "$LDB" -c CHECKPOINT
		log "$engine load round $round: COPY of the same rows, then the prepare's other steps"
		timed_step "$engine" "$round" copy "${PSQL[@]}" -d "$LDB" -f "$OUT/$engine-copy-rows.sql"
		timed_step "$engine" "$round" finish "${PSQL[@]}" -d "$LDB" -f "$OUT/$engine-copy-finish.sql"
		pg_client -d "$LDB" -c "DROP SCHEMA copypeer CASCADE"
		return
	fi
	my_client -e "DROP DATABASE IF EXISTS ${LDB}_copy; CREATE DATABASE ${LDB}_copy"
	my_client -D "${LDB}_copy" <"$OUT/$engine-copy-ddl.sql"
	log "$engine load round $round: LOAD DATA LOCAL INFILE of the same rows, then the prepare's other steps"
	TIMED_IN=$OUT/$engine-copy-rows.sql timed_step "$engine" "$round" copy "${MYSQL[@]}" --local-infile=1 -D "${LDB}_copy"
	TIMED_IN=$OUT/$engine-copy-finish.sql timed_step "$engine" "$round" finish "${MYSQL[@]}" -D "${LDB}_copy"
	# The same rows as dbmark's tables, or the comparison is void.
	local t want got
	for t in onektup tenktup1 tenktup2 bprime onektup_noindex tenktup1_noindex tenktup2_noindex bprime_noindex; do
		want=$(my_client -N -B -e "CHECKSUM TABLE $LDB.$t" | cut -f2)
		got=$(my_client -N -B -e "CHECKSUM TABLE ${LDB}_copy.$t" | cut -f2)
		[[ $want == "$got" ]] || die "LOAD DATA's $t differs from dbmark's (CHECKSUM TABLE $got, want $want)"
	done
	my_client -e "DROP DATABASE ${LDB}_copy"
}

# copy_scripts ENGINE: the rows of dbmark's generated relations dumped to
# files (both copies hold the same rows), and the client's scripts that
# make the tables (ENGINE-copy-ddl.sql), load them (-rows) and take the
# prepare's other steps (-finish).
copy_scripts() {
	local e=$1 t s q=
	for t in onektup tenktup1 tenktup2; do
		if [[ $e == postgres ]]; then
			pg_client -d "$LDB" -c "\\copy $t TO '$OUT/$t.rows'"
		else
			# Batch mode writes what LOAD DATA's defaults read: tabs, \n,
			# backslash escapes (the relations hold no NULL).
			my_client -N -B --quick -D "$LDB" -e "SELECT * FROM $t" >"$OUT/$t.rows"
		fi
	done
	[[ $e == mariadb ]] || q=copypeer.
	: >"$OUT/$e-copy-ddl.sql"
	: >"$OUT/$e-copy-rows.sql"
	for t in onektup tenktup1 tenktup2 bprime; do
		for s in "" _noindex; do
			if [[ $e == postgres ]]; then
				echo "CREATE TABLE $q$t$s (LIKE public.$t$s INCLUDING DEFAULTS INCLUDING CONSTRAINTS);"
				[[ -n $s ]] || echo "ALTER TABLE $q$t ADD PRIMARY KEY (unique2);"
			else
				echo "CREATE TABLE $t$s LIKE $LDB.$t$s;"
				[[ -n $s ]] || echo "ALTER TABLE $t DROP INDEX ${t}_unique1;"
			fi >>"$OUT/$e-copy-ddl.sql"
			[[ $t == bprime ]] && continue
			if [[ $e == postgres ]]; then
				echo "\\copy $q$t$s FROM '$OUT/$t.rows'"
			else
				echo "LOAD DATA LOCAL INFILE '$OUT/$t.rows' INTO TABLE $t$s;"
			fi >>"$OUT/$e-copy-rows.sql"
		done
	done
	{
		for s in "" _noindex; do echo "INSERT INTO ${q}bprime$s SELECT * FROM ${q}tenktup2$s WHERE unique2 < $((LOAD_SCALE / 10));"; done
		for t in onektup tenktup1 tenktup2 bprime; do echo "CREATE INDEX ${t}_unique1 ON $q$t (unique1);"; done
		for t in onektup tenktup1 tenktup2 bprime; do
			for s in "" _noindex; do echo "$([[ $e == postgres ]] && echo VACUUM ANALYZE || echo ANALYZE TABLE) $q$t$s;"; done
		done
	} >"$OUT/$e-copy-finish.sql"
}

# load_part ENGINE: the rounds of the load part on ENGINE.
load_part() {
	local engine=$1 url r
	if [[ $engine == postgres ]]; then
		pg_client -d "$DBMARK_TEST_PG_DB" -c "CREATE DATABASE $LDB"
		url=$(with_db "$DBMARK_TEST_POSTGRES" "$LDB")
	else
		[[ $(my_client -N -B -e "SELECT @@local_infile") == 1 ]] ||
			die "MariaDB's local_infile is off: LOAD DATA LOCAL INFILE cannot be the peer (SET GLOBAL local_infile = 1)"
		my_client -e "CREATE DATABASE $LDB"
		url=$(with_db "$DBMARK_TEST_MYSQL" "$LDB")
	fi
	rm -f "$OUT"/*.rows
	for ((r = 1; r <= ROUNDS; r++)); do
		if ((r % 2)); then
			load_dbmark "$engine" "$r" "$url"
			[[ -s $OUT/onektup.rows ]] || copy_scripts "$engine"
			load_copy "$engine" "$r"
		else
			load_copy "$engine" "$r"
			load_dbmark "$engine" "$r" "$url"
		fi
	done
	if [[ $engine == postgres ]]; then
		pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE $LDB WITH (FORCE)"
	else
		my_client -e "DROP DATABASE $LDB"
	fi
	rm -f "$OUT"/*.rows
}

# ------------------------------------------------------------ summary

summary_queries() {
	echo "| engine | query | client ms | dbmark ms | ratio | ratio by round | hot: client ms | dbmark ms | ratio |"
	echo "|---|---|---:|---:|---:|---|---:|---:|---:|"
	awk -F'\t' -v order="$ORDER" "$(<"$ROOT/bench/medians.awk")"'
	$1 == "cpu" { cpu[$2, $3, $4] += $7; if (!(($2, $3) in cseen)) { cseen[$2, $3] = 1; ct[++nct] = $2 SUBSEP $3 }; next }
	$1 != "queries" { next }
	{
		k = $2 SUBSEP $5
		if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		if (!(($2, $4) in rseen)) { rseen[$2, $4] = 1; rounds[$2] = rounds[$2] " " $4 }
		add(S, k SUBSEP $4 SUBSEP $3, $7)
	}
	END {
		for (i = 1; i <= nk; i++) {
			k = keys[i]; split(k, kk, SUBSEP); e = kk[1]
			n = split(rounds[e], rs, " ")
			by = ""; R = ""; C = ""; D = ""; HR = ""; HC = ""; HD = ""
			for (j = 1; j <= n; j++) {
				c = k SUBSEP rs[j] SUBSEP "client"; d = k SUBSEP rs[j] SUBSEP "dbmark"
				if (!(c in S) || !(d in S)) continue
				mc = median(S[c]); md = median(S[d])
				C = C " " mc; D = D " " md
				if (mc > 0) { r = md / mc; R = R " " r; by = by (by == "" ? "" : ", ") sprintf("%.3f", r) }
				hc = least(S[c]); hd = least(S[d]); HC = HC " " hc; HD = HD " " hd
				if (hc > 0) HR = HR " " hd / hc
			}
			if (C == "") continue
			ms = median(C) * 1000
			printf "| %s | %s | %.3f | %.3f | %s | %s | %.3f | %.3f | %s |\n", e, kk[2], ms, median(D) * 1000,
				R == "" ? "n/a" : sprintf("%.3f", median(R)), by, median(HC) * 1000, median(HD) * 1000, HR == "" ? "n/a" : sprintf("%.3f", median(HR))
			if (R != "" && HR != "" && ms >= 10) {
				big[e]++
				if (median(R) <= 1.02) ok[e]++
				if (median(HR) <= 1.02) hok[e]++
				lg[e] += log(median(R)); hlg[e] += log(median(HR))
			}
		}
		print ""
		for (e in big)
			printf "%s, queries of 10 ms or more: %d of %d within 2%% by the median (geometric mean of ratios %.3f), %d by the hot time (%.3f)\n",
				e, ok[e] + 0, big[e], exp(lg[e] / big[e]), hok[e] + 0, exp(hlg[e] / big[e])
		for (i = 1; i <= nct; i++) {
			split(ct[i], kk, SUBSEP); l = ""
			for (k in cpu) { split(k, kc, SUBSEP); if (kc[1] == kk[1] && kc[2] == kk[2]) l = l " " cpu[k] }
			printf "%s: %s CPU per round, user + system, median over rounds: %.2f s%s\n", kk[1],
				kk[2] == "client" ? (kk[1] == "postgres" ? "psql" : "mariadb client") : "dbmark", median(l),
				order == "query" ? " (a process per query: its start and connection included)" : ""
		}
	}
	# least LIST: the smallest of the numbers in LIST.
	function least(list,    a, n, i, m) {
		n = split(list, a, " "); m = a[1] + 0
		for (i = 2; i <= n; i++) if (a[i] + 0 < m) m = a[i] + 0
		return m
	}' "$RESULTS_TSV"
}

# summary_overhead: per query, each tool's overhead (its time for an
# execution minus the server's logged time for the same execution) over
# the tool's executions, and the ratio the server's spread does not
# reach: (S + dbmark's overhead) / (S + the client's), S the median of the
# server's time over both tools' executions. Twice: with the median
# overheads, and with their lower quartiles. A wait for a CPU between the
# reply's arrival and the tool's reading it only adds to an overhead; on
# a loaded machine it is in many executions of both tools, and the lower
# quartile leaves it out. A query counts as one of 10 ms or more when S
# + the client's median overhead is.
summary_overhead() {
	echo "| engine | query | server ms | server ms: client / dbmark runs | overhead ms, median: client | dbmark | ratio | ratio by round | overhead ms, lower quartile: client | dbmark | ratio |"
	echo "|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|"
	awk -F'\t' "$(<"$ROOT/bench/medians.awk")"'
	$1 != "queries" || $8 == "" || $8 == "-" { next }
	{
		k = $2 SUBSEP $5
		if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		if (!(($2, $4) in rseen)) { rseen[$2, $4] = 1; rounds[$2] = rounds[$2] " " $4 }
		add(S, k, $8); add(ST, k SUBSEP $3, $8)
		add(O, k SUBSEP $3, $7 - $8); add(OR, k SUBSEP $3 SUBSEP $4, $7 - $8)
	}
	END {
		for (i = 1; i <= nk; i++) {
			k = keys[i]; split(k, kk, SUBSEP); e = kk[1]
			if (!((k, "client") in O) || !((k, "dbmark") in O)) continue
			s = median(S[k]); oc = median(O[k, "client"]); od = median(O[k, "dbmark"])
			qc = quartile(O[k, "client"]); qd = quartile(O[k, "dbmark"])
			r = ratio(s + od, s + oc); rq = ratio(s + qd, s + qc)
			n = split(rounds[e], rs, " "); by = ""
			for (j = 1; j <= n; j++) {
				c = k SUBSEP "client" SUBSEP rs[j]; d = k SUBSEP "dbmark" SUBSEP rs[j]
				if ((c in OR) && (d in OR))
					by = by (by == "" ? "" : ", ") ratio(s + median(OR[d]), s + median(OR[c]))
			}
			printf "| %s | %s | %.3f | %.3f / %.3f | %.3f | %.3f | %s | %s | %.3f | %.3f | %s |\n", e, kk[2], s * 1000,
				median(ST[k, "client"]) * 1000, median(ST[k, "dbmark"]) * 1000, oc * 1000, od * 1000, r, by, qc * 1000, qd * 1000, rq
			if ((s + oc) * 1000 >= 10 && r != "n/a" && rq != "n/a") {
				big[e]++; lg[e] += log(r); lgq[e] += log(rq)
				if (r <= 1.02) ok[e]++
				if (rq <= 1.02) okq[e]++
				if (!(e in worst) || r > worst[e]) { worst[e] = r; wq[e] = kk[2] }
				if (!(e in worstq) || rq > worstq[e]) { worstq[e] = rq; wqq[e] = kk[2] }
			}
		}
		print ""
		for (e in big)
			printf "%s, queries of 10 ms or more: within 2%% (ratio <= 1.02) %d of %d by the median overheads (geometric mean %.4f, highest %.4f, %s), %d by the lower quartiles (%.4f, highest %.4f, %s)\n",
				e, ok[e] + 0, big[e], exp(lg[e] / big[e]), worst[e], wq[e], okq[e] + 0, exp(lgq[e] / big[e]), worstq[e], wqq[e]
	}
	# ratio A B: A / B to 4 places, or n/a when B is not above 0 (the
	# mariadb client rounds its time to the ms: under a ms query, its
	# time minus the server time can be below 0).
	function ratio(a, b) { return b > 0 ? sprintf("%.4f", a / b) : "n/a" }
	# quartile LIST: the lower quartile of the numbers in LIST (the median
	# of its lower half, the middle one left out).
	function quartile(list,    a, n, i, j, t, h) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j] + 0 < a[j-1] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		h = int(n / 2)
		if (h == 0) return a[1]
		return h % 2 ? a[(h + 1) / 2] : (a[h / 2] + a[h / 2 + 1]) / 2
	}' "$RESULTS_TSV"
}

summary_load() {
	echo "| engine | rows | COPY / LOAD DATA s | + the other steps s | dbmark prepare s | ratio to COPY / LOAD DATA | ratio to it + steps | ratio by round |"
	echo "|---|---|---:|---:|---:|---:|---:|---|"
	awk -F'\t' -v scale="$LOAD_SCALE" -v threads="$LOAD_THREADS" "$(<"$ROOT/bench/medians.awk")"'
	$1 != "load" { next }
	{
		t[$2, $4, $3] = $7
		if (!(($2, $4) in rs)) { rs[$2, $4] = 1; order[++n] = $2 SUBSEP $4 }
		if (!($2 in es)) { es[$2] = 1; eng[++ne] = $2 }
	}
	END {
		for (k = 1; k <= ne; k++) {
			e = eng[k]; by = ""; delete C; delete R
			for (i = 1; i <= n; i++) {
				split(order[i], er, SUBSEP)
				if (er[1] != e) continue
				r = order[i]
				if (!((r, "copy") in t) || !((r, "dbmark") in t)) continue
				c = t[r, "copy"]; f = c + t[r, "finish"]; d = t[r, "dbmark"]
				add(C, "c", c); add(C, "f", f); add(C, "d", d)
				add(R, "c", d / c); add(R, "f", d / f)
				by = by (by == "" ? "" : ", ") sprintf("%.3f", d / c)
			}
			if (by == "") continue
			printf "| %s | %d x 4.2 (both copies, %d loader%s) | %.1f | %.1f | %.1f | %.3f | %.3f | %s |\n", e, scale, threads, (threads > 1 ? "s" : ""),
				median(C["c"]), median(C["f"]), median(C["d"]), median(R["c"]), median(R["f"]), by
		}
	}' "$RESULTS_TSV"
}

# ------------------------------------------------------------ main

# summaries: the tables of the parts that are in RESULTS_TSV.
summaries() {
	if grep -q '^queries' "$RESULTS_TSV"; then
		summary_queries
		if awk -F'\t' '$1 == "queries" && $8 != "" && $8 != "-" { found = 1; exit } END { exit !found }' "$RESULTS_TSV"; then
			echo
			echo "Server time taken out: a tool's overhead in an execution is its time minus the time the server logged for that execution."
			echo
			summary_overhead
		fi
	fi
	if grep -q '^load' "$RESULTS_TSV"; then
		if grep -q '^queries' "$RESULTS_TSV"; then echo; fi
		summary_load
	fi
}

if [[ -n $SUMMARY_FILE ]]; then
	RESULTS_TSV=$SUMMARY_FILE
	summaries
	exit 0
fi

# The machine's load, every 30 s while the parts run (other work on the
# machine delays both tools; the header says how much there was).
(while :; do
	cut -d' ' -f1 /proc/loadavg
	sleep 30
done) >"$OUT/loadavg" &
LOAD_SAMPLER=$!

if [[ " $PARTS " == *" queries "* ]]; then
	ALL_LABELS=$(labels)
	for e in $ENGINES; do queries_engine "$e"; done
fi
if [[ " $PARTS " == *" load "* ]]; then
	for e in $LOAD_ENGINES; do load_part "$e"; done
fi
kill "$LOAD_SAMPLER"

{
	cat <<EOF
# dbmark vs psql, the mariadb client and COPY / LOAD DATA (Wisconsin)

$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -r), load average (1 min) during the run, every 30 s: $(sort -n "$OUT/loadavg" | awk '{ a[NR] = $1 } END { printf "min %s, median %s, max %s", a[1], a[int((NR + 1) / 2)], a[NR] }');
$("$DBMARK" version); $(psql --version)$(command -v mariadb >/dev/null && echo "; $(mariadb --version)").
$([[ " $PARTS " != *" queries "* ]] || echo "Queries: scale $SCALE on ${ENGINES// /, }, $ITERATIONS iterations per tool and round, $ROUNDS rounds, BENCH_ORDER=$ORDER, over TCP; skipped on MariaDB: ${MY_SKIP:-none}; server time: $( ((SERVER_TIME)) && echo "from the servers' logs" || echo "not measured").")$([[ " $PARTS " != *" load "* ]] || echo "
Load: scale $LOAD_SCALE on ${LOAD_ENGINES// /, }, $ROUNDS rounds, dbmark --threads $LOAD_THREADS.") Raw figures: $(basename "$RESULTS_TSV").

EOF
	summaries
} | tee "$RESULTS_MD"
log "raw figures: $RESULTS_TSV; logs: $OUT"
