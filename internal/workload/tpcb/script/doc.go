// Package script is pgbench's script language: parsing, the expression
// language and its functions, and running a script as one pgbench client
// does, on any target.
//
// # API
//
//	Parse(file, src) (*Script, error)   // errors are *SyntaxError: Error() "file:line:col: msg", Detail() line and caret
//	Builtin(name) (*Script, error)       // "tpcb-like", "simple-update", "select-only" or a unique prefix
//	BuiltinNames() []string; BuiltinText(name) (full, desc, text, error)
//	Script{Name, Commands, Index}        // Command{Line, Kind (SQL|Meta), Meta, Label, Text, Args, Result, Prefix, MustFind}
//	Shared{Scale, RandomSeed, Clients, Vars, Logger, Debug, Stdout}
//	NewClient(sh, id, conn, dialect) (*Client, error)
//	(*Client).Run(ctx, script, Recorder) error  // one transaction; Recorder.Begin(), then per executed command, ended at Recorder.Now(), Command(i, end, d) if it Wants(i) or it is the last, else Count(i); Found(i, ok) after a read that MustFind
//	(*Client).Restore()                  // before a retry: the variables and random state of the last Run's start
//	(*Client).Var(name) (string, bool); (*Client).Close()
//	Rand, NewRand; Shared.ThreadRandom(t) // pgbench's PRNG and its per-thread states (script choice, --rate, log sampling)
//
// Runtime errors of the language (undefined variable, division by zero, a
// bad function argument, integer overflow, a failed shell command) are
// *RuntimeError naming the script, line and client. SQL errors are the
// target's errors wrapped with the client, script and line, so the
// target's Classify still sees them.
//
// # Compatibility with pgbench 15
//
// Scripts split as pgbench splits them: an SQL command ends at a semicolon
// outside parentheses, quotes and comments (a line may hold several, and a
// command may span lines), or where a backslash command starts; "\;" puts a
// semicolon inside a command and "\:" a colon. A backslash command ends at
// the end of its line; a backslash before the newline continues it.
// Syntax errors carry pgbench's messages and caret positions, the column
// counted from the command's backslash as pgbench counts it.
//
// Expressions, functions, NULL handling and the text form of values follow
// pgbench's evaluator; the random functions use pg_prng (xoroshiro128**)
// with pgbench's seeding: the base sequence is seeded with --random-seed,
// client i's state with its (i+1)-th draw, :default_seed is the next draw,
// then three states per thread. So with a fixed seed, random(),
// random_exponential(), random_gaussian(), random_zipfian(), hash() and
// permute() return pgbench's values.
//
// Variables in SQL follow pgbench's rules, found in the text alone: a
// colon and a name wherever they stand, inside quotes and comments too
// ("\:" is a colon like any other); a run of colons not followed by a
// name is not one, so "x::int" is a cast. On PostgreSQL with -M simple
// each is replaced by the variable's text, unquoted (a NULL by "NULL"), so
// a variable can stand in quotes or for a table name, and an undefined one
// stays as written. In every other mode and engine they are parameters: a
// variable's text (NULL's is the text "NULL", as pgbench sends it), SQL
// NULL for an undefined variable, and a reference inside quotes is still
// a parameter, which the server then rejects, as with pgbench.
//
// Pipelines: on PostgreSQL in -M extended and prepared, the statements
// between \startpipeline and \endpipeline are queued in pgconn's pipeline
// mode (their statements prepared before it starts, as pgbench does),
// \syncpipeline (pgbench 17) sends them with a sync without waiting, and
// \endpipeline sends a last sync and reads every result. Statements
// between syncs form one implicit transaction: an error rolls it back,
// the server skips the rest of it, and the client aborts with the error
// naming the failing statement's line. An error of the script's own
// inside a pipeline leaves it without a sync, so nothing unsynced is
// committed. -M simple refuses \startpipeline with pgbench's message, as
// it refuses \gset and \aset inside a pipeline, nested pipelines and a
// script that ends with one open, on every engine.
//
// Differences, by design or not yet done:
//   - MariaDB and SQLite have no pipeline: the statements between
//     \startpipeline and \endpipeline run in order, one round trip each.
//   - \syncpipeline is accepted, as pgbench 17 does; pgbench 15 refuses
//     it.
//   - \aset stores the last row of the command's result (a command is one
//     statement unless "\;" joins several, which only PostgreSQL's simple
//     mode runs).
//   - The builtin scripts' BEGIN and END become the dialect's BEGIN and
//     COMMIT on engines other than PostgreSQL.
package script
