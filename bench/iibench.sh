#!/usr/bin/env bash
# bench/iibench.sh: dbmark's iibench inserts against the same INSERT driven by
# pgbench (PostgreSQL, a custom script) and by sysbench (MariaDB, the Lua
# script bench/iibench-insert.lua), run alternately; prints every round and
# the median ratio of rows per second (dbmark / peer). On MariaDB it also
# runs sysbench's own bulk_insert, whose statements differ, for reference. Then, with BENCH_LOAD_ROWS,
# an iibench load with 3 secondary indexes on each engine, its inserts per
# second by rows and dbmark's peak RSS. See bench/README.md.
#
#   bash bench/iibench.sh            # needs the test servers: scripts/testenv.sh start
#
# Settings (environment):
#   BENCH_TIME=60          seconds per measured run
#   BENCH_ROUNDS=3         measured runs per tool and engine
#   BENCH_INSERTERS=4      client connections inserting
#   BENCH_ROWS=100         rows per INSERT statement
#   BENCH_ENGINES="postgres mariadb"
#   BENCH_MATCHED_ROWS=30000  on MariaDB, also sysbench's bulk_insert against dbmark with about
#                          as many rows per INSERT as its 512 KiB statements and no padding (0: skip)
#   BENCH_LOAD_ROWS=0      rows of the load with 3 secondary indexes (0: skip it)
#   BENCH_LOAD_TIME=15m    time limit of that load
#   BENCH_LOAD_INSERTERS=4 and BENCH_LOAD_BATCH=1000 (rows per INSERT) for it
#   BENCH_LOAD_MY_POOL=    InnoDB buffer pool for MariaDB's load (e.g. 4G; needs root over the
#                          test server's socket; put back afterwards). Default: the server's own
#   BENCH_LOAD_MY_LOG=     InnoDB redo log size for it, the same way (e.g. 2G; the test server's is
#                          96 MiB, which keeps InnoDB flushing pages to stay within it)
#   BENCH_DB=dbmark_iibench_bench  database created and dropped on each engine
#   BENCH_OUT=DIR          where the raw logs go (default: a new /tmp/dbmark-iibench.XXXXXX)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TIME_S=${BENCH_TIME:-60}
ROUNDS=${BENCH_ROUNDS:-3}
INSERTERS=${BENCH_INSERTERS:-4}
ROWS=${BENCH_ROWS:-100}
ENGINES=${BENCH_ENGINES:-postgres mariadb}
MATCHED_ROWS=${BENCH_MATCHED_ROWS:-30000}
LOAD_ROWS=${BENCH_LOAD_ROWS:-0}
LOAD_TIME=${BENCH_LOAD_TIME:-15m}
LOAD_INSERTERS=${BENCH_LOAD_INSERTERS:-4}
LOAD_BATCH=${BENCH_LOAD_BATCH:-1000}
LOAD_MY_POOL=${BENCH_LOAD_MY_POOL:-}
LOAD_MY_LOG=${BENCH_LOAD_MY_LOG:-}
DB=${BENCH_DB:-dbmark_iibench_bench}
GNU_TIME=/usr/bin/time
DBMARK=$ROOT/bin/dbmark

log() { echo "bench: $*" >&2; }
die() { echo "bench: ERROR: $*" >&2; exit 1; }

[[ $ROUNDS =~ ^[0-9]+$ ]] || die "BENCH_ROUNDS=$ROUNDS: not a whole number (0: only the load)"
for v in TIME_S INSERTERS ROWS LOAD_INSERTERS LOAD_BATCH; do
	[[ ${!v} =~ ^[0-9]+$ ]] && ((${!v} > 0)) || die "$v=${!v}: not a positive whole number"
done
[[ $DB =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB=$DB: use lower-case letters, digits and _"
for c in pgbench sysbench jq psql mariadb; do command -v $c >/dev/null || die "$c is missing"; done
"$GNU_TIME" --version 2>&1 | grep -q GNU || die "GNU time is missing (apt-get install time)"

eval "$(bash scripts/testenv.sh env)"
OUT=${BENCH_OUT:-$(mktemp -d /tmp/dbmark-iibench.XXXXXX)}
mkdir -p "$OUT"
log "raw logs in $OUT"
make -s build

my_client() {
	mariadb --no-defaults --protocol=TCP -h "$DBMARK_TEST_MY_HOST" -P "$DBMARK_TEST_MY_PORT" \
		-u "$DBMARK_TEST_MY_USER" -p"$DBMARK_TEST_MY_PASSWORD" -N -B "$@"
}
pg_client() {
	PGPASSWORD=$DBMARK_TEST_PG_PASSWORD PGOPTIONS="-c client_min_messages=warning" psql -X -q -tA -v ON_ERROR_STOP=1 \
		-h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" -U "$DBMARK_TEST_PG_USER" "$@"
}
with_db() { local u=${1%%\?*} q=; [[ $1 == *\?* ]] && q="?${1#*\?}"; echo "${u%/*}/$2$q"; }

drop_db() {
	case $1 in
	mariadb) my_client -e "DROP DATABASE IF EXISTS $DB" ;;
	postgres) pg_client -d "$DBMARK_TEST_PG_DB" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" ;;
	esac
}
trap 'for e in $ENGINES; do drop_db $e || true; done' EXIT
for e in $ENGINES; do
	drop_db $e
	case $e in
	mariadb) my_client -e "CREATE DATABASE $DB" ;;
	postgres) pg_client -d "$DBMARK_TEST_PG_DB" -c "CREATE DATABASE $DB" ;;
	*) die "unknown engine $e (postgres mariadb)" ;;
	esac
done

url_of() {
	case $1 in
	mariadb) with_db "$DBMARK_TEST_MYSQL" "$DB" ;;
	postgres) with_db "$DBMARK_TEST_POSTGRES" "$DB" ;;
	esac
}

# The pgbench script: one INSERT of $ROWS rows with iibench's columns and
# ranges (the newer benchmark's integer price), values drawn by pgbench, the
# padding 10 characters of which 5 vary, as dbmark's --data-random-pct 50.
script=$OUT/insert.sql
{
	vals=()
	for ((i = 1; i <= ROWS; i++)); do
		echo "\\set c$i random(0, 999)"
		echo "\\set u$i random(0, 99999)"
		echo "\\set p$i random(0, 9999)"
		echo "\\set m$i random(0, 499)"
		echo "\\set d$i random(10000, 99999)"
		vals+=("('2024-01-01 00:00:00', :c$i, :u$i, :p$i, :m$i, 'aaaaa:d$i')")
	done
	printf 'INSERT INTO purchases_index (dateandtime, cashregisterid, customerid, productid, price, data) VALUES %s;\n' "$(IFS=,; echo "${vals[*]}")"
} >"$script"

pg_table() {
	pg_client -d "$DB" -c "DROP TABLE IF EXISTS purchases_index" -c "CREATE TABLE purchases_index (transactionid BIGSERIAL,
		dateandtime TIMESTAMP, cashregisterid INT NOT NULL, customerid INT NOT NULL, productid INT NOT NULL,
		price INT NOT NULL, data VARCHAR(4000), PRIMARY KEY (transactionid))"
}

# run_dbmark ENGINE ROUND [ROWS [EXTRA...]]: prints rows/s.
run_dbmark() {
	local e=$1 r=$2 rows=${3:-$ROWS} log=$OUT/dbmark-$1-$2-${3:-$ROWS}
	shift $(($# < 3 ? $# : 3))
	"$GNU_TIME" -f "%e %U %S %M" -o "$log.time" "$DBMARK" run iibench --target "$(url_of "$e")" --recreate \
		--inserters "$INSERTERS" --rows-per-insert "$rows" --secondary-indexes 0 --index-style new \
		--time "$TIME_S" --no-store --json "$log.json" "$@" >"$log.out" 2>&1
	jq -r '.rows.per_s' "$log.json"
}

# run_peer ENGINE ROUND: pgbench or sysbench bulk_insert; prints rows/s.
run_peer() {
	local log=$OUT/peer-$1-$2
	case $1 in
	postgres)
		pg_table
		PGPASSWORD=$DBMARK_TEST_PG_PASSWORD "$GNU_TIME" -f "%e %U %S %M" -o "$log.time" pgbench -n -f "$script" \
			-c "$INSERTERS" -j "$INSERTERS" -T "$TIME_S" -h "$DBMARK_TEST_PG_HOST" -p "$DBMARK_TEST_PG_PORT" \
			-U "$DBMARK_TEST_PG_USER" "$DB" >"$log.out" 2>&1
		awk -v r="$ROWS" '/^tps = / { printf "%.1f\n", $3 * r }' "$log.out"
		;;
	mariadb)
		# The same table as dbmark's (made by dbmark), the same INSERT, from sysbench.
		"$DBMARK" run iibench --target "$(url_of mariadb)" --recreate --secondary-indexes 0 --index-style new \
			--inserters 1 --rows-per-insert 1 --max-rows 1 --no-store -q >/dev/null
		"$GNU_TIME" -f "%e %U %S %M" -o "$log.time" sysbench "$ROOT/bench/iibench-insert.lua" "${sb_opts[@]}" \
			--rows="$ROWS" --time="$TIME_S" run >"$log.out" 2>&1
		awk -v r="$ROWS" '/transactions:/ { gsub(/[(]/, "", $3); printf "%.1f\n", $3 * r }' "$log.out"
		;;
	esac
}

sb_opts=(--db-driver=mysql --mysql-host="$DBMARK_TEST_MY_HOST" --mysql-port="$DBMARK_TEST_MY_PORT"
	--mysql-user="$DBMARK_TEST_MY_USER" --mysql-password="$DBMARK_TEST_MY_PASSWORD" --mysql-db="$DB" --threads="$INSERTERS")

# run_bulk ROUND: sysbench's own bulk_insert (two-integer rows, one table per
# thread, statements of about 512 KiB); prints rows/s.
run_bulk() {
	local log=$OUT/bulk-$1 sb=("${sb_opts[@]}")
	sysbench bulk_insert "${sb[@]}" cleanup >/dev/null 2>&1 || true
	sysbench bulk_insert "${sb[@]}" prepare >/dev/null
	"$GNU_TIME" -f "%e %U %S %M" -o "$log.time" sysbench bulk_insert "${sb[@]}" --time="$TIME_S" run >"$log.out" 2>&1
	sysbench bulk_insert "${sb[@]}" cleanup >/dev/null 2>&1 || true
	awk '/transactions:/ { gsub(/[(]/, "", $3); printf "%.1f\n", $3 }' "$log.out"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

((ROUNDS > 0)) || ENGINES_CMP=
if ((ROUNDS > 0)); then
	echo "| engine | peer | round | dbmark rows/s | peer rows/s | ratio |"
	echo "|---|---|---|---|---|---|"
fi
summary=()
for e in ${ENGINES_CMP-$ENGINES}; do
	peer=pgbench
	[[ $e == mariadb ]] && peer="sysbench, the same INSERT"
	ratios=() mratios=()
	for ((r = 1; r <= ROUNDS; r++)); do
		# Alternate which tool goes first, so neither always meets a warmer server.
		if ((r % 2)); then d=$(run_dbmark $e $r); p=$(run_peer $e $r); else p=$(run_peer $e $r); d=$(run_dbmark $e $r); fi
		ratio=$(awk -v d="$d" -v p="$p" 'BEGIN { printf "%.3f", d / p }')
		ratios+=("$ratio")
		echo "| $e | $peer | $r | $d | $p | $ratio |"
		if [[ $e == mariadb && $MATCHED_ROWS != 0 ]]; then
			b=$(run_bulk $r)
			m=$(run_dbmark $e $r "$MATCHED_ROWS" --data-length-min 0 --data-length-max 0)
			mratio=$(awk -v d="$m" -v p="$b" 'BEGIN { printf "%.3f", d / p }')
			mratios+=("$mratio")
			echo "| $e | sysbench bulk_insert (dbmark $MATCHED_ROWS rows/INSERT, no padding) | $r | $m | $b | $mratio |"
		fi
	done
	summary+=("| $e | $peer | $(printf '%s\n' "${ratios[@]}" | median) |")
	if ((${#mratios[@]})); then
		summary+=("| $e | sysbench bulk_insert (other statements), dbmark with $MATCHED_ROWS rows per INSERT and no padding | $(printf '%s\n' "${mratios[@]}" | median) |")
	fi
done
if ((ROUNDS > 0)); then
	echo
	echo "| engine | peer | median ratio (dbmark / peer rows/s) |"
	echo "|---|---|---|"
	printf '%s\n' "${summary[@]}"
fi

[[ $LOAD_ROWS == 0 ]] && exit 0
my_root() { mariadb --no-defaults -uroot -S "$DBMARK_TEST_MY_SOCKET" -N -B "$@"; }
for e in $ENGINES; do
	log="$OUT/load-$e"
	pool=
	if [[ $e == mariadb && -n $LOAD_MY_POOL ]]; then
		pool=$(my_root -e "SELECT @@innodb_buffer_pool_size")
		my_root -e "SET GLOBAL innodb_buffer_pool_size = $(numfmt --from=iec "$LOAD_MY_POOL")"
		log "mariadb: innodb_buffer_pool_size $LOAD_MY_POOL for the load (was $pool bytes)"
	fi
	redo=
	if [[ $e == mariadb && -n $LOAD_MY_LOG ]]; then
		redo=$(my_root -e "SELECT @@innodb_log_file_size")
		my_root -e "SET GLOBAL innodb_log_file_size = $(numfmt --from=iec "$LOAD_MY_LOG")"
		log "mariadb: innodb_log_file_size $LOAD_MY_LOG for the load (was $redo bytes)"
	fi
	log "$e: loading $LOAD_ROWS rows with 3 secondary indexes (at most $LOAD_TIME)"
	"$GNU_TIME" -f "%e %U %S %M" -o "$log.time" "$DBMARK" run iibench --target "$(url_of "$e")" --recreate \
		--inserters "$LOAD_INSERTERS" --rows-per-insert "$LOAD_BATCH" --secondary-indexes 3 --max-rows "$LOAD_ROWS" \
		--time "$LOAD_TIME" --report-rows "$((LOAD_ROWS / 25))" --no-store --json "$log.json" >"$log.out" 2>&1 || true
	echo
	echo "$e: $(jq -r '.rows.inserted' "$log.json") rows in $(jq -r '.summary.duration_s | floor' "$log.json") s, dbmark peak RSS $(awk 'END { printf "%.0f MiB, client CPU %.1f s", $4 / 1024, $2 + $3 }' "$log.time")"
	echo
	echo "| rows (M) | inserts/s since previous | cumulative inserts/s | insert p99 (ms) | data MB | index MB |"
	echo "|---|---|---|---|---|---|"
	jq -r '.rows.series[] | "| \(.rows / 1e6) | \(.inserts_per_s | floor) | \(.cum_inserts_per_s | floor) | \((.insert_latency // []) | map(select(.p == 99)) | .[0].ms | if . == null then "-" else floor end) | \(.data_bytes / 1e6 | floor) | \(.index_bytes / 1e6 | floor) |"' "$log.json"
	"$DBMARK" cleanup iibench --target "$(url_of "$e")" >/dev/null
	if [[ -n $pool ]]; then my_root -e "SET GLOBAL innodb_buffer_pool_size = $pool"; fi
	if [[ -n $redo ]]; then my_root -e "SET GLOBAL innodb_log_file_size = $redo"; fi
done
