// Package progress shows how far a long step (loading tables) has come: a
// bar on a terminal, a line every tenth of the way otherwise, so logs stay
// readable.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Bar is safe for concurrent use.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	label    string
	total    int64
	bar      *progressbar.ProgressBar
	lastStep int64
	start    time.Time
	done     bool
}

// New starts a bar for total units. A nil or io.Discard writer shows nothing.
func New(w io.Writer, interactive bool, label string, total int64) *Bar {
	b := &Bar{w: w, label: label, total: total, start: time.Now()}
	if w == nil || w == io.Discard || total <= 0 {
		b.w = nil
		return b
	}
	if interactive {
		b.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("rows"),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
		return b
	}
	fmt.Fprintf(w, "%s...\n", label)
	return b
}

// Set reports that n units are done.
func (b *Bar) Set(n int64) {
	if b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Set64(n)
		return
	}
	if step := n * 10 / b.total; step > b.lastStep && step < 10 {
		b.lastStep = step
		fmt.Fprintf(b.w, "  %d%% (%d of %d)\n", step*10, n, b.total)
	}
}

// Finish ends the bar with a line saying how long it took.
func (b *Bar) Finish() {
	if b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	if b.bar != nil {
		_ = b.bar.Finish()
	}
	fmt.Fprintf(b.w, "%s: done in %.1fs\n", b.label, time.Since(b.start).Seconds())
}
