// Package restart restarts a server with the user's own command
// (--restart-cmd) and waits until it answers again: dbmark cannot know how
// a server is run (systemd, a container, pg_ctl), so the user says.
package restart

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/target"
)

// DefaultWait bounds the wait for the server to answer after the command:
// a crash recovery or a large buffer pool takes a while.
const DefaultWait = 2 * time.Minute

// Run runs cmd with sh -c, its output going to out and env added to its
// environment, then waits up to wait for tg to answer a statement. A
// command that fails is an error with the last line it wrote.
func Run(ctx context.Context, cmd string, env []string, out io.Writer, tg target.Target, wait time.Duration) error {
	var tail bytes.Buffer
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	c.Env = append(os.Environ(), env...)
	// One writer for both: exec then gives the command one pipe, so its
	// lines stay in the order written and one goroutine writes tail.
	w := io.MultiWriter(out, &tail)
	c.Stdout, c.Stderr = w, w
	if err := c.Run(); err != nil {
		last := strings.TrimSpace(tail.String())
		if i := strings.LastIndexByte(last, '\n'); i >= 0 {
			last = last[i+1:]
		}
		if last != "" {
			return fmt.Errorf("the restart command failed (%v): %s", err, last)
		}
		return fmt.Errorf("the restart command failed: %v", err)
	}
	return Wait(ctx, tg, wait)
}

// Wait waits up to wait for tg to accept a connection and answer
// SELECT 1, trying every 200 ms.
func Wait(ctx context.Context, tg target.Target, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var last error
	for {
		if last = ping(ctx, tg); last == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not answer within %v: %w", wait, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func ping(ctx context.Context, tg target.Target) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := tg.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	_, _, err = c.QueryRow(ctx, "SELECT 1")
	return err
}
