package cli_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeaderboardFromSource: a result of this build (unreleased: built
// from source) is on no leaderboard of a site served as it is, and on the
// labelled from-source board of one served with --leaderboard-unreleased.
func TestLeaderboardFromSource(t *testing.T) {
	home(t)
	ctx := context.Background()
	if o := dbmark(t, ctx, "run", "oltp_point_select", "--time", "1s"); o.code != 0 {
		t.Fatalf("run: exit %d: %s", o.code, o.stderr)
	}
	get := func(url string) string {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	store := filepath.Join(t.TempDir(), "site.db")
	for _, on := range []bool{false, true} {
		args := []string{"--store", store}
		if on {
			args = append(args, "--leaderboard-unreleased")
		}
		url, stop := serve(t, args...)
		o := dbmark(t, ctx, "submit", "1", "--server", url)
		if o.code != 0 {
			t.Fatalf("submit: exit %d: %s", o.code, o.stderr)
		}
		id := strings.TrimSpace(o.stdout)
		id = id[strings.LastIndex(id, "/")+1:]
		board := get(url + "/leaderboard/oltp_point_select")
		boards := get(url + "/leaderboard")
		switch {
		case !on && (strings.Contains(board, id) || !strings.Contains(boards, "--leaderboard-unreleased")):
			t.Errorf("without the flag: the result is ranked, or the overview does not say how to show it:\n%s", boards)
		case on && (!strings.Contains(board, `id="from-source"`) || !strings.Contains(board, "/r/"+id) || !strings.Contains(boards, `href="/leaderboard/oltp_point_select#from-source"`)):
			t.Errorf("with the flag: the from-source board lacks the result:\n%s", board)
		}
		if code, errs := stop(); code != 0 {
			t.Fatalf("serve exited %d: %s", code, errs)
		}
	}
}
