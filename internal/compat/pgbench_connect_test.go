package compat

import "testing"

// TestPgbenchConnectOutcomes: with -C (a new connection per transaction)
// both tools store rows with \gset, follow -M and pipeline, and refuse a
// pipeline in the simple protocol alike.
func TestPgbenchConnectOutcomes(t *testing.T) {
	runOutcomes(t, []outcomeCase{
		{name: "gset under -C", args: []string{"-C", "-n", "-c", "2", "-t", "3"},
			script: "SELECT 7 AS x, :client_id + 1 AS y \\gset\n\\if :x != 7 or :y != :client_id + 1\nSELECT 1/0;\n\\endif\n"},
		{name: "gset under -C in prepared mode", args: []string{"-C", "-n", "-c", "2", "-t", "3", "-M", "prepared"},
			script: "SELECT 7 AS x \\gset\n\\if :x != 7\nSELECT 1/0;\n\\endif\n"},
		// Only pasted in as text is :expr 5.
		{name: "simple protocol under -C", args: []string{"-C", "-n", "-c", "2", "-t", "3", "-M", "simple", "-D", "expr=2+3"},
			script: "SELECT :expr AS v \\gset\n\\if :v != 5\nSELECT 1/0;\n\\endif\n"},
		{name: "pipeline under -C in the simple protocol", args: []string{"-C", "-n", "-t", "2", "-M", "simple"},
			script: "\\startpipeline\nSELECT 1;\n\\endpipeline\n", dbmarkErr: "cannot use pipeline mode with the simple query protocol"},
		{name: "pipeline under -C in prepared mode", args: []string{"-C", "-n", "-c", "2", "-t", "3", "-M", "prepared"},
			script: "\\startpipeline\nSELECT 1;\nSELECT :client_id;\n\\endpipeline\n"},
	})
}
