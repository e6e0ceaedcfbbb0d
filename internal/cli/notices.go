package cli

import (
	"io"

	"github.com/dbmark/dbmark/internal/store"
)

// keptNote says where a failed or interrupted run's partial result went:
// kept, or nowhere when --no-store was given without --json.
func keptNote(st store.Store, jsonPath string) string {
	if st == nil && jsonPath == "" {
		return "the partial result was not kept: --no-store without --json"
	}
	return "the partial result was kept"
}

// SignalNotices are the lines printed on stderr at a first interrupt
// (Ctrl-C or SIGTERM), which stops the command gently, and at a second,
// which quits at once: each says what becomes of the command's work.
func SignalNotices(args []string) (first, again string) {
	const twice = " (press Ctrl-C again to quit at once)"
	switch commandOf(args) {
	case "run", "reproduce", "quick", "sysbench":
		return "stopping and keeping what was measured" + twice,
			"quitting at once: the result of the run under way is not kept"
	case "sweep":
		return "stopping and keeping what was measured" + twice,
			"quitting at once: the result of the run under way is not kept (the sweep's finished runs are in the store)"
	case "submit":
		return "cancelling the submission" + twice, "quitting at once: the submission was cancelled"
	case "prepare":
		return "stopping the prepare" + twice, "quitting at once: the prepare was cut short (run cleanup, then prepare again)"
	}
	return "stopping" + twice, "quitting at once"
}

// commandOf is the name of the command args run ("run" for "run oltp_insert
// --time 5"), past the global flags before it.
func commandOf(args []string) string {
	root := NewApp(io.Discard, io.Discard, args).rootCmd()
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		return ""
	}
	for cmd.Parent() != root {
		cmd = cmd.Parent()
	}
	return cmd.Name()
}
