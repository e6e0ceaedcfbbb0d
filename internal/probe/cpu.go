package probe

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// flagsThatMatter are the CPU flags that change what a database or the
// benchmark costs: checksums and encryption, vector units, a reliable TSC.
var flagsThatMatter = []string{
	"aes", "avx", "avx2", "avx512f", "sse4_2", "pclmulqdq", "sha_ni", "rdrand",
	"constant_tsc", "nonstop_tsc", "hypervisor",
}

var errNoSys = fmt.Errorf("no /sys: %w", os.ErrNotExist)

func (c *collector) cpu() {
	if c.proc == nil {
		c.miss("cpu", fmt.Errorf("no /proc: %w", os.ErrNotExist))
		return
	}
	infos, err := c.proc.CPUInfo()
	if err != nil || len(infos) == 0 {
		if err == nil {
			err = errors.New("cpuinfo lists no CPU")
		}
		c.miss("cpu", err)
		return
	}
	c.e.CPUModel = infos[0].ModelName
	sockets := map[string]bool{}
	cores := map[string]bool{}
	for _, ci := range infos {
		sockets[ci.PhysicalID] = true
		cores[ci.PhysicalID+"/"+ci.CoreID] = true
		c.f.CPUMHz = max(c.f.CPUMHz, ci.CPUMHz)
	}
	c.f.Sockets, c.f.Cores = len(sockets), len(cores)
	for _, fl := range flagsThatMatter {
		if slices.Contains(infos[0].Flags, fl) {
			c.f.CPUFlags = append(c.f.CPUFlags, fl)
		}
	}
	c.governor()
}

// governor reads cpufreq's scaling governor; virtual machines mostly have
// none, which is a fact too.
func (c *collector) governor() {
	if c.sys == nil {
		c.miss("governor", errNoSys)
		return
	}
	freqs, err := c.sys.SystemCpufreq()
	if err != nil {
		c.miss("governor", fmt.Errorf("no cpufreq (usual in virtual machines): %w", err))
		return
	}
	govs := map[string]bool{}
	for _, fq := range freqs {
		if fq.Governor != "" {
			govs[fq.Governor] = true
		}
		if fq.CpuinfoMaximumFrequency != nil {
			c.f.CPUMaxMHz = max(c.f.CPUMaxMHz, float64(*fq.CpuinfoMaximumFrequency)/1000)
		}
	}
	names := make([]string, 0, len(govs))
	for g := range govs {
		names = append(names, g)
	}
	sort.Strings(names)
	switch len(names) {
	case 0:
		c.miss("governor", errors.New("no cpufreq governor (usual in virtual machines)"))
	case 1:
		c.f.Governor = names[0]
	default:
		c.f.Governor = "mixed: " + strings.Join(names, ",")
	}
}

func (c *collector) memory() {
	if c.proc == nil {
		c.miss("memory", fmt.Errorf("no /proc: %w", os.ErrNotExist))
		return
	}
	mi, err := c.proc.Meminfo()
	if err != nil {
		c.miss("memory", err)
		return
	}
	if mi.MemTotalBytes != nil {
		c.e.MemoryB = *mi.MemTotalBytes
	}
	if mi.SwapTotalBytes != nil {
		c.f.SwapBytes = *mi.SwapTotalBytes
		if mi.SwapFreeBytes != nil {
			used := *mi.SwapTotalBytes - *mi.SwapFreeBytes
			if mi.SwapCachedBytes != nil && *mi.SwapCachedBytes < used {
				used -= *mi.SwapCachedBytes // also in memory: not a cost
			}
			c.f.SwapUsedBytes = used
		}
	}
}

func (c *collector) clock() {
	if c.sys == nil {
		c.miss("clocksource", errNoSys)
		return
	}
	cs, err := c.sys.ClockSources()
	if err != nil || len(cs) == 0 {
		if err == nil {
			err = fmt.Errorf("no clocksource in /sys: %w", os.ErrNotExist)
		}
		c.miss("clocksource", err)
		return
	}
	c.e.ClockSrc = cs[0].Current
}

// thp reads transparent huge pages' mode: the word in brackets.
func (c *collector) thp() {
	for _, x := range []struct {
		file string
		dst  *string
	}{{"enabled", &c.f.THP}, {"defrag", &c.f.THPDefrag}} {
		v, err := c.readTrim("sys", "kernel", "mm", "transparent_hugepage", x.file)
		if err != nil {
			c.miss("transparent_hugepages_"+x.file, err)
			continue
		}
		*x.dst = bracketed(v)
	}
}

// bracketed returns the selected word of a sysfs choice ("always [madvise]
// never" -> "madvise"), or the whole value when none is marked.
func bracketed(v string) string {
	if i := strings.IndexByte(v, '['); i >= 0 {
		if j := strings.IndexByte(v[i:], ']'); j > 0 {
			return v[i+1 : i+j]
		}
	}
	return v
}
