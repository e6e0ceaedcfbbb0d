package compare

import (
	"fmt"
	"io"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

// NotDurable says which of runs (named by labels, in order) ran on an
// engine whose settings do not keep every commit through a crash, by the
// engines' own rules (unsafe: target.Registry.Unsafe): one line each,
// none when every run was durable. A faster figure from such a run is not
// a faster durable database.
func NotDurable(labels []string, runs []*result.Result, unsafe func(kind string, settings map[string]string) []target.Unsafe) []string {
	var out []string
	n := 0
	for i, r := range runs {
		if us := unsafe(r.Target.Kind, r.Target.Settings); len(us) > 0 {
			out = append(out, fmt.Sprintf("%s was not durable: %s", labels[i], target.DescribeUnsafe(us)))
			n++
		}
	}
	if n > 0 && n < len(runs) {
		out = append(out, "the results differ in durability: a ratio between them is not a difference between durable databases")
	}
	return out
}

// WriteNotDurable prints NotDurable's lines, each as a warning.
func WriteNotDurable(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "warning: %s\n", l)
	}
}
