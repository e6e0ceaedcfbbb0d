package cli_test

import (
	"context"
	"strings"
	"testing"
)

// A mistyped workload is reported as the workload, with the likely one,
// even when flags follow it; a mistyped flag offers the nearest flag.
func TestTyposGetDidYouMean(t *testing.T) {
	home(t)
	ctx := context.Background()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "oltp_read_wirte", "--time", "2"}, `unknown workload "oltp_read_wirte": did you mean oltp_read_write?`},
		{[]string{"run", "oltp_read_wirte"}, "did you mean oltp_read_write?"},
		{[]string{"prepare", "oltp_raed_only", "--tables", "2"}, "did you mean oltp_read_only?"},
		{[]string{"sweep", "oltp_point_selcet", "--threads", "1,2"}, "did you mean oltp_point_select?"},
		{[]string{"check", "tpbc", "--scale", "2"}, "did you mean tpcb?"},
		{[]string{"run", "oltp_read_write", "--tme", "2"}, "unknown flag: --tme: did you mean --time?"},
		{[]string{"run", "oltp_read_write", "--thread=2"}, "did you mean --threads?"},
		{[]string{"sweep", "oltp_read_write", "--thraeds", "1,2"}, "did you mean --threads?"},
		{[]string{"run", "tpcb", "--clinet", "2"}, "did you mean --client?"},
		{[]string{"run", "--time", "2", "oltp_read_wirte"}, "name the workload before its flags"},
	}
	for _, c := range cases {
		oneLineError(t, dbmark(t, ctx, c.args...), c.want)
	}
	// Nothing near enough: no guess.
	o := dbmark(t, ctx, "run", "xyzzy", "--time", "2")
	oneLineError(t, o, `unknown workload "xyzzy"`)
	o = dbmark(t, ctx, "run", "oltp_read_write", "--frobnicate")
	oneLineError(t, o, "unknown flag: --frobnicate")
	for _, o := range []outcome{o, dbmark(t, ctx, "run", "xyzzy")} {
		if strings.Contains(o.stderr, "did you mean") {
			t.Errorf("a guess for a name near nothing: %s", o.stderr)
		}
	}
}
