package testsrv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Freeze stops every process of the server with SIGSTOP, as a machine
// that stalls does (a hypervisor's pause, swapping): connections stay
// open and nothing is answered until thaw sends SIGCONT. PostgreSQL's
// backends are sessions of their own, so each child of the postmaster is
// stopped as well as the postmaster.
func (s *Server) Freeze() (thaw func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		return nil, errors.New("freeze: the server is not running")
	}
	pid, err := s.pid()
	if err != nil {
		return nil, fmt.Errorf("freeze: %w", err)
	}
	var stopped []int
	thaw = func() {
		for _, p := range stopped {
			_ = syscall.Kill(p, syscall.SIGCONT)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("freeze: SIGSTOP %d: %w", pid, err)
	}
	stopped = append(stopped, pid)
	// The postmaster stopped forks no more children.
	for _, p := range children(pid) {
		if syscall.Kill(p, syscall.SIGSTOP) == nil {
			stopped = append(stopped, p)
		}
	}
	return thaw, nil
}

// pidFromFile reads the first line of a server's pid file.
func pidFromFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0, fmt.Errorf("%s: no pid on its first line", filepath.Base(path))
	}
	return pid, nil
}

// children are the processes whose parent is pid, from /proc.
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == pid {
			if p, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}
