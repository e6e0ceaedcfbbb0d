package script

import "testing"

func TestStatementNamesFromComments(t *testing.T) {
	src := `\set aid random(1, 10)
-- lookup: read one account
-- (the builtins' read)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
--
-- bump the balance
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
-- lookup again: a name used before is not used twice
SELECT 1;
-- 7
SELECT 2;
-- apart

SELECT 3;
-- meta commands keep their numbers
\set x 1
SELECT 4;`
	s, err := Parse("lab.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", "lookup", "bump", "", "", "", "", ""}
	if len(s.Commands) != len(want) {
		t.Fatalf("%d commands, want %d", len(s.Commands), len(want))
	}
	for i, c := range s.Commands {
		if c.Name != want[i] {
			t.Errorf("command %d (%q): name %q, want %q", i+1, c.Label, c.Name, want[i])
		}
	}
}
