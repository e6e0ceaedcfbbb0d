package runner

import (
	"syscall"
	"time"
)

// cpuMark is the process's user and system time at one instant.
type cpuMark struct {
	user, system time.Duration
	ok           bool
}

// readCPU reads the process's CPU time so far: one getrusage call, made
// at the measured window's two ends only.
func readCPU() cpuMark {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuMark{}
	}
	return cpuMark{user: time.Duration(ru.Utime.Nano()), system: time.Duration(ru.Stime.Nano()), ok: true}
}
