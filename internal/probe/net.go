package probe

import (
	"os"
	"sort"
	"strconv"

	"github.com/dbmark/dbmark/internal/result"
)

// nics lists the network interfaces from /sys/class/net, loopback apart,
// with the link speed their drivers report (none on most virtual NICs,
// whose "speed" is -1 or unreadable).
func (c *collector) nics() {
	ents, err := os.ReadDir(c.path("sys", "class", "net"))
	if err != nil {
		c.miss("nics", err)
		return
	}
	for _, e := range ents {
		name := e.Name()
		if loopback(c, name) {
			continue
		}
		n := result.NIC{Name: name}
		n.State, _ = c.readTrim("sys", "class", "net", name, "operstate")
		// The speed of a link that is down, or of a virtual one, cannot
		// be read (EINVAL) or is -1: unknown, not a fact that is missing.
		if s, err := c.readTrim("sys", "class", "net", name, "speed"); err == nil {
			if v, err := strconv.ParseInt(s, 10, 64); err == nil && v > 0 {
				n.SpeedMbps = uint64(v)
			}
		}
		c.f.NICs = append(c.f.NICs, n)
	}
	sort.Slice(c.f.NICs, func(i, j int) bool { return c.f.NICs[i].Name < c.f.NICs[j].Name })
}

// loopback says whether the interface is a loopback one (ARPHRD_LOOPBACK,
// 772): its traffic never leaves the machine, so it is no limit.
func loopback(c *collector, name string) bool {
	t, err := c.readTrim("sys", "class", "net", name, "type")
	return name == "lo" || (err == nil && t == "772")
}
