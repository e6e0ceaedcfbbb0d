package probe

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/prometheus/procfs"
)

func machine(t *testing.T, name string, dirs ...Dir) *result.Environment {
	t.Helper()
	e := Machine(context.Background(), Options{Root: filepath.Join("testdata", name), Dirs: dirs})
	if e.MachineFacts == nil {
		t.Fatal("no machine facts")
	}
	return e
}

func TestBareMetalWithRAIDAndLVM(t *testing.T) {
	e := machine(t, "baremetal", Dir{"data_dir", "/var/lib/mysql/ibdata"}, Dir{"working_dir", "/home/alice/bench"})
	f := e.MachineFacts
	if e.CPUModel != "Intel(R) Xeon(R) Gold 6240R CPU @ 2.40GHz" || f.Sockets != 2 || f.Cores != 4 {
		t.Errorf("cpu: %q sockets %d cores %d", e.CPUModel, f.Sockets, f.Cores)
	}
	for _, fl := range []string{"aes", "avx2", "avx512f"} {
		if !slices.Contains(f.CPUFlags, fl) {
			t.Errorf("flag %s missing from %v", fl, f.CPUFlags)
		}
	}
	if slices.Contains(f.CPUFlags, "hypervisor") || f.Virtualization != "none" || f.Container != "none" {
		t.Errorf("bare metal seen as virtual: %q %q %v", f.Virtualization, f.Container, f.CPUFlags)
	}
	if f.Governor != "powersave" || f.CPUMaxMHz != 4000 {
		t.Errorf("governor %q max %v", f.Governor, f.CPUMaxMHz)
	}
	if e.Kernel != "6.1.0-18-amd64" || f.Distribution != "Debian GNU/Linux 12 (bookworm)" || e.ClockSrc != "tsc" {
		t.Errorf("kernel %q distribution %q clock %q", e.Kernel, f.Distribution, e.ClockSrc)
	}
	if e.MemoryB != 196608000*1024 || f.SwapUsedBytes != (8388604-7864316-10240)*1024 {
		t.Errorf("memory %d swap used %d", e.MemoryB, f.SwapUsedBytes)
	}
	if f.THP != "always" || f.THPDefrag != "madvise" {
		t.Errorf("thp %q defrag %q", f.THP, f.THPDefrag)
	}
	// Loopback is no NIC; a link that is down has no speed.
	if want := []result.NIC{{Name: "eno1", SpeedMbps: 10000, State: "up"}, {Name: "eno2", State: "down"}}; !reflect.DeepEqual(f.NICs, want) {
		t.Errorf("nics %+v, want %+v", f.NICs, want)
	}
	if len(f.Disks) != 6 {
		t.Fatalf("disks: %+v", f.Disks)
	}
	for _, d := range f.Disks {
		switch d.Name {
		case "sda":
			if d.Model != "ST4000NM0035-1V4" || !*d.Rotational || d.Scheduler != "bfq" || d.QueueDepth != 64 || d.SizeBytes != 7814037168*512 {
				t.Errorf("sda: %+v", d)
			}
		case "nvme0n1":
			if *d.Rotational || d.Scheduler != "none" || d.ReadAheadK != 128 {
				t.Errorf("nvme0n1: %+v", d)
			}
		}
	}
	if len(f.RAID) != 2 {
		t.Fatalf("raid: %+v", f.RAID)
	}
	md0, md1 := f.RAID[0], f.RAID[1]
	if md0.Name != "md0" || md0.Level != "raid1" || md0.SyncAction != "check" || md0.SyncDone != 0.375 ||
		!slices.Equal(md0.Members, []string{"sda2", "sdb2"}) {
		t.Errorf("md0: %+v", md0)
	}
	if md1.Level != "raid10" || md1.ChunkBytes != 512*1024 || md1.SyncAction != "idle" || len(md1.Members) != 4 {
		t.Errorf("md1: %+v", md1)
	}
	if len(f.LVM) != 1 || f.LVM[0].Name != "vgdata-mysql" || !slices.Equal(f.LVM[0].Slaves, []string{"md1"}) {
		t.Errorf("lvm: %+v", f.LVM)
	}
	if len(f.Mounts) != 2 {
		t.Fatalf("mounts: %+v", f.Mounts)
	}
	data, work := f.Mounts[0], f.Mounts[1]
	if data.MountPoint != "/var/lib/mysql" || data.FSType != "xfs" || data.Device != "/dev/mapper/vgdata-mysql" ||
		!slices.Contains(data.Options, "noatime") || !slices.Contains(data.Options, "logbsize=32k") {
		t.Errorf("data dir mount: %+v", data)
	}
	if work.MountPoint != "/home" || work.Device != "/dev/sdc1" {
		t.Errorf("working dir mount: %+v", work)
	}
	if _, ok := f.Unknown["instance_type"]; !ok {
		t.Errorf("a bare-metal server has no instance type, and should say why: %v", f.Unknown)
	}
}

func TestCloudVMWithInstanceType(t *testing.T) {
	e := machine(t, "cloudvm", Dir{"data_dir", "/data/pgdata"})
	f := e.MachineFacts
	if f.InstanceType != "m5.large" || f.SystemVendor != "Amazon EC2" || !strings.HasPrefix(f.Virtualization, "kvm") {
		t.Errorf("instance %q vendor %q virt %q", f.InstanceType, f.SystemVendor, f.Virtualization)
	}
	if e.ClockSrc != "kvm-clock" || f.Governor != "" || f.Unknown["governor"] == "" {
		t.Errorf("clock %q governor %q (%q)", e.ClockSrc, f.Governor, f.Unknown["governor"])
	}
	if len(f.Disks) != 2 || f.Disks[1].Model != "Amazon Elastic Block Store" || f.Disks[1].SizeBytes != 500<<30 {
		t.Errorf("disks: %+v", f.Disks)
	}
	if len(f.RAID) != 0 || len(f.LVM) != 0 {
		t.Errorf("no RAID or LVM here: %+v %+v", f.RAID, f.LVM)
	}
	if len(f.Mounts) != 1 || f.Mounts[0].Device != "/dev/nvme1n1" || f.Mounts[0].FSType != "xfs" {
		t.Errorf("mounts: %+v", f.Mounts)
	}
}

func TestContainerWithoutSys(t *testing.T) {
	e := machine(t, "container", Dir{"working_dir", "/work"})
	f := e.MachineFacts
	if f.Container != "docker" || e.Kernel == "" || e.CPUModel != "AMD EPYC 7B13" {
		t.Errorf("container %q kernel %q cpu %q", f.Container, e.Kernel, e.CPUModel)
	}
	for _, fact := range []string{"sys", "disks", "clocksource", "dmi", "governor", "transparent_hugepages_enabled"} {
		if f.Unknown[fact] == "" {
			t.Errorf("%s: should be unknown with a reason; unknown: %v", fact, f.Unknown)
		}
	}
	if len(f.Mounts) != 1 || f.Mounts[0].FSType != "overlay" {
		t.Errorf("mounts: %+v", f.Mounts)
	}
	for _, o := range f.Mounts[0].Options {
		if strings.Contains(o, "/") {
			t.Errorf("overlay layer path kept in options: %s", o)
		}
	}
}

func TestNothingAtAll(t *testing.T) {
	e := Machine(context.Background(), Options{Root: t.TempDir(), Dirs: []Dir{{"data_dir", "/x"}}})
	for _, fact := range []string{"proc", "sys", "kernel", "cpu", "memory", "mounts"} {
		if e.Unknown[fact] == "" {
			t.Errorf("%s: should be unknown with a reason; unknown: %v", fact, e.Unknown)
		}
	}
}

func TestThisMachineIsQuick(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	// A database's data directory: its size on disk is measured.
	if err := os.MkdirAll(filepath.Join(data, "base"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{1 << 20, 3 << 20} {
		if err := os.WriteFile(filepath.Join(data, "base", strconv.Itoa(i)), bytes.Repeat([]byte{1}, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := Machine(context.Background(), Options{Dirs: []Dir{{"working_dir", dir}, {"data_dir", data}}})
	if e.Kernel == "" || e.CPUs < 1 || e.ClockNowNS <= 0 {
		t.Errorf("live facts missing: %+v", e)
	}
	if len(e.Mounts) != 2 || e.Mounts[0].TotalBytes == 0 {
		t.Fatalf("mounts of %s and %s: %+v (unknown: %v)", dir, data, e.Mounts, e.Unknown)
	}
	if used := e.Mounts[1].UsedBytes; used < 4<<20 || used > 5<<20 || e.Mounts[0].UsedBytes != 0 {
		t.Errorf("data directory holding 4 MiB: used %d bytes (working dir: %d, not measured)", used, e.Mounts[0].UsedBytes)
	}
}

func TestPreflight(t *testing.T) {
	e := machine(t, "baremetal")
	w := Preflight(context.Background(), Check{Env: e, Server: true, Engine: &result.EngineFacts{CacheBytes: 256 << 30}})
	all := strings.Join(w, "\n")
	for _, want := range []string{"RAID md0: a check is running (38% done)", "swap in use", `governor is "powersave"`,
		"transparent huge pages are set to always", "database cache (256.0 GiB) is larger than the machine's memory"} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	if len(w) != 5 {
		t.Errorf("%d warnings, want 5:\n%s", len(w), all)
	}
	for _, l := range w {
		if strings.Contains(l, "\n") {
			t.Errorf("a warning must be one line: %q", l)
		}
	}

	e = machine(t, "cloudvm")
	w = Preflight(context.Background(), Check{Env: e})
	if len(w) != 1 || !strings.Contains(w[0], "clock source is kvm-clock") {
		t.Errorf("cloud VM: %q", w)
	}
	e.Mounts = []result.Mount{{Role: "data_dir", Path: "/data/pg", MountPoint: "/data", FreeBytes: 2 << 30, TotalBytes: 100 << 30}}
	w = Preflight(context.Background(), Check{Env: e, Server: true, Engine: &result.EngineFacts{DataBytes: 5 << 30}})
	if len(w) != 2 || !strings.Contains(w[1], "little free disk for the data dir /data/pg: 2.0 GiB free") {
		t.Errorf("free disk: %q", w)
	}
}

// writeProc writes a fixture file under root/proc.
func writeProc(t *testing.T, root, name, body string) {
	t.Helper()
	p := filepath.Join(root, "proc", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshotPair reads fixture /proc counters twice, one second apart: meminfo
// as given, then stat and diskstats from before and after.
func snapshotPair(t *testing.T, meminfo string, before, after [2]string) (a, b OSSnapshot) {
	t.Helper()
	root := t.TempDir()
	writeProc(t, root, "meminfo", meminfo)
	r, err := NewOSReader(root)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []*OSSnapshot{&a, &b} {
		files := [][2]string{before, after}[i]
		writeProc(t, root, "stat", files[0])
		writeProc(t, root, "diskstats", files[1])
		if *s, err = r.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	b.At = a.At.Add(time.Second)
	return a, b
}

// TestOSRates checks the counter arithmetic against a second snapshot
// whose counters moved by known amounts in one second.
func TestOSRates(t *testing.T) {
	// +1 s: 100 ticks of CPU (user 30, system 10+5 softirq, iowait 20, idle 35),
	// 300 more context switches, 100 reads and 50 writes of 1 MiB in total
	// each way, 600 ms of read and write time, 500 ms busy, 1500 ms weighted.
	a, b := snapshotPair(t,
		"MemTotal: 1000 kB\nMemAvailable: 600 kB\nCached: 300 kB\nDirty: 20 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
		[2]string{
			"cpu  100 0 50 800 40 0 10 0 0 0\ncpu0 100 0 50 800 40 0 10 0 0 0\nctxt 1000\n",
			" 259 0 nvme0n1 100 0 2048 50 200 0 4096 150 0 1000 2000 0 0 0 0 0 0\n",
		},
		[2]string{
			"cpu  130 0 60 835 60 0 15 0 0 0\ncpu0 130 0 60 835 60 0 15 0 0 0\nctxt 1300\n",
			" 259 0 nvme0n1 200 0 4096 350 250 0 6144 450 0 1500 3500 0 0 0 0 0 0\n",
		})
	got := map[string]float64{}
	for _, rd := range OSRates(a, b) {
		got[rd.Name] = rd.Value
	}
	want := map[string]float64{
		"os.cpu.user": 30, "os.cpu.system": 15, "os.cpu.iowait": 20, "os.cpu.idle": 35, "os.cpu.steal": 0,
		"os.context_switches":      300,
		"os.disk.nvme0n1.reads":    100,
		"os.disk.nvme0n1.writes":   50,
		"os.disk.nvme0n1.read_mib": 1, "os.disk.nvme0n1.write_mib": 1,
		"os.disk.nvme0n1.await": 4, // 600 ms over 150 I/Os
		"os.disk.nvme0n1.util":  50,
		"os.disk.nvme0n1.queue": 1.5,
		"os.mem.used":           400 * 1024, "os.mem.page_cache": 300 * 1024, "os.mem.dirty": 20 * 1024,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}

// TestNetRates: each interface's bytes a second, received and sent;
// loopback, and an interface that never carried a byte, have none.
func TestNetRates(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, "stat", "cpu  100 0 50 800 40 0 10 0 0 0\nctxt 1000\n")
	writeProc(t, root, "diskstats", "")
	writeProc(t, root, "meminfo", "MemTotal: 1000 kB\n")
	r, err := NewOSReader(root)
	if err != nil {
		t.Fatal(err)
	}
	const head = "Inter-|   Receive |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
	read := func(lo, eth uint64) OSSnapshot {
		t.Helper()
		writeProc(t, root, "net/dev", head+
			fmt.Sprintf("    lo: %d 10 0 0 0 0 0 0 %d 10 0 0 0 0 0 0\n", lo, lo)+
			fmt.Sprintf("  eth0: %d 10 0 0 0 0 0 0 %d 10 0 0 0 0 0 0\n", eth, eth/2)+
			"  ifb0: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")
		s, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := read(1<<30, 1<<20)
	b := read(2<<30, 5<<20)
	b.At = a.At.Add(2 * time.Second)
	got := map[string]float64{}
	for _, rd := range OSRates(a, b) {
		if strings.HasPrefix(rd.Name, "os.net.") {
			got[rd.Name] = rd.Value
		}
	}
	want := map[string]float64{"os.net.eth0.rx_mib": 2, "os.net.eth0.tx_mib": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

// TestReschedInterrupts reads the RES line of /proc/interrupts, summed
// over the CPUs, and turns two readings into a rate; without the line
// there is no such counter.
func TestReschedInterrupts(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, "stat", "cpu  100 0 50 800 40 0 10 0 0 0\nctxt 1000\n")
	writeProc(t, root, "diskstats", "")
	writeProc(t, root, "meminfo", "MemTotal: 1000 kB\n")
	// procfs finds /proc/interrupts through a process: /proc/self.
	if err := os.MkdirAll(filepath.Join(root, "proc", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("1", filepath.Join(root, "proc", "self")); err != nil {
		t.Fatal(err)
	}
	r, err := NewOSReader(root)
	if err != nil {
		t.Fatal(err)
	}
	read := func(interrupts string) OSSnapshot {
		t.Helper()
		writeProc(t, root, "interrupts", interrupts)
		s, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const head = "           CPU0       CPU1       \n  1:          9          0   IO-APIC   1-edge      i8042\n"
	a := read(head + "RES:       1000        500   Rescheduling interrupts\nCAL:         7          7   Function call interrupts\n")
	b := read(head + "RES:       1300        700   Rescheduling interrupts\nCAL:         9          9   Function call interrupts\n")
	if !a.HasResched || a.Resched != 1500 || b.Resched != 2000 {
		t.Fatalf("resched %v %d then %d, want 1500 then 2000", a.HasResched, a.Resched, b.Resched)
	}
	b.At = a.At.Add(2 * time.Second)
	rate := func(a, b OSSnapshot) (float64, bool) {
		for _, rd := range OSRates(a, b) {
			if rd.Name == "os.resched_interrupts" {
				return rd.Value, true
			}
		}
		return 0, false
	}
	if v, ok := rate(a, b); !ok || v != 250 {
		t.Fatalf("os.resched_interrupts = %v (present %v), want 250/s", v, ok)
	}
	c := read(head)
	c.At = b.At.Add(time.Second)
	if c.HasResched {
		t.Fatal("a RES count without a RES line")
	}
	if v, ok := rate(b, c); ok {
		t.Fatalf("os.resched_interrupts = %v without a RES line", v)
	}
}

// TestOtherActivity checks the busy-machine warning's arithmetic: CPU that
// this process used is not "other", and a device's utilisation is named.
func TestOtherActivity(t *testing.T) {
	// +1 s: 100 ticks, 60 of them busy (user 50, system 10); nvme0n1 busy
	// 500 ms of the second, sda 5 ms.
	a, b := snapshotPair(t, "MemTotal: 1000 kB\nMemAvailable: 600 kB\n",
		[2]string{
			"cpu  100 0 50 800 40 0 10 0 0 0\nctxt 1000\n",
			" 259 0 nvme0n1 100 0 2048 50 200 0 4096 150 0 1000 2000 0 0 0 0 0 0\n 8 0 sda 1 0 8 1 1 0 8 1 0 10 10 0 0 0 0 0 0\n",
		},
		[2]string{
			"cpu  150 0 60 840 40 0 10 0 0 0\nctxt 1300\n",
			" 259 0 nvme0n1 200 0 4096 350 250 0 6144 450 0 1500 3500 0 0 0 0 0 0\n 8 0 sda 2 0 16 2 1 0 8 1 0 15 15 0 0 0 0 0 0\n",
		})

	w := otherActivity(a, b)
	if len(w) != 2 || !strings.Contains(w[0], "other processes are using 60% of the CPUs") ||
		!strings.Contains(w[1], "disks are busy before the run (nvme0n1 50%)") {
		t.Errorf("busy machine: %q", w)
	}
	// The same second with 0.4 s of it spent by this process: 20% is others'.
	b.SelfCPU = a.SelfCPU + 0.4
	w = otherActivity(a, b)
	if len(w) != 1 || !strings.HasPrefix(w[0], "disks are busy") {
		t.Errorf("own CPU counted as others': %q", w)
	}
}

// TestPreflightSeesABusyProcess runs a process that spins on one CPU while
// the preflight watches the live machine: its CPU must be reported.
func TestPreflightSeesABusyProcess(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc on this machine")
	}
	// One spinning process is 100/NCPU percent of the machine; the warning
	// starts at 25%, so with more than 3 CPUs it cannot show.
	if n := runtime.NumCPU(); 100/float64(n) <= busyCPUPct {
		t.Skipf("%d CPUs: one busy process stays under the threshold", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spin := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = spin.Wait() }()
	e := &result.Environment{MachineFacts: &result.MachineFacts{}}
	w := Preflight(ctx, Check{Env: e, Sample: 500 * time.Millisecond})
	if !slices.ContainsFunc(w, func(l string) bool { return strings.HasPrefix(l, "other processes are using") }) {
		t.Errorf("a process spinning on a CPU went unnoticed: %q", w)
	}
}

// TestOSRatesSharesStayWithin100: with all the time in one part, that
// part's difference can come out a rounding above the total's (0.02 - 0.01
// against 1234.58 - 1234.57); the share is still 100%, not 100.00000000009.
func TestOSRatesSharesStayWithin100(t *testing.T) {
	at := time.Now()
	a := OSSnapshot{At: at, NCPU: 1, CPU: procfs.CPUStat{User: 0.01, Idle: 1234.56}}
	b := OSSnapshot{At: at.Add(time.Second), NCPU: 1, CPU: procfs.CPUStat{User: 0.02, Idle: 1234.56}}
	for _, rd := range OSRates(a, b) {
		if strings.HasPrefix(rd.Name, "os.cpu.") && (rd.Value < 0 || rd.Value > 100) {
			t.Errorf("%s = %v, want a share within 0 and 100", rd.Name, rd.Value)
		}
		if rd.Name == "os.cpu.user" && rd.Value != 100 {
			t.Errorf("os.cpu.user = %v, want 100", rd.Value)
		}
	}
}
