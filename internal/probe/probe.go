// Package probe collects the facts about the machine that every result
// carries. (A fuller inventory — disks, RAID, mounts, counters over time —
// builds on this.)
package probe

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

// Machine returns the machine's facts.
func Machine() *result.Environment {
	e := &result.Environment{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoMaxProcs: runtime.GOMAXPROCS(0)}
	e.Hostname, _ = os.Hostname()
	e.Kernel = readTrim("/proc/sys/kernel/osrelease")
	e.ClockSrc = readTrim("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	e.CPUModel = cpuModel()
	e.MemoryB = memTotal()
	e.ClockNowNS = clockCost()
	return e
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseUint(fields[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// clockCost measures what one monotonic clock reading costs, because every
// latency recorded pays it twice.
func clockCost() float64 {
	const n = 200_000
	start := time.Now()
	var last time.Time
	for i := 0; i < n; i++ {
		last = time.Now()
	}
	return float64(last.Sub(start).Nanoseconds()) / n
}
