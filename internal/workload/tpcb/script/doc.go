// Package script is pgbench's script language: parsing, the expression
// language and its functions, and running a script as one pgbench client
// does, on any target.
//
// # API
//
//	Parse(file, src) (*Script, error)   // errors are *SyntaxError: Error() "file:line:col: msg", Detail() line and caret
//	Builtin(name) (*Script, error)       // "tpcb-like", "simple-update", "select-only" or a unique prefix
//	BuiltinNames() []string; BuiltinText(name) (desc, text, error)
//	Script{Name, Commands, Index}        // Command{Line, Kind (SQL|Meta), Meta, Label, Text, Args, Result, Prefix}
//	Shared{Scale, RandomSeed, Clients, Vars, Logger, Debug, Stdout}
//	NewClient(sh, id, conn, dialect) (*Client, error)
//	(*Client).Run(ctx, script, Recorder) error  // one transaction; Recorder.Command(i, d) per executed command
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
// Differences, by design or not yet done:
//   - A ":name" in SQL is a statement parameter in every mode, recognised
//     outside quotes and comments only; a string variable is a value, never
//     SQL text (pgbench's -M simple pastes the text in). An unset variable
//     is an error. NULL travels as the text "NULL", as with pgbench's
//     extended and prepared modes.
//   - \startpipeline, \syncpipeline and \endpipeline are accepted and the
//     statements between them run in order, one round trip each, on every
//     engine.
//   - \aset stores the last row of the command's result (a command is one
//     statement unless "\;" joins several, which only PostgreSQL's simple
//     mode runs).
//   - The builtin scripts' BEGIN and END become the dialect's BEGIN and
//     COMMIT on engines other than PostgreSQL.
package script
