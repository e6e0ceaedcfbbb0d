package sqldb

import "testing"

func TestRebind(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1":                           "SELECT 1",
		"SELECT a FROM t WHERE b = ?":        "SELECT a FROM t WHERE b = $1",
		"INSERT INTO t (a, b) VALUES (?, ?)": "INSERT INTO t (a, b) VALUES ($1, $2)",
		"? ? ? ? ? ? ? ? ? ?":                "$1 $2 $3 $4 $5 $6 $7 $8 $9 $10",
		"SELECT 'é' || ?":                    "SELECT 'é' || $1",
	} {
		if got := Rebind(q); got != want {
			t.Errorf("Rebind(%q) = %q, want %q", q, got, want)
		}
	}
}
