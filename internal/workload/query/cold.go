package query

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/restart"
)

// coldSteps are what makes a query's next run cold: checked once before
// the run, then taken before each query's first iteration.
type coldSteps interface {
	// check refuses, in one line, --cold where it cannot be honoured.
	check(t target.Target, o *Options) error
	// dropCache syncs and drops the OS page cache, or says it cannot
	// (false): only root can.
	dropCache() (bool, error)
	// restart runs the restart command and returns once tg's server
	// answers again.
	restart(ctx context.Context, cmd string, tg target.Target) error
}

// osCold drops this machine's page cache and runs the restart command
// with the shell.
type osCold struct{}

// dropCaches is the kernel's knob that drops clean page cache (3: the
// page cache and the dentries and inodes).
const dropCaches = "/proc/sys/vm/drop_caches"

func (osCold) canDrop() bool {
	if os.Geteuid() != 0 {
		return false
	}
	f, err := os.OpenFile(dropCaches, os.O_WRONLY, 0)
	if err != nil {
		return false // a container's read-only /proc/sys
	}
	f.Close()
	return true
}

func (c osCold) check(t target.Target, o *Options) error {
	return checkCold(t, o, c.canDrop())
}

// checkCold refuses --cold where it cannot make a run cold: with several
// streams (one's cold run is another's hot one), without a way to empty
// the caches that hold the data (not root, no --restart-cmd), and for a
// server on another machine without --restart-cmd.
func checkCold(t target.Target, o *Options, canDrop bool) error {
	restart := len(o.RestartCmd) == 1
	switch {
	case o.Streams > 1:
		return fmt.Errorf("--cold with --streams %d: a cold run needs the server to itself (one stream's cold run is another's hot one); use --streams 1", o.Streams)
	case restart && t.Dialect().Embedded():
		return fmt.Errorf("--restart-cmd: %s runs inside dbmark, with no server to restart (--cold alone drops the OS page cache)", t.Dialect().Name())
	case !restart && !canDrop:
		return fmt.Errorf("--cold: dropping the OS page cache needs root (and a writable %s): run as root, or give --restart-cmd CMD to restart the server instead", dropCaches)
	case !restart && !onThisMachine(t):
		return fmt.Errorf("--cold: the server is on another machine, whose page cache cannot be dropped from here: give --restart-cmd CMD (a command that restarts it and empties its caches)")
	}
	return nil
}

// onThisMachine says whether the target's server runs here: embedded, on
// a unix socket, or at a loopback or local address.
func onThisMachine(t target.Target) bool {
	if t.Dialect().Embedded() {
		return true
	}
	u, err := url.Parse(t.Redacted())
	if err != nil {
		return false
	}
	q := u.Query()
	if strings.HasPrefix(q.Get("host"), "/") || q.Get("socket") != "" {
		return true
	}
	host := u.Hostname()
	if host == "" || host == "localhost" {
		return true
	}
	if h, err := os.Hostname(); err == nil && strings.EqualFold(h, host) {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

func (c osCold) dropCache() (bool, error) {
	if !c.canDrop() {
		return false, nil
	}
	syscall.Sync() // dirty pages are not dropped: write them first
	if err := os.WriteFile(dropCaches, []byte("3\n"), 0); err != nil {
		return false, fmt.Errorf("drop the OS page cache: %w", err)
	}
	return true, nil
}

// restart runs cmd through the restart command runner that --server-set
// uses too, which waits until tg's server answers again.
func (osCold) restart(ctx context.Context, cmd string, tg target.Target) error {
	if err := restart.Run(ctx, cmd, nil, io.Discard, tg, answerWait); err != nil {
		return fmt.Errorf("--restart-cmd: %w", err)
	}
	return nil
}

// answerWait bounds the wait for a restarted server to answer.
const answerWait = 5 * time.Minute
