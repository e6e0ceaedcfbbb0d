#!/usr/bin/env bash
# Private PostgreSQL and MariaDB instances for dbmark's tests and benchmarks.
#
#   scripts/testenv.sh start   install missing packages, start both servers (idempotent)
#   scripts/testenv.sh stop    stop both servers
#   scripts/testenv.sh restart [postgres|mariadb]
#                              stop and start one server (default both), its
#                              caches emptied: what `dbmark run --cold
#                              --restart-cmd` needs
#   scripts/testenv.sh status  say whether each server is up
#   scripts/testenv.sh env     print `export` lines; use: eval "$(scripts/testenv.sh env)"
#
# The instances live under $DBMARK_TESTENV_DIR (default /tmp/dbmark-testenv) and
# listen on their own ports, so the machine's own servers on 5432/3306 are never
# touched. They are tuned for speed, not durability (fsync=off etc.): test data only.
# Both accept TLS (as packaged and cloud servers do) with a certificate signed by
# a test CA made at start in $DBMARK_TESTENV_DIR/tls; `env` gives a URL for each
# way in: TCP, unix socket and TLS.
set -euo pipefail

STATE=$(realpath -m "${DBMARK_TESTENV_DIR:-/tmp/dbmark-testenv}")
PG_PORT=${DBMARK_TESTENV_PG_PORT:-55432}
MY_PORT=${DBMARK_TESTENV_MY_PORT:-53306}
HOST=127.0.0.1

PG_DIR=$STATE/pg # owned by postgres: initdb and the server refuse to run as root
PG_DATA=$PG_DIR/data
PG_SOCKDIR=$PG_DIR/sock
PG_LOG=$PG_DIR/postgresql.log
PG_USER=bench PG_PASSWORD=bench PG_DB=bench PG_STORE_DB=bench_store

MY_DATA=$STATE/mysql
MY_SOCKET=$STATE/mysqld.sock
MY_PIDFILE=$STATE/mysqld.pid
MY_LOG=$STATE/mysqld.log
MY_USER=sb MY_PASSWORD=pw MY_DB=sbtest

TLS_DIR=$STATE/tls # ca.crt, server.crt, server.key (the servers' copies are their own)

WAIT_SECS=${DBMARK_TESTENV_WAIT:-60}

log() { echo "testenv: $*" >&2; }
die() { echo "testenv: ERROR: $*" >&2; exit 1; }

# die_with_log MSG FILE [OFFSET]: fail, showing the end of a server log (the real
# reason is there); with OFFSET, only what was written since (tests make it noisy).
die_with_log() {
	local from=$((${3:-0} + 1))
	echo "testenv: ERROR: $1" >&2
	if [[ -f $2 ]]; then
		echo "---- last lines of $2 ----" >&2
		tail -c +"$from" "$2" | tail -n 40 >&2 || true
		echo "----" >&2
	fi
	exit 1
}

log_size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# alive PID PATTERN: PID runs (not a zombie: this machine's init may reap late) and
# its command line contains PATTERN, so a stale pid file whose pid was reused after
# a reboot is not mistaken for our server.
alive() {
	local stat state
	[[ $1 =~ ^[0-9]+$ ]] || return 1
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	state=${stat##*) }
	[[ ${state%% *} != Z ]] || return 1
	tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# exec_detached CMD...: replace this (sub)shell with CMD in a new session, keeping
# only fds 0-2 (which the caller redirects). A server that inherited our lock or a
# pipe of make's/CI's would hold it open as long as it runs, and a CI runner
# waiting for EOF on its output would hang. Call it in a subshell or with `&`.
exec_detached() {
	local f fd
	for f in /proc/self/fd/*; do
		fd=${f##*/}
		if ((fd > 2)); then exec {fd}>&- 2>/dev/null || true; fi
	done
	exec setsid "$@"
}

# ---------------------------------------------------------------- packages

# Newest installed PostgreSQL that also has pg_stat_statements (postgresql-contrib).
pg_bindir() {
	local d best=
	for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V); do
		[[ -x $d/initdb && -f $d/../lib/pg_stat_statements.so ]] && best=$d
	done
	[[ -n $best ]] && echo "$best"
}

have() { command -v "$1" >/dev/null 2>&1 || [[ -x /usr/sbin/$1 || -x /usr/bin/$1 ]]; }

# The directory of mariadbd (tests that restart a server of their own start it from there).
my_bindir() {
	local p
	p=$(PATH=$PATH:/usr/sbin command -v mariadbd 2>/dev/null) && dirname "$p"
	return 0
}

install_packages() {
	local pkgs=()
	pg_bindir >/dev/null || pkgs+=(postgresql postgresql-contrib)
	{ have mariadbd && have mariadb-install-db; } || pkgs+=(mariadb-server)
	have mariadb || pkgs+=(mariadb-client)
	have sysbench || pkgs+=(sysbench)
	have fio || pkgs+=(fio)
	have openssl || pkgs+=(openssl) # the test certificates
	have chromium || pkgs+=(chromium) # the HTML report's browser tests
	have runuser && have flock && have setsid || pkgs+=(util-linux)
	((${#pkgs[@]} == 0)) && return 0

	[[ $(id -u) == 0 ]] || die "missing packages (${pkgs[*]}); run as root to install them"
	log "installing: ${pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"${pkgs[@]}" >&2
	pg_bindir >/dev/null || die "PostgreSQL with pg_stat_statements still missing after install"
}

# ---------------------------------------------------------------- TLS

# tls_make: a CA and a server certificate it signs, for 127.0.0.1 and localhost,
# made when any of the files is missing. Prints "new" when it made them, so a
# running server can be told to load them.
tls_make() {
	[[ -s $TLS_DIR/ca.crt && -s $TLS_DIR/server.crt && -s $TLS_DIR/server.key ]] && return 0
	log "making a test CA and server certificate in $TLS_DIR"
	install -d -m 0755 "$TLS_DIR"
	rm -f "$TLS_DIR"/*
	(
		cd "$TLS_DIR"
		openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=dbmark test CA" \
			-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
			-keyout ca.key -out ca.crt
		openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr
		printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" "basicConstraints=critical,CA:FALSE" \
			"keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >server.ext
		openssl x509 -req -days 3650 -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
			-extfile server.ext -out server.crt
		rm -f server.csr server.ext ca.srl
		chmod 0644 ca.crt server.crt
		chmod 0600 ca.key server.key
	) >"$STATE/tls.log" 2>&1 || die_with_log "openssl could not make the test certificates" "$STATE/tls.log"
	echo new
}

# ---------------------------------------------------------------- PostgreSQL

pg() { runuser -u postgres -- "$PGBIN/$1" "${@:2}"; }

# psql as the postgres superuser over the private socket (trust auth).
pg_sql() { PGOPTIONS="-c client_min_messages=warning" "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKDIR" -p "$PG_PORT" -U postgres "$@"; }

pg_answers() { "$PGBIN/pg_isready" -q -h "$PG_SOCKDIR" -p "$PG_PORT" -t 2 && pg_sql -d postgres -tAc 'select 1' >/dev/null 2>&1; }

pg_running() {
	[[ -f $PG_DATA/postmaster.pid ]] && alive "$(head -n 1 "$PG_DATA/postmaster.pid")" "-D $PG_DATA"
}

pg_wait() {
	local mark=${1:-0} i
	for ((i = 0; i < WAIT_SECS; i++)); do
		pg_answers && return 0
		pg_running || die_with_log "PostgreSQL exited during startup" "$PG_LOG" "$mark"
		sleep 1
	done
	die_with_log "PostgreSQL did not accept connections within ${WAIT_SECS}s" "$PG_LOG" "$mark"
}

# After a crash or reboot: let a killed postmaster finish dying (this machine's init
# reaps late, and postgres counts a zombie as alive), then drop its lock files, whose
# pid may by now belong to an unrelated process.
pg_clear_stale() {
	local old i
	old=$(head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null) || return 0
	for ((i = 0; i < 20; i++)); do
		[[ $old =~ ^[0-9]+$ && -e /proc/$old ]] || break
		grep -q '^State:.*zombie' "/proc/$old/status" 2>/dev/null || break
		sleep 0.5
	done
	rm -f "$PG_DATA/postmaster.pid" "$PG_SOCKDIR/.s.PGSQL.$PG_PORT.lock"
}

pg_init() {
	# The marker is written only after a complete init, so a half-made cluster is redone.
	[[ -f $PG_DIR/.initialized ]] && return 0
	log "initdb PostgreSQL in $PG_DATA"
	rm -rf "$PG_DATA"
	pg initdb -D "$PG_DATA" -U postgres --auth=trust --no-locale -E UTF8 >"$PG_DIR/initdb.log" 2>&1 ||
		die_with_log "initdb failed" "$PG_DIR/initdb.log"
	echo "include = 'dbmark.conf'" >>"$PG_DATA/postgresql.conf"
	touch "$PG_DIR/.initialized"
}

# Rewritten on every start so that a changed setting here takes effect on restart.
pg_write_config() {
	cat >"$PG_DATA/dbmark.conf" <<-EOF
		# Written by scripts/testenv.sh; test-only settings (no durability).
		listen_addresses = '$HOST'
		port = $PG_PORT
		unix_socket_directories = '$PG_SOCKDIR'
		unix_socket_permissions = 0777
		max_connections = 400
		shared_preload_libraries = 'pg_stat_statements'
		pg_stat_statements.track = all
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		logging_collector = off
		log_timezone = 'UTC'
		timezone = 'UTC'
		ssl = on
		ssl_cert_file = 'server.crt'
		ssl_key_file = 'server.key'
		ssl_ca_file = 'ca.crt'
	EOF
	cat >"$PG_DATA/pg_hba.conf" <<-EOF
		# Written by scripts/testenv.sh: trust on the socket; passwords over
		# TCP, with or without TLS, so tests can see a wrong password refused.
		local all         all              trust
		host  all         all 127.0.0.1/32 scram-sha-256
		host  all         all ::1/128      scram-sha-256
		local replication all              trust
		host  replication all 127.0.0.1/32 trust
	EOF
	# The server wants its key private to its own user.
	install -o postgres -g postgres -m 0600 "$TLS_DIR/server.key" "$PG_DATA/server.key"
	install -o postgres -g postgres -m 0644 "$TLS_DIR/server.crt" "$PG_DATA/server.crt"
	install -o postgres -g postgres -m 0644 "$TLS_DIR/ca.crt" "$PG_DATA/ca.crt"
	chown postgres:postgres "$PG_DATA/dbmark.conf" "$PG_DATA/pg_hba.conf"
}

pg_ssl_on() { [[ $(pg_sql -d postgres -tAc 'show ssl' 2>/dev/null) == on ]]; }

pg_provision() {
	# Idempotent: creates what is missing, resets the password in case a test changed it.
	pg_sql -d postgres <<-EOF
		DO \$\$BEGIN
		  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
		    CREATE ROLE $PG_USER;
		  END IF;
		END\$\$;
		ALTER ROLE $PG_USER SUPERUSER LOGIN PASSWORD '$PG_PASSWORD';
		SELECT 'CREATE DATABASE $PG_DB OWNER $PG_USER'
		  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PG_DB') \gexec
		SELECT 'CREATE DATABASE $PG_STORE_DB OWNER $PG_USER'
		  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PG_STORE_DB') \gexec
	EOF
	pg_sql -d "$PG_DB" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'
}

pg_start() {
	local mark
	set -- "${1:-}"
	PGBIN=$(pg_bindir) || die "no PostgreSQL with pg_stat_statements under /usr/lib/postgresql/*/bin"
	install -d -o postgres -g postgres -m 0755 "$PG_DIR" "$PG_SOCKDIR"
	runuser -u postgres -- test -w "$PG_DIR" ||
		die "user postgres cannot write $PG_DIR (is every parent of $STATE traversable by others?)"

	if pg_running; then
		pg_wait
		log "PostgreSQL already running on $HOST:$PG_PORT"
		# An instance of an older version of this script may run without TLS,
		# or with certificates since remade: the settings and files are
		# rewritten and reloaded (ssl and its files need no restart).
		if [[ $1 == new ]] || ! pg_ssl_on; then
			log "loading PostgreSQL's TLS settings and certificate"
			pg_write_config
			pg pg_ctl -D "$PG_DATA" -s reload || die_with_log "PostgreSQL did not reload" "$PG_LOG"
			local i
			for ((i = 0; i < 20; i++)); do
				pg_ssl_on && break
				sleep 0.25
			done
		fi
	else
		pg_init
		pg_write_config
		pg_clear_stale
		mark=$(log_size "$PG_LOG")
		log "starting PostgreSQL ($PGBIN) on $HOST:$PG_PORT, socket dir $PG_SOCKDIR"
		# Own session: ^C in `make test` must not reach the server.
		(exec_detached -w runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -s -w -t "$WAIT_SECS" start) ||
			die_with_log "PostgreSQL failed to start" "$PG_LOG" "$mark"
		pg_wait "$mark"
	fi
	pg_provision
	# Prove the URL the tests use works (TCP, password user).
	PGPASSWORD=$PG_PASSWORD "$PGBIN/psql" -X -tA -h "$HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" \
		-c 'select 1 from pg_stat_statements limit 0' >/dev/null ||
		die_with_log "cannot connect to PostgreSQL as $PG_USER over TCP" "$PG_LOG"
	# ... and the TLS one, with the certificate checked against the test CA.
	PGPASSWORD=$PG_PASSWORD "$PGBIN/psql" -X -tA \
		"host=$HOST port=$PG_PORT user=$PG_USER dbname=$PG_DB sslmode=verify-full sslrootcert=$TLS_DIR/ca.crt" \
		-c 'select 1 from pg_stat_ssl where pid = pg_backend_pid() and ssl' | grep -qx 1 ||
		die_with_log "cannot connect to PostgreSQL as $PG_USER over TLS" "$PG_LOG"
}

pg_stop() {
	PGBIN=$(pg_bindir) || return 0
	if pg_running; then
		log "stopping PostgreSQL"
		pg pg_ctl -D "$PG_DATA" -m fast -s -w -t "$WAIT_SECS" stop || die_with_log "PostgreSQL did not stop" "$PG_LOG"
	else
		log "PostgreSQL not running"
	fi
}

# ---------------------------------------------------------------- MariaDB

# --no-defaults everywhere: /etc/mysql/my.cnf points at the system instance's socket and datadir.
my_sql() { mariadb --no-defaults --socket="$MY_SOCKET" -uroot "$@"; }

my_pid() {
	local pid
	[[ -f $MY_PIDFILE ]] || return 1
	pid=$(<"$MY_PIDFILE")
	alive "$pid" "--pid-file=$MY_PIDFILE" && echo "$pid"
}

my_answers() { my_sql --connect-timeout=2 -NBe 'select 1' >/dev/null 2>&1; }

my_wait() {
	local launched=${1:-} mark=${2:-0} i
	for ((i = 0; i < WAIT_SECS; i++)); do
		my_answers && return 0
		# Before it writes its pid file, only the pid we launched tells it is alive.
		if ! my_pid >/dev/null && ! { [[ -n $launched ]] && alive "$launched" "--pid-file=$MY_PIDFILE"; }; then
			die_with_log "MariaDB exited during startup" "$MY_LOG" "$mark"
		fi
		sleep 1
	done
	die_with_log "MariaDB did not accept connections within ${WAIT_SECS}s" "$MY_LOG" "$mark"
}

my_init() {
	[[ -f $STATE/.mysql-initialized ]] && return 0
	log "mariadb-install-db in $MY_DATA"
	rm -rf "$MY_DATA"
	# Runs as root (the server does too, --user=root), so no chown dance is needed.
	mariadb-install-db --no-defaults --user=root --datadir="$MY_DATA" \
		--auth-root-authentication-method=normal --skip-test-db >"$STATE/mysql-install.log" 2>&1 ||
		die_with_log "mariadb-install-db failed" "$STATE/mysql-install.log"
	touch "$STATE/.mysql-initialized"
}

my_provision() {
	my_sql <<-EOF
		CREATE DATABASE IF NOT EXISTS $MY_DB;
		CREATE USER IF NOT EXISTS '$MY_USER'@'%' IDENTIFIED BY '$MY_PASSWORD';
		CREATE USER IF NOT EXISTS '$MY_USER'@'localhost' IDENTIFIED BY '$MY_PASSWORD';
		ALTER USER '$MY_USER'@'%' IDENTIFIED BY '$MY_PASSWORD';
		ALTER USER '$MY_USER'@'localhost' IDENTIFIED BY '$MY_PASSWORD';
		GRANT ALL PRIVILEGES ON *.* TO '$MY_USER'@'%' WITH GRANT OPTION;
		GRANT ALL PRIVILEGES ON *.* TO '$MY_USER'@'localhost' WITH GRANT OPTION;
	EOF
}

# my_tls: whether the server offers TLS with the certificate now in $TLS_DIR.
my_tls() {
	[[ $(my_sql -NBe "select @@have_ssl, @@ssl_cert" 2>/dev/null) == "YES	$TLS_DIR/server.crt" ]]
}

my_start() {
	local mark new=${1:-}
	if my_pid >/dev/null; then
		my_wait
		log "MariaDB already running on $HOST:$MY_PORT"
		# Started by an older version of this script, without TLS: TLS is
		# only set at start, so it is restarted. New certificate files at
		# the same paths only need FLUSH SSL.
		if ! my_tls; then
			log "restarting MariaDB to turn TLS on"
			my_stop
		elif [[ $new == new ]]; then
			my_sql -e 'FLUSH SSL' || die_with_log "MariaDB could not load the new certificate" "$MY_LOG"
		fi
	fi
	if my_pid >/dev/null; then
		:
	else
		my_init
		rm -f "$MY_SOCKET" "$MY_PIDFILE" # stale leftovers from an unclean stop
		mark=$(log_size "$MY_LOG")
		log "starting MariaDB on $HOST:$MY_PORT, socket $MY_SOCKET"
		exec_detached mariadbd --no-defaults --user=root \
			--datadir="$MY_DATA" --port="$MY_PORT" --bind-address="$HOST" \
			--socket="$MY_SOCKET" --pid-file="$MY_PIDFILE" --log-error="$MY_LOG" \
			--max-connections=600 --innodb-buffer-pool-size=512M \
			--innodb-flush-log-at-trx-commit=2 --skip-name-resolve \
			--character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
			--ssl-ca="$TLS_DIR/ca.crt" --ssl-cert="$TLS_DIR/server.crt" --ssl-key="$TLS_DIR/server.key" \
			</dev/null >>"$STATE/mysqld.out" 2>&1 &
		my_wait $! "$mark"
	fi
	my_provision
	# Prove the URL the tests use works (TCP, password user).
	mariadb --no-defaults --protocol=TCP -h "$HOST" -P "$MY_PORT" -u"$MY_USER" -p"$MY_PASSWORD" \
		-NBe 'select 1' "$MY_DB" >/dev/null ||
		die_with_log "cannot connect to MariaDB as $MY_USER over TCP" "$MY_LOG"
	mariadb --no-defaults --protocol=TCP -h "$HOST" -P "$MY_PORT" -u"$MY_USER" -p"$MY_PASSWORD" \
		--ssl --ssl-ca="$TLS_DIR/ca.crt" --ssl-verify-server-cert \
		-NBe "show status like 'Ssl_cipher'" "$MY_DB" | grep -q . ||
		die_with_log "cannot connect to MariaDB as $MY_USER over TLS" "$MY_LOG"
}

my_stop() {
	local pid i
	if ! pid=$(my_pid); then
		log "MariaDB not running"
		return 0
	fi
	log "stopping MariaDB (pid $pid)"
	kill -TERM "$pid" # mariadbd shuts down cleanly on SIGTERM
	for ((i = 0; i < WAIT_SECS * 2; i++)); do
		alive "$pid" "--pid-file=$MY_PIDFILE" || return 0
		sleep 0.5
	done
	die_with_log "MariaDB (pid $pid) did not stop within ${WAIT_SECS}s" "$MY_LOG"
}

# ---------------------------------------------------------------- commands

check_state_dir() {
	# The path goes into URLs and quoted shell lines: keep it to plain characters.
	[[ $STATE =~ ^[A-Za-z0-9/._+-]+$ ]] || die "DBMARK_TESTENV_DIR must be a plain path (letters, digits, / . _ + -): $STATE"
	# Unix socket paths are limited to 107 bytes.
	local p
	for p in "$PG_SOCKDIR/.s.PGSQL.$PG_PORT" "$MY_SOCKET"; do
		((${#p} < 108)) || die "socket path too long (${#p} > 107 bytes): $p; use a shorter DBMARK_TESTENV_DIR"
	done
}

# Serialise start/stop: two `make test` runs at once must not both apt-get or initdb.
lock() {
	# 0755 whatever the umask: postgres must be able to reach $STATE/pg.
	[[ -d $STATE ]] || install -d -m 0755 "$STATE"
	exec 9>"$STATE/.lock"
	if ! flock -n 9; then
		log "waiting for another testenv start/stop to finish"
		flock -w 300 9 || die "another testenv start/stop still holds $STATE/.lock after 300s"
	fi
}

cmd_start() {
	[[ $(id -u) == 0 ]] || die "start must run as root (it uses runuser to run PostgreSQL as postgres)"
	check_state_dir
	lock
	install_packages
	local new
	new=$(tls_make)
	pg_start "$new"
	my_start "$new"
	log "ready (state in $STATE); eval \"\$(scripts/testenv.sh env)\" for the connection settings"
}

cmd_stop() {
	lock
	pg_stop
	my_stop
}

cmd_restart() {
	[[ $(id -u) == 0 ]] || die "restart must run as root (it uses runuser to run PostgreSQL as postgres)"
	check_state_dir
	lock
	case ${1:-all} in
	postgres) pg_stop && pg_start ;;
	mariadb) my_stop && my_start ;;
	all) pg_stop && my_stop && pg_start && my_start ;;
	*) die "restart: unknown server ${1} (postgres, mariadb, or none for both)" ;;
	esac
}

cmd_status() {
	local rc=0
	if PGBIN=$(pg_bindir) && pg_running && pg_answers; then echo "postgres: up ($HOST:$PG_PORT)"; else echo "postgres: down"; rc=1; fi
	if my_pid >/dev/null && my_answers; then echo "mariadb: up ($HOST:$MY_PORT)"; else echo "mariadb: down"; rc=1; fi
	return $rc
}

cmd_env() {
	local kv
	check_state_dir
	# Single-quoted so that `eval` takes ? and & literally.
	for kv in \
		"DBMARK_TEST_POSTGRES=postgres://$PG_USER:$PG_PASSWORD@$HOST:$PG_PORT/$PG_DB?sslmode=disable" \
		"DBMARK_TEST_POSTGRES_SOCKET=postgres://$PG_USER@/$PG_DB?host=$PG_SOCKDIR&port=$PG_PORT&sslmode=disable" \
		"DBMARK_TEST_STORE_POSTGRES=postgres://$PG_USER:$PG_PASSWORD@$HOST:$PG_PORT/$PG_STORE_DB?sslmode=disable" \
		"DBMARK_TEST_MYSQL=mysql://$MY_USER:$MY_PASSWORD@$HOST:$MY_PORT/$MY_DB" \
		"DBMARK_TEST_MYSQL_SOCKET=mysql://$MY_USER:$MY_PASSWORD@localhost/$MY_DB?socket=$MY_SOCKET" \
		"DBMARK_TEST_POSTGRES_TLS=postgres://$PG_USER:$PG_PASSWORD@$HOST:$PG_PORT/$PG_DB?sslmode=require" \
		"DBMARK_TEST_POSTGRES_TLS_VERIFY=postgres://$PG_USER:$PG_PASSWORD@$HOST:$PG_PORT/$PG_DB?sslmode=verify-full&sslrootcert=$TLS_DIR/ca.crt" \
		"DBMARK_TEST_MYSQL_TLS=mysql://$MY_USER:$MY_PASSWORD@$HOST:$MY_PORT/$MY_DB?tls=skip-verify" \
		"DBMARK_TEST_TLS_CA=$TLS_DIR/ca.crt" \
		"DBMARK_TEST_PG_HOST=$HOST" \
		"DBMARK_TEST_PG_PORT=$PG_PORT" \
		"DBMARK_TEST_PG_SOCKETDIR=$PG_SOCKDIR" \
		"DBMARK_TEST_PG_USER=$PG_USER" \
		"DBMARK_TEST_PG_PASSWORD=$PG_PASSWORD" \
		"DBMARK_TEST_PG_DB=$PG_DB" \
		"DBMARK_TEST_PG_BINDIR=$(pg_bindir || true)" \
		"DBMARK_TEST_MY_HOST=$HOST" \
		"DBMARK_TEST_MY_PORT=$MY_PORT" \
		"DBMARK_TEST_MY_SOCKET=$MY_SOCKET" \
		"DBMARK_TEST_MY_USER=$MY_USER" \
		"DBMARK_TEST_MY_PASSWORD=$MY_PASSWORD" \
		"DBMARK_TEST_MY_DB=$MY_DB" \
		"DBMARK_TEST_MY_BINDIR=$(my_bindir)"; do
		printf "export %s='%s'\n" "${kv%%=*}" "${kv#*=}"
	done
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
restart) cmd_restart "${2:-}" ;;
status) cmd_status ;;
env) cmd_env ;;
*)
	echo "usage: $0 start|stop|restart [postgres|mariadb]|status|env" >&2
	exit 2
	;;
esac
