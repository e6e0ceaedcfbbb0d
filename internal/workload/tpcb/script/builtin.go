package script

import (
	"fmt"
	"strings"

	"github.com/dbmark/dbmark/internal/target"
)

// builtin is one of pgbench's built-in scripts: its name, its description
// (which pgbench shows as the script's name) and its text.
type builtin struct {
	name, desc, text string
}

// The statements are pgbench 15's, so results compare with pgbench's.
var builtins = []builtin{
	{"tpcb-like", "<builtin: TPC-B (sort of)>", `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`},
	{"simple-update", "<builtin: simple update>", `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`},
	{"select-only", "<builtin: select only>", `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`},
}

// BuiltinNames lists the built-in scripts in pgbench's order.
func BuiltinNames() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

// BuiltinText returns a built-in script's full name (name may be a
// prefix), description and text, as pgbench --show-script prints them.
func BuiltinText(name string) (full, desc, text string, err error) {
	b, err := findBuiltin(name)
	if err != nil {
		return "", "", "", err
	}
	return b.name, b.desc, b.text, nil
}

// findBuiltin finds a built-in script by name or unambiguous prefix.
func findBuiltin(name string) (*builtin, error) {
	var found *builtin
	n := 0
	for i := range builtins {
		if strings.HasPrefix(builtins[i].name, name) {
			found = &builtins[i]
			n++
		}
	}
	switch n {
	case 1:
		return found, nil
	case 0:
		return nil, fmt.Errorf("no builtin script found for name %q (available: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return nil, fmt.Errorf("ambiguous builtin name: %d builtin scripts found for prefix %q (available: %s)", n, name, strings.Join(BuiltinNames(), ", "))
}

// Builtin parses a built-in script: "tpcb-like", "simple-update" or
// "select-only", or an unambiguous prefix of one. Its Name is pgbench's
// description ("<builtin: select only>"). Its BEGIN and END statements
// become the dialect's own when run on engines other than PostgreSQL.
func Builtin(name string) (*Script, error) {
	b, err := findBuiltin(name)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b.desc, b.text)
	if err != nil {
		return nil, fmt.Errorf("parse builtin %s: %w", b.name, err)
	}
	for _, c := range s.Commands {
		switch c.Text {
		case "BEGIN;":
			c.txn = target.TxnBegin
		case "END;":
			c.txn = target.TxnEnd
		}
	}
	return s, nil
}
