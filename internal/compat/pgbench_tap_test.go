package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dbmark/dbmark/internal/cli"
)

// tapCase is one case of pgbench 15's TAP tests (t/001_pgbench_with_server.pl
// and t/002_pgbench_no_server.pl), replayed through the real pgbench and
// through "dbmark pgbench": the options, the scripts given with -f (in the
// order of their names, as the TAP helpers give them), the exit status
// and the regular expressions each stream must match.
type tapCase struct {
	file     string // "001" or "002"
	name     string
	opts     string
	status   int
	out, err []string
	files    map[string]string
	env      map[string]string // PGOPTIONS, PGDATABASE for the case
	setup    string            // SQL run before each tool's run
	// known is why dbmark is known to differ on this case; "" means both
	// tools must pass every check.
	known string
	// own marks a case the TAP file does not have, counted apart.
	own bool
}

// empty is the TAP tests' qr{^$}: nothing at all on the stream.
const empty = `^$`

// tapNoServer is t/002_pgbench_no_server.pl: option errors, --help, -V,
// the builtin listing and script syntax errors.
var tapNoServer = []tapCase{
	{name: "bad option", opts: "-h home -p 5432 -U calvin -d --bad-option", status: 1, err: []string{`--help.*more information`}},
	{name: "no file", opts: "-f no-such-file", status: 1, err: []string{`could not open file "no-such-file":`}},
	{name: "no builtin", opts: "-b no-such-builtin", status: 1, err: []string{`no builtin script .* "no-such-builtin"`}},
	{name: "invalid weight", opts: "--builtin=select-only@one", status: 1, err: []string{`invalid weight specification: @one`}},
	{name: "invalid weight 2", opts: "-b select-only@-1", status: 1, err: []string{`weight spec.* out of range .*: -1`}},
	{name: "too many scripts", opts: strings.Repeat("-S ", 129), status: 1, err: []string{`at most 128 SQL scripts`}},
	{name: "bad #clients", opts: "-c three", status: 1, err: []string{`invalid value "three" for option -c/--client`}},
	{name: "bad #threads", opts: "-j eleven", status: 1, err: []string{`invalid value "eleven" for option -j/--jobs`}},
	{name: "bad scale", opts: "-i -s two", status: 1, err: []string{`invalid value "two" for option -s/--scale`}},
	{name: "invalid #transactions", opts: "-t zil", status: 1, err: []string{`invalid value "zil" for option -t/--transactions`}},
	{name: "invalid duration", opts: "-T ten", status: 1, err: []string{`invalid value "ten" for option -T/--time`}},
	{name: "-t XOR -T", opts: "-N -l --aggregate-interval=5 --log-prefix=notused -t 1000 -T 1", status: 1, err: []string{`specify either `}},
	{name: "-T XOR -t", opts: "-P 1 --progress-timestamp -l --sampling-rate=0.001 -T 10 -t 1000", status: 1, err: []string{`specify either `}},
	{name: "bad variable", opts: "--define foobla", status: 1, err: []string{`invalid variable definition`}},
	{name: "invalid fillfactor", opts: "-F 1", status: 1, err: []string{`-F/--fillfactor must be in range`}},
	{name: "invalid query mode", opts: "-M no-such-mode", status: 1, err: []string{`invalid query mode`}},
	{name: "invalid progress", opts: "--progress=0", status: 1, err: []string{`-P/--progress must be in range`}},
	{name: "invalid rate", opts: "--rate=0.0", status: 1, err: []string{`invalid rate limit`}},
	{name: "invalid latency", opts: "--latency-limit=0.0", status: 1, err: []string{`invalid latency limit`}},
	{name: "invalid sampling rate", opts: "--sampling-rate=0", status: 1, err: []string{`invalid sampling rate`}},
	{name: "invalid aggregate interval", opts: "--aggregate-interval=-3", status: 1, err: []string{`--aggregate-interval must be in range`}},
	{name: "weight zero", opts: "-b se@0 -b si@0 -b tpcb@0", status: 1, err: []string{`weight must not be zero`}},
	{name: "init vs run", opts: "-i -S", status: 1, err: []string{`cannot be used in initialization`}},
	{name: "run vs init", opts: "-S -F 90", status: 1, err: []string{`cannot be used in benchmarking`}},
	{name: "ambiguous builtin", opts: "-b s", status: 1, err: []string{`ambiguous`}},
	{name: "--progress-timestamp => --progress", opts: "--progress-timestamp", status: 1, err: []string{`allowed only under`}},
	{name: "-I without init option", opts: "-I dtg", status: 1, err: []string{`cannot be used in benchmarking mode`}},
	{name: "invalid init step", opts: "-i -I dta", status: 1, err: []string{`unrecognized initialization step`, `Allowed step characters are`}},
	{name: "bad random seed", opts: "--random-seed=one", status: 1, err: []string{`unrecognized random seed option "one"`, `Expecting an unsigned integer, "time" or "rand"`, `error while setting random seed from --random-seed option`}},
	{name: "bad partition method", opts: "-i --partition-method=BAD", status: 1, err: []string{`"range"`, `"hash"`, `"BAD"`}},
	{name: "bad partition number", opts: "-i --partitions -1", status: 1, err: []string{`--partitions must be in range`}},
	{name: "partition method without partitioning", opts: "-i --partition-method=hash", status: 1, err: []string{`partition-method requires greater than zero --partitions`}},
	{name: "bad maximum number of tries", opts: "--max-tries -10", status: 1, err: []string{`invalid number of maximum tries: "-10"`}},
	{name: "an infinite number of tries", opts: "--max-tries 0", status: 1, err: []string{`an unlimited number of transaction tries can only be used with --latency-limit or a duration`}},
	{name: "sampling => log", opts: "--sampling-rate=0.01", status: 1, err: []string{`log sampling .* only when`}},
	{name: "sampling XOR aggregate", opts: "-l --sampling-rate=0.1 --aggregate-interval=3", status: 1, err: []string{`sampling .* aggregation .* cannot be used at the same time`}},
	{name: "aggregate => log", opts: "--aggregate-interval=3", status: 1, err: []string{`aggregation .* only when`}},
	{name: "log-prefix => log", opts: "--log-prefix=x", status: 1, err: []string{`prefix .* only when`}},
	{name: "duration & aggregation", opts: "-l -T 1 --aggregate-interval=3", status: 1, err: []string{`aggr.* not be higher`}},
	{name: "duration % aggregation", opts: "-l -T 5 --aggregate-interval=3", status: 1, err: []string{`multiple`}},
	{name: "help", opts: "--help", out: []string{`benchmarking tool for PostgreSQL`, `Usage`, `Initialization options:`, `Common options:`, `Report bugs to`}, err: []string{empty}},
	{name: "version", opts: "-V", out: []string{`^pgbench .PostgreSQL. `}, err: []string{empty}},
	{name: "builtin list", opts: "-b list", out: []string{empty}, err: []string{`Available builtin scripts:`, `tpcb-like`, `simple-update`, `select-only`}},
	{name: "builtin listing", opts: "--show-script se", out: []string{empty}, err: []string{`select-only: `, `SELECT abalance FROM pgbench_accounts WHERE`}},
	// Script errors: pgbench_scripts with no options.
	{name: "missing endif", status: 1, err: []string{`\\if without matching \\endif`}, files: map[string]string{"if-noendif.sql": `\if 1`}},
	{name: "missing if on elif", status: 1, err: []string{`\\elif without matching \\if`}, files: map[string]string{"elif-noif.sql": `\elif 1`}},
	{name: "missing if on else", status: 1, err: []string{`\\else without matching \\if`}, files: map[string]string{"else-noif.sql": `\else`}},
	{name: "missing if on endif", status: 1, err: []string{`\\endif without matching \\if`}, files: map[string]string{"endif-noif.sql": `\endif`}},
	{name: "elif after else", status: 1, err: []string{`\\elif after \\else`}, files: map[string]string{"else-elif.sql": "\\if 1\n\\else\n\\elif 0\n\\endif"}},
	{name: "else after else", status: 1, err: []string{`\\else after \\else`}, files: map[string]string{"else-else.sql": "\\if 1\n\\else\n\\else\n\\endif"}},
	{name: "if syntax error", status: 1, err: []string{`syntax error in command "if"`}, files: map[string]string{"if-bad.sql": "\\if\n\\endif\n"}},
	{name: "elif syntax error", status: 1, err: []string{`syntax error in command "elif"`}, files: map[string]string{"elif-bad.sql": "\\if 0\n\\elif +\n\\endif\n"}},
	{name: "else syntax error", status: 1, err: []string{`unexpected argument in command "else"`}, files: map[string]string{"else-bad.sql": "\\if 0\n\\else BAD\n\\endif\n"}},
	{name: "endif syntax error", status: 1, err: []string{`unexpected argument in command "endif"`}, files: map[string]string{"endif-bad.sql": "\\if 0\n\\endif BAD\n"}},
	{name: "not enough arguments for least", status: 1, err: []string{`at least one argument expected \(least\)`}, files: map[string]string{"bad-least.sql": "\\set i least()\n"}},
	{name: "not enough arguments for greatest", status: 1, err: []string{`at least one argument expected \(greatest\)`}, files: map[string]string{"bad-greatest.sql": "\\set i greatest()\n"}},
	{name: "not enough arguments for hash", status: 1, err: []string{`unexpected number of arguments \(hash\)`}, files: map[string]string{"bad-hash-1.sql": "\\set i hash()\n"}},
	{name: "too many arguments for hash", status: 1, err: []string{`unexpected number of arguments \(hash\)`}, files: map[string]string{"bad-hash-2.sql": "\\set i hash(1,2,3)\n"}},
	{name: "bigint overflow 1", status: 1, err: []string{`bigint constant overflow`}, files: map[string]string{"overflow-1.sql": "\\set i 100000000000000000000\n"}},
	{name: "double overflow 2", status: 1, err: []string{`double constant overflow`}, files: map[string]string{"overflow-2.sql": "\\set d 1.0E309\n"}},
	{name: "double overflow 3", status: 1, err: []string{`double constant overflow`}, files: map[string]string{"overflow-3.sql": "\\set d .1E310\n"}},
	{name: "set i", status: 1, err: []string{`set i 1 `, `\^ error found here`}, files: map[string]string{"set_i_op": "\\set i 1 +\n"}},
	{name: "not enough arguments to permute", status: 1, err: []string{`unexpected number of arguments \(permute\)`}, files: map[string]string{"bad-permute-1.sql": "\\set i permute(1)\n"}},
	{name: "too many arguments to permute", status: 1, err: []string{`unexpected number of arguments \(permute\)`}, files: map[string]string{"bad-permute-2.sql": "\\set i permute(1, 2, 3, 4)\n"}},
}

// errorsOpts are the options of 001's script error cases.
const errorsOpts = "-n -t 1 -Dfoo=bla -Dnull=null -Dtrue=true -Done=1 -Dzero=0.0 -Dbadtrue=trueXXX -Dmaxint=9223372036854775807 -Dminint=-9223372036854775808 -M prepared"

// scriptError is one of 001's script error cases: the status and the
// regular expressions stderr must match, stdout following from the status.
func scriptError(name string, status int, script string, err ...string) tapCase {
	out := `processed: 0/1`
	if status == 1 {
		out = empty
	}
	return tapCase{name: "script error: " + name, opts: errorsOpts, status: status, out: []string{out}, err: err,
		files: map[string]string{"001_pgbench_error_" + strings.ReplaceAll(name, " ", "_"): script}}
}

// tapWithServer is t/001_pgbench_with_server.pl, as far as it is replayed
// here (tapNotReplayed says what is not, and why).
func tapWithServer() []tapCase {
	least := "\\set i 0\nSELECT LEAST(" + strings.TrimSuffix(strings.Repeat(":i, ", 256), ", ") + ")"
	shellArgs := "\\shell echo " + strings.TrimSuffix(strings.Repeat("arg ", 255), " ")
	cases := []tapCase{
		{name: "concurrent OID generation", opts: "--no-vacuum --client=5 --protocol=prepared --transactions=25", out: []string{`processed: 125/125`}, err: []string{empty},
			files: map[string]string{"001_pgbench_concurrent_insert": "CREATE TYPE pg_temp.e AS ENUM ('l1', 'l2', 'l3'); DROP TYPE pg_temp.e;"}},
		{name: "no such database", opts: "no-such-database", status: 1, out: []string{empty}, err: []string{`connection to server .* failed`, `FATAL:  database "no-such-database" does not exist`}},
		{name: "run without init", opts: "-S -t 1", status: 1, err: []string{`Perhaps you need to do initialization`}, env: map[string]string{"PGDATABASE": tapEmptyDB}},
		{name: "scale 1 initialization", opts: "-i", out: []string{empty}, err: []string{`creating tables`, `vacuuming`, `creating primary keys`, `done in \d+\.\d\d s `}},
		{name: "initialization with all options but the tablespaces", opts: "--initialize --init-steps=dtpvg --scale=1 --unlogged-tables --fillfactor=98 --foreign-keys --quiet --partitions=2 --partition-method=hash",
			out: []string{empty}, err: []string{`dropping old tables`, `creating tables`, `creating 2 partitions`, `vacuuming`, `creating primary keys`, `creating foreign keys`, `done in \d+\.\d\d s `}},
		{name: "--init-steps", opts: "--initialize --init-steps=dtpvGvv --no-vacuum --foreign-keys --unlogged-tables --partitions=3",
			out: []string{empty}, err: []string{`dropping old tables`, `creating tables`, `creating 3 partitions`, `creating primary keys`, `generating data \(server-side\)`, `creating foreign keys`, `done in \d+\.\d\d s `}},
		// The data the runs below use: unpartitioned, as 001 leaves it.
		{name: "initialization again", own: true, opts: "-i -q", out: []string{empty}, err: []string{`done in`}},
		{name: "tpcb-like", opts: "--transactions=5 -Dfoo=bla --client=2 --protocol=simple --builtin=t --connect -n -v -n",
			out: []string{`builtin: TPC-B`, `clients: 2\b`, `processed: 10/10`, `mode: simple`, `maximum number of tries: 1`}, err: []string{empty}},
		{name: "simple update", opts: "--transactions=20 --client=5 -M extended --builtin=si -C --no-vacuum -s 1",
			out: []string{`builtin: simple update`, `clients: 5\b`, `threads: 1\b`, `processed: 100/100`, `mode: extended`}, err: []string{`scale option ignored`}},
		{name: "select only with --debug", opts: "-t 100 -c 7 -M prepared -b se --debug",
			out: []string{`builtin: select only`, `clients: 7\b`, `threads: 1\b`, `processed: 700/700`, `mode: prepared`},
			err: []string{`vacuum`, `client 0`, `client 1`, `sending`, `receiving`, `executing`}},
		{name: "custom scripts", opts: "-t 100 -c 1 -j 2 -M prepared -n",
			out: []string{`type: multiple scripts`, `mode: prepared`, `script 1: .*/001_pgbench_custom_script_1`, `weight: 2`, `script 2: .*/001_pgbench_custom_script_2`, `weight: 1`, `processed: 100/100`}, err: []string{empty},
			files: map[string]string{
				"001_pgbench_custom_script_1@1": "\\set aid random(1, :scale * 100000)\nSELECT abalance::INTEGER AS balance FROM pgbench_accounts WHERE aid=:aid;\n",
				"001_pgbench_custom_script_2@2": "BEGIN;\n\\set foo 1\nSELECT :foo::INT + :scale::INT * :client_id::INT AS bla;\nCOMMIT;\n"}},
		{name: "custom script, simple", opts: "-n -t 10 -c 1 -M simple", out: []string{`type: .*/001_pgbench_custom_script_3`, `processed: 10/10`, `mode: simple`}, err: []string{empty},
			files: map[string]string{"001_pgbench_custom_script_3": "\\set aid random(1, :scale * 100000)\nBEGIN;\nSELECT abalance::INTEGER AS balance FROM pgbench_accounts WHERE aid=:aid;\nCOMMIT;\n"}},
		{name: "custom script, extended", opts: "-n -t 10 -c 2 -M extended", out: []string{`type: .*/001_pgbench_custom_script_4`, `processed: 20/20`, `mode: extended`}, err: []string{empty},
			files: map[string]string{"001_pgbench_custom_script_4": "\\set aid random(1, :scale * 100000)\nBEGIN;\nSELECT abalance::INTEGER AS balance FROM pgbench_accounts WHERE aid=:aid;\nCOMMIT;\n"}},
		// Server parameter logging: the server's settings that shape the
		// error's CONTEXT, per session (PGOPTIONS) where the TAP test sets
		// them in postgresql.conf.
		{name: "parameters not in the error", opts: "-n -t1 -c1 -M prepared", status: 2, err: []string{`ERROR:  invalid input syntax for type json`},
			env:   map[string]string{"PGOPTIONS": "-c log_parameter_max_length_on_error=0"},
			files: map[string]string{"001_param_1": jsonScript}},
		{name: "parameters in the error's CONTEXT", opts: "-n -t1 -c1 -M prepared", status: 2,
			err:   []string{`ERROR:  division by zero`, `CONTEXT:  unnamed portal with parameters: \$1 = '1', \$2 = NULL`},
			env:   map[string]string{"PGOPTIONS": "-c log_parameter_max_length_on_error=64"},
			files: map[string]string{"001_param_2": "select '1' as one \\gset\nSELECT 1 / (random() / 2)::int, :one::int, :two::int;\n"}},
		{name: "truncated parameters in the error's CONTEXT", opts: "-n -t1 -c1 -M prepared", status: 2,
			err:   []string{`ERROR:  invalid input syntax for type json`, `(?m)CONTEXT:  JSON data, line 1: \{ invalid\.\.\.[\r\n]+unnamed portal with parameters: \$1 = '\{ invalid ', \$2 = '''Valame Dios!'' dijo Sancho; ''no le dije yo a vuestra merced que \.\.\.'`},
			env:   map[string]string{"PGOPTIONS": "-c log_parameter_max_length_on_error=64"},
			files: map[string]string{"001_param_3": jsonScript}},
		{name: "whole parameters in the error's CONTEXT", opts: "-n -t1 -c1 -M prepared", status: 2,
			err:   []string{`ERROR:  division by zero`, `CONTEXT:  unnamed portal with parameters: \$1 = '1', \$2 = NULL`},
			env:   map[string]string{"PGOPTIONS": "-c log_parameter_max_length_on_error=-1"},
			files: map[string]string{"001_param_4": "select '1' as one \\gset\nSELECT 1 / (random() / 2)::int, :one::int, :two::int;\n"}},
		{name: "whole long parameters in the error's CONTEXT", opts: "-n -t1 -c1 -M prepared", status: 2,
			err:   []string{`ERROR:  invalid input syntax for type json`, `(?m)CONTEXT:  JSON data, line 1: \{ invalid\.\.\.[\r\n]+unnamed portal with parameters: \$1 = '\{ invalid ', \$2 = '''Valame Dios!'' dijo Sancho; ''no le dije yo a vuestra merced que mirase bien lo que hacia\?'`},
			env:   map[string]string{"PGOPTIONS": "-c log_parameter_max_length_on_error=-1"},
			files: map[string]string{"001_param_5": jsonScript}},
		{name: "a bad parameter in BIND", opts: "-n -t1 -c1 -M prepared", status: 2,
			err:   []string{`ERROR:  invalid input syntax for type smallint: "1a"`, `CONTEXT:  unnamed portal parameter \$2 = '1a'`},
			env:   map[string]string{"PGOPTIONS": "-c log_parameter_max_length_on_error=-1"},
			files: map[string]string{"001_param_6": "select 42 as value1, '1a' as value2 \\gset\nselect :value1::smallint, :value2::smallint;\n"}},
		{name: "random seeded", opts: "--random-seed=5432 -t 1", out: []string{`processed: 1/1`}, err: []string{`setting random seed to 5432\b`},
			setup: "CREATE UNLOGGED TABLE IF NOT EXISTS seeded_random(seed INT8 NOT NULL, rand TEXT NOT NULL, val INTEGER NOT NULL)",
			files: map[string]string{"001_pgbench_random_seed": "\\set ur random(1000, 1999)\nINSERT INTO seeded_random(seed, rand, val) VALUES (:random_seed, 'uniform', :ur);\n"}},
		{name: "backslash commands", opts: "-t 1", out: []string{`type: .*/001_pgbench_backslash_commands`, `processed: 1/1`, `shell-echo-output`}, err: []string{`command=8.: int 1\b`},
			files: map[string]string{"001_pgbench_backslash_commands": "\\set zero 0\n\\set one 1.0\n\\sleep :one ms\n\\sleep 100 us\n\\sleep 0 s\n\\sleep :zero\n\\setshell another_one\\\n  echo \\\n    :one\n\\set n debug(:another_one)\n\\shell echo shell-echo-output\n"}},
		{name: "gset", opts: "-t 1", out: []string{`type: .*/001_pgbench_gset`, `processed: 1/1`},
			err:   []string{`command=3.: int 0\b`, `command=5.: int 1\b`, `command=6.: int 2\b`, `command=8.: int 3\b`, `command=10.: int 4\b`, `command=12.: int 5\b`},
			files: map[string]string{"001_pgbench_gset": "SELECT \\gset\nSELECT 0 AS i0 \\gset\n\\set i debug(:i0)\nSELECT 1 AS i1, 2 AS i2 \\gset\n\\set i debug(:i1)\n\\set i debug(:i2)\nSELECT 3 AS i3 \\gset x_\n\\set i debug(:x_i3)\nSELECT 0 AS i4, 4 AS i4 \\gset\n\\set i debug(:i4)\n\\; \\; SELECT 0 AS i5 \\; SELECT 5 AS i5 \\; \\; \\gset\n\\set i debug(:i5)\n"}},
		{name: "gset with two rows", opts: "-t 1", status: 2, out: []string{`type: .*/001_pgbench_gset_two_rows`, `processed: 0/1`}, err: []string{`expected one row, got 2\b`},
			files: map[string]string{"001_pgbench_gset_two_rows": "\nSELECT 5432 AS fail UNION SELECT 5433 ORDER BY 1 \\gset\n"}},
		{name: "aset", opts: "-t 1", out: []string{`type: .*/001_pgbench_aset`, `processed: 1/1`}, err: []string{`command=3.: int 8\b`, `command=4.: int 7\b`},
			files: map[string]string{"001_pgbench_aset": "\n\\; SELECT 6 AS i6 \\; SELECT 7 AS i7 \\; \\aset\nSELECT 8 AS i6 UNION SELECT 9 ORDER BY 1 DESC \\aset\n\\set i debug(:i6)\n\\set i debug(:i7)\n"}},
		{name: "aset with an empty result", opts: "-t 1", status: 2, out: []string{`type: .*/001_pgbench_aset_empty`, `processed: 0/1`}, err: []string{`undefined variable \"i8\"`, `evaluation of meta-command failed\b`},
			files: map[string]string{"001_pgbench_aset_empty": "\n\\; SELECT 5432 AS i8 WHERE FALSE \\; \\aset\n\\set i debug(:i8)\n"}},
		{name: "pipeline", opts: "-t 1 -n -M extended", out: []string{`type: .*/001_pgbench_pipeline`, `actually processed: 1/1`},
			files: map[string]string{"001_pgbench_pipeline": "\\startpipeline\n" + strings.Repeat("select 1;\n", 10) + "\\endpipeline\n"}},
		{name: "pipeline in prepared mode", opts: "-t 1 -n -M prepared", out: []string{`type: .*/001_pgbench_pipeline_prep`, `actually processed: 1/1`},
			files: map[string]string{"001_pgbench_pipeline_prep": "\\startpipeline\n" + strings.Repeat("select 1;\n", 10) + "\\endpipeline\n"}},
		{name: "startpipeline twice", opts: "-t 1 -n -M extended", status: 2, err: []string{`already in pipeline mode`},
			files: map[string]string{"001_pgbench_pipeline_2": "\\startpipeline\n\\startpipeline\n"}},
		{name: "endpipeline with no start", opts: "-t 1 -n -M extended", status: 2, err: []string{`not in pipeline mode`},
			files: map[string]string{"001_pgbench_pipeline_3": "\\endpipeline\n"}},
		{name: "gset in a pipeline", opts: "-t 1 -n -M extended", status: 2, err: []string{`gset is not allowed in pipeline mode`},
			files: map[string]string{"001_pgbench_pipeline_4": "\\startpipeline\nselect 1 \\gset f\n\\endpipeline\n"}},
		{name: "pipeline with serializable", opts: "-c4 -j2 -t 10 -n -M prepared", out: []string{`type: .*/001_pgbench_pipeline_serializable`, `actually processed: 40/40`},
			files: map[string]string{"001_pgbench_pipeline_serializable": "\\startpipeline\nBEGIN ISOLATION LEVEL SERIALIZABLE;\n" + strings.Repeat("select 1;\n", 10) + "END;\n\\endpipeline\n"}},
		scriptError("sql syntax error", 2, "    SELECT 1 + ;\n", `ERROR:  syntax error`, `prepared statement .* does not exist`),
		scriptError("sql too many args", 1, least, `statement has too many arguments.*\b255\b`),
		scriptError("shell bad command", 2, `\shell no-such-command`, `\(shell\) .* meta-command failed`),
		scriptError("shell undefined variable", 2, "\\shell echo ::foo :nosuchvariable\n", `undefined variable ":nosuchvariable"`),
		scriptError("shell missing command", 1, `\shell`, `missing command `),
		scriptError("shell too many args", 1, shellArgs, `too many arguments in command "shell"`),
		scriptError("set syntax error", 1, `\set i 1 +`, `syntax error in command "set"`),
		scriptError("set no such function", 1, `\set i noSuchFunction()`, `unexpected function name`),
		scriptError("set invalid variable name", 2, `\set . 1`, `invalid variable name`),
		scriptError("set division by zero", 2, `\set i 1/0`, `division by zero`),
		scriptError("set undefined variable", 2, `\set i :nosuchvariable`, `undefined variable "nosuchvariable"`),
		scriptError("set unexpected char", 1, `\set i ;`, `unexpected character .;.`),
		scriptError("set too many args", 2, `\set i least(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)`, `too many function arguments`),
		scriptError("set empty random range", 2, `\set i random(5,3)`, `empty range given to random`),
		scriptError("set random range too large", 2, `\set i random(:minint, :maxint)`, `random range is too large`),
		scriptError("set gaussian param too small", 2, `\set i random_gaussian(0, 10, 1.0)`, `gaussian param.* at least 2`),
		scriptError("set exponential param greater 0", 2, `\set i random_exponential(0, 10, 0.0)`, `exponential parameter must be greater `),
		scriptError("set zipfian param to 1", 2, `\set i random_zipfian(0, 10, 1)`, `zipfian parameter must be in range \[1\.001, 1000\]`),
		scriptError("set zipfian param too large", 2, `\set i random_zipfian(0, 10, 1000000)`, `zipfian parameter must be in range \[1\.001, 1000\]`),
		scriptError("set non numeric value", 2, `\set i :foo + 1`, `malformed variable "foo" value: "bla"`),
		scriptError("set no expression", 1, `\set i`, `syntax error`),
		scriptError("set missing argument", 1, `\set`, `(?i)missing argument`),
		scriptError("set not a bool", 2, `\set b NOT 0.0`, `cannot coerce double to boolean`),
		scriptError("set not an int", 2, `\set i TRUE + 2`, `cannot coerce boolean to int`),
		scriptError("set not a double", 2, `\set d ln(TRUE)`, `cannot coerce boolean to double`),
		scriptError("set case error", 1, `\set i CASE TRUE THEN 1 ELSE 0 END`, `syntax error in command "set"`),
		scriptError("set random error", 2, `\set b random(FALSE, TRUE)`, `cannot coerce boolean to int`),
		scriptError("set number of args mismatch", 1, `\set d ln(1.0, 2.0))`, `unexpected number of arguments`),
		scriptError("set at least one arg", 1, `\set i greatest())`, `at least one argument expected`),
		scriptError("set double to int overflow", 2, `\set i int(1E32)`, `double to int overflow for 100`),
		scriptError("set bigint add overflow", 2, `\set i (1<<62) + (1<<62)`, `int add out`),
		scriptError("set bigint sub overflow", 2, `\set i 0 - (1<<62) - (1<<62) - (1<<62)`, `int sub out`),
		scriptError("set bigint mul overflow", 2, `\set i 2 * (1<<62)`, `int mul out`),
		scriptError("set bigint div out of range", 2, `\set i :minint / -1`, `bigint div out of range`),
		scriptError("setshell not an int", 2, `\setshell i echo -n one`, `command must return an integer`),
		scriptError("setshell missing arg", 1, `\setshell var`, `missing argument `),
		scriptError("setshell no such command", 2, `\setshell var no-such-command`, `could not read result `),
		scriptError("sleep undefined variable", 2, `\sleep :nosuchvariable`, `sleep: undefined variable`),
		scriptError("sleep too many args", 1, `\sleep too many args`, `too many arguments`),
		scriptError("sleep missing arg", 1, `\sleep`, `missing argument`, `\\sleep`),
		scriptError("sleep unknown unit", 1, `\sleep 1 week`, `unrecognized time unit`),
		scriptError("misc invalid backslash command", 1, `\nosuchcommand`, `invalid command .* "nosuchcommand"`),
		scriptError("misc empty script", 1, ``, `empty command list for script`),
		scriptError("bad boolean", 2, `\set b :badtrue or true`, `malformed variable.*trueXXX`),
		scriptError("invalid permute size", 2, `\set i permute(0, 0)`, `permute size parameter must be greater than zero`),
		scriptError("gset no row", 2, `SELECT WHERE FALSE \gset`, `expected one row, got 0\b`),
		scriptError("gset alone", 1, `\gset`, `gset must follow an SQL command`),
		scriptError("gset no SQL", 1, "\\set i +1\n\\gset", `gset must follow an SQL command`),
		scriptError("gset too many arguments", 1, `SELECT 1 \gset a b`, `too many arguments`),
		scriptError("gset after gset", 1, "SELECT 1 AS i \\gset\n\\gset", `gset must follow an SQL command`),
		scriptError("gset non SELECT", 2, `DROP TABLE IF EXISTS no_such_table \gset`, `expected one row, got 0`),
		scriptError("gset bad default name", 2, `SELECT 1 \gset`, `error storing into variable \?column\?`),
		scriptError("gset bad name", 2, `SELECT 1 AS "bad name!" \gset`, `error storing into variable bad name!`),
		{name: "throttling", opts: "-t 100 -S --rate=100000 --latency-limit=1000000 -c 2 -n -r", out: []string{`processed: 200/200`, `builtin: select only`}, err: []string{empty}},
		{name: "late throttling", opts: "-t 10 --rate=100000 --latency-limit=1 -n -r",
			out: []string{`processed: [01]/10`, `type: .*/001_pgbench_sleep`, `above the 1.0 ms latency limit: [01]/`}, err: []string{empty},
			files: map[string]string{"001_pgbench_sleep": `\sleep 2ms`}},
		{name: "logs with a sampling rate", opts: "-n -S -t 50 -c 2 --log --sampling-rate=0.5 --log-prefix=" + tapLogDir + "/001_pgbench_log_2",
			out: []string{`select only`, `processed: 100/100`}, err: []string{empty}},
		{name: "logs", opts: "-n -b select-only -t 10 -l --log-prefix=" + tapLogDir + "/001_pgbench_log_3",
			out: []string{`select only`, `processed: 10/10`}, err: []string{empty}},
		// 001's serialization case with a choreography of its own: the
		// second client's UPDATE waits for the first's row lock, and its
		// snapshot, older than the first's commit, fails.
		{name: "concurrent update with retrying", opts: "-n -c 2 -t 1 -d --verbose-errors --max-tries 2", setup: "DROP TABLE IF EXISTS xy; CREATE UNLOGGED TABLE xy (x integer, y integer); INSERT INTO xy VALUES (1, 2)",
			out: []string{`processed: 2/2\b`, `number of transactions retried: 1\b`, `total number of retries: 1\b`},
			err: []string{`(?s)client (0|1) sending UPDATE xy SET y = y \+ -?\d+\b.*client (0|1) got an error in command 3 \(SQL\) of script 0; ERROR:  could not serialize access due to concurrent update\b`,
				`client (0|1) repeats the transaction after the error \(try 1/2\)`},
			files: map[string]string{"001_pgbench_serialization": "BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT 1;\n\\set delta random(-5000, 5000)\nUPDATE xy SET y = y + :delta WHERE x = 1;\nSELECT pg_sleep(0.3);\nCOMMIT;\n"}},
		{name: "incomplete transaction block", opts: "--no-vacuum", status: 2, out: []string{`processed: 1/10`},
			err:   []string{`client 0 aborted: end of script reached without completing the last transaction`},
			files: map[string]string{"001_pgbench_incomplete_transaction_block": "BEGIN;SELECT 1;"}},
	}
	return cases
}

// jsonScript sets two variables and casts them to jsonb, the first of
// which is not JSON.
const jsonScript = "select '{ invalid ' as value \\gset\nselect $$'Valame Dios!' dijo Sancho; 'no le dije yo a vuestra merced que mirase bien lo que hacia?'$$ as long \\gset\nselect column1::jsonb from (values (:value), (:long)) as q;\n"

// tapNotReplayed are 001's cases not replayed here, and why.
var tapNotReplayed = map[string]string{
	"expressions (75 \\set values with --random-seed=5432)": "its values are checked value by value against pgbench in internal/workload/tpcb/script's compat tests",
	"random seeded, its second run":                         "the same run again, for a determinism check the TAP file makes with psql",
	"deadlock with retrying":                                "a PL/pgSQL choreography of advisory locks between two clients, not reproduced; retries after deadlocks are compared in pgbench_test.go",
}

// tapChanged are 001's cases replayed with a change, and why.
var tapChanged = map[string]string{
	"initialization with all options but the tablespaces": "a tablespace needs a directory on the server's machine",
	"concurrent update with retrying":                     "a row lock and an older snapshot in place of 001's PL/pgSQL choreography of advisory locks; 001's checks but for a back-reference (both sending lines carry the same value)",
}

// Where the log cases write, relative to the tools' working directory.
const (
	tapLogDir  = "logs"
	tapDB      = "dbmark_tap"
	tapEmptyDB = "dbmark_tap_empty"
)

// tapResult is one tool's run of a case.
type tapResult struct {
	status   int
	out, err string
}

// check says which of the case's checks r fails.
func (c tapCase) check(r tapResult) []string {
	var bad []string
	if r.status != c.status {
		bad = append(bad, fmt.Sprintf("exit %d, want %d", r.status, c.status))
	}
	for _, s := range []struct {
		what string
		res  []string
		got  string
	}{{"stdout", c.out, r.out}, {"stderr", c.err, r.err}} {
		for _, re := range s.res {
			if !regexp.MustCompile(re).MatchString(s.got) {
				bad = append(bad, fmt.Sprintf("%s does not match %q", s.what, re))
			}
		}
	}
	return bad
}

// TestPgbenchTAPReplay replays pgbench 15's TAP tests through the real
// pgbench and "dbmark pgbench": every case pgbench passes here, dbmark
// must pass too, unless the case names a known difference (which then
// must still be one). The counts are logged per file.
func TestPgbenchTAPReplay(t *testing.T) {
	e := newPGEnv(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, e.raw)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, db := range []string{tapDB, tapEmptyDB} {
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, tapLogDir), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DBMARK_HOME", t.TempDir())
	t.Setenv("PGHOST", os.Getenv("DBMARK_TEST_PG_HOST"))
	t.Setenv("PGPORT", os.Getenv("DBMARK_TEST_PG_PORT"))
	t.Setenv("PGUSER", os.Getenv("DBMARK_TEST_PG_USER"))
	t.Setenv("PGPASSWORD", os.Getenv("DBMARK_TEST_PG_PASSWORD"))
	t.Setenv("PGDATABASE", tapDB)
	t.Setenv("PGOPTIONS", "")
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	tapdb, err := pgx.Connect(ctx, e.url(tapDB))
	if err != nil {
		t.Fatal(err)
	}
	defer tapdb.Close(ctx)

	type tally struct{ identical, different, pgbenchFails, own int }
	counts := map[string]*tally{"001": {}, "002": {}}
	var table []string
	run := func(c tapCase) {
		t.Run(c.file+"/"+c.name, func(t *testing.T) {
			args := strings.Fields(c.opts)
			names := make([]string, 0, len(c.files))
			for n := range c.files {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				path := filepath.Join(dir, n)
				file := path // without its weight
				if i := strings.LastIndexByte(n, '@'); i > 0 {
					file = filepath.Join(dir, n[:i])
				}
				if err := os.WriteFile(file, []byte(c.files[n]), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "-f", path)
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			setup := func() {
				if c.setup != "" {
					if _, err := tapdb.Exec(ctx, c.setup); err != nil {
						t.Fatal(err)
					}
				}
			}
			var real, ours tapResult
			var realErr error
			if c.alone() {
				setup()
				real, realErr = runRealPgbench(e.pgbench, args)
				setup()
				ours = runDbmarkPgbench(args)
			} else {
				// Both tools at once: the case's time is the slower's.
				done := make(chan struct{})
				go func() {
					defer close(done)
					real, realErr = runRealPgbench(e.pgbench, args)
				}()
				ours = runDbmarkPgbench(args)
				<-done
			}
			if realErr != nil {
				t.Fatal(realErr)
			}
			tl := counts[c.file]
			if bad := c.check(real); len(bad) > 0 {
				tl.pgbenchFails++
				table = append(table, fmt.Sprintf("%s | %s | pgbench 15 itself fails here: %s", c.file, c.name, strings.Join(bad, "; ")))
				t.Skipf("pgbench 15 does not pass this case here: %s\n%s%s", strings.Join(bad, "; "), real.out, real.err)
			}
			bad := c.check(ours)
			switch {
			case len(bad) == 0 && c.known != "":
				t.Errorf("dbmark now passes %q: drop its known difference (%s)", c.name, c.known)
			case len(bad) == 0 && c.own:
				tl.own++
			case len(bad) == 0:
				tl.identical++
			case c.known != "":
				tl.different++
				table = append(table, fmt.Sprintf("%s | %s | different: %s", c.file, c.name, c.known))
			default:
				tl.different++
				t.Errorf("dbmark pgbench %s: %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), strings.Join(bad, "; "), ours.out, ours.err)
			}
		})
	}
	for _, c := range tapNoServer {
		c.file = "002"
		run(c)
	}
	for _, c := range tapWithServer() {
		c.file = "001"
		run(c)
	}
	for _, f := range []string{"001", "002"} {
		tl := counts[f]
		t.Logf("t/%s: %d identical, %d different, %d where pgbench 15 itself fails the check (and %d cases of this test's own, identical)",
			f, tl.identical, tl.different, tl.pgbenchFails, tl.own)
	}
	for name, why := range tapNotReplayed {
		t.Logf("t/001: not replayed: %s: %s", name, why)
	}
	for name, why := range tapChanged {
		t.Logf("t/001: replayed with a change: %s: %s", name, why)
	}
	for _, l := range table {
		t.Log(l)
	}
}

// alone says whether the case must run one tool after the other: it
// sets up the database or initializes it, which the other tool's run
// would see half done.
func (c tapCase) alone() bool {
	if c.setup != "" {
		return true
	}
	for _, a := range strings.Fields(c.opts) {
		if a == "-i" || a == "--initialize" {
			return true
		}
	}
	return false
}

func runRealPgbench(bin string, args []string) (tapResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		return tapResult{}, fmt.Errorf("pgbench %s: %v", strings.Join(args, " "), err)
	}
	return tapResult{status: status, out: out.String(), err: errb.String()}, nil
}

func runDbmarkPgbench(args []string) tapResult {
	ctx, cancel := context.WithTimeout(context.Background(), cmdLimit)
	defer cancel()
	var out, errb bytes.Buffer
	code := cli.Main(ctx, append([]string{"pgbench"}, args...), &out, &errb)
	return tapResult{status: code, out: out.String(), err: errb.String()}
}
