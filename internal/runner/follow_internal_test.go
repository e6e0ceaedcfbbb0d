package runner

import (
	"strconv"
	"strings"
	"testing"
)

// statCPU counts fields from the last ')': a command name may hold spaces
// and parentheses.
func TestStatCPUReadsTheProcessorField(t *testing.T) {
	fields := make([]string, 0, 50)
	for n := 3; n <= 52; n++ {
		fields = append(fields, strconv.Itoa(n*10))
	}
	fields[0] = "S"
	fields[39-3] = "7"
	for _, comm := range []string{"postgres", "we ) ird (x) y"} {
		line := "4242 (" + comm + ") " + strings.Join(fields, " ") + "\n"
		if cpu, ok := statCPU([]byte(line)); !ok || cpu != 7 {
			t.Errorf("comm %q: CPU %d (%v), want 7", comm, cpu, ok)
		}
	}
	for _, bad := range []string{"", "4242 postgres S 1", "4242 (postgres) S 1 2 3"} {
		if cpu, ok := statCPU([]byte(bad)); ok {
			t.Errorf("%q: CPU %d, want none", bad, cpu)
		}
	}
}
