package probe

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

// Busy watches the machine for d and names what would make a run's
// numbers misleading if it started now: a RAID sync, CPU that is not
// this process's, busy disks. Nothing named: the machine is idle.
func Busy(ctx context.Context, root string, d time.Duration) []string {
	a, b, ok := watch(ctx, root, d)
	if !ok {
		return nil
	}
	var w []string
	for _, s := range b.Syncs {
		w = append(w, fmt.Sprintf("RAID %s: a %s is running (%.0f%% done, %s left)", s.Name, s.Action, 100*s.Done, roughly(s.LeftS)))
	}
	return append(w, otherActivity(a, b)...)
}

// WaitIdle waits until Busy names nothing, or limit has passed. say is
// told once what is waited for. It returns how long it waited and what
// was still busy when it gave up (nothing when the machine went idle).
func WaitIdle(ctx context.Context, root string, limit time.Duration, say func(string)) (time.Duration, []string) {
	began := time.Now()
	told := false
	for {
		busy := Busy(ctx, root, time.Second)
		if len(busy) == 0 || ctx.Err() != nil {
			return time.Since(began), nil
		}
		if time.Since(began) >= limit {
			return time.Since(began), busy
		}
		if !told {
			say(fmt.Sprintf("waiting up to %s for the machine to be idle: %s", limit, strings.Join(busy, "; ")))
			told = true
		}
	}
}

// roughly is a duration as a person would say it.
func roughly(s float64) string {
	switch {
	case s <= 0:
		return "time unknown"
	case s < 90:
		return fmt.Sprintf("about %.0f s", s)
	case s < 180*60:
		return fmt.Sprintf("about %.0f min", s/60)
	}
	return fmt.Sprintf("about %.1f h", s/3600)
}

// swapGrowth is how much more swap a run may come to use before it is
// named: less is the kernel's housekeeping.
const swapGrowth = 16 << 20

// DuringRun names what the machine did during a run, read from its
// sampled counters, that made its numbers lower than the machine's: a
// RAID sync that began (or ran) during it, swap use that grew, CPUs
// throttled for heat. Each line says when, on the run's time axis.
func DuringRun(c *result.Counters) []string {
	if c == nil {
		return nil
	}
	var first, last float64 = math.Inf(1), 0
	byName := map[string]*result.CounterSeries{}
	for i := range c.Series {
		s := &c.Series[i]
		byName[s.Name] = s
		if strings.HasPrefix(s.Name, "os.") && len(s.Points) > 0 {
			first = min(first, s.Points[0][0])
			last = max(last, s.Points[len(s.Points)-1][0])
		}
	}
	var w []string
	var arrays []string
	for name := range byName {
		if a, ok := strings.CutPrefix(name, "os.raid."); ok && strings.HasSuffix(a, ".sync_pct") {
			arrays = append(arrays, strings.TrimSuffix(a, ".sync_pct"))
		}
	}
	sort.Strings(arrays)
	for _, a := range arrays {
		pct := byName["os.raid."+a+".sync_pct"].Points
		if len(pct) == 0 {
			continue
		}
		left := ""
		if l := byName["os.raid."+a+".sync_left"]; l != nil && len(l.Points) > 0 {
			left = ", " + roughly(l.Points[len(l.Points)-1][1]) + " left"
		}
		t0, t1 := pct[0][0], pct[len(pct)-1][0]
		p0, p1 := pct[0][1], pct[len(pct)-1][1]
		switch {
		case t0 > first:
			w = append(w, fmt.Sprintf("RAID %s: a sync (check, resync or rebuild) began %.0f s into the run (%.0f%% done by its end%s): disk throughput was lower from then on; run again when it ends (--wait-idle waits for it)",
				a, t0, p1, left))
		case t1 < last:
			w = append(w, fmt.Sprintf("RAID %s: a sync ran until %.0f s into the run (%.0f%% to %.0f%%): disk throughput was lower until then", a, t1, p0, p1))
		default:
			w = append(w, fmt.Sprintf("RAID %s: a sync ran through the whole run (%.0f%% to %.0f%%%s): disk throughput was lower throughout", a, p0, p1, left))
		}
	}
	if s := byName["os.mem.swap_used"]; s != nil && len(s.Points) > 1 {
		base, peak, at := s.Points[0][1], s.Points[0][1], 0.0
		for _, p := range s.Points {
			if p[1] > peak {
				peak, at = p[1], p[0]
			}
		}
		if peak-base > swapGrowth {
			w = append(w, fmt.Sprintf("swap use grew by %s during the run (to %s at %.0f s): memory ran short, and paging slowed the run",
				BytesIEC(uint64(peak-base)), BytesIEC(uint64(peak)), at))
		}
	}
	if s := byName["os.cpu.throttles"]; s != nil {
		n, at := 0.0, -1.0
		prev := first
		for _, p := range s.Points {
			if e := p[1] * (p[0] - prev); e > 0.5 {
				n += e
				if at < 0 {
					at = p[0]
				}
			}
			prev = p[0]
		}
		if n >= 1 {
			w = append(w, fmt.Sprintf("the CPUs were throttled for heat about %.0f times during the run (first by %.0f s): their clock was lowered (check cooling and power limits)", n, at))
		}
	}
	return w
}
