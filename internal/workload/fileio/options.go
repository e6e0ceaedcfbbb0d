package fileio

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Size is a byte count given with sysbench's suffixes: K, M, G, T (powers
// of 1024; a trailing B or iB is accepted too).
type Size int64

func (s *Size) String() string { return FormatSize(int64(*s)) }
func (s *Size) Type() string   { return "size" }

// Set parses one size. Lists and FROM:TO:STEP ranges are sweep axes, which
// the sweep splits before a value reaches this flag.
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

// ParseSize reads "16K", "2G", "1.5G" or a plain number of bytes.
func ParseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	if strings.ContainsAny(t, ",:") {
		return 0, fmt.Errorf("%q: one size here (lists and FROM:TO:STEP ranges are for dbmark sweep)", v)
	}
	u := strings.ToUpper(t)
	u = strings.TrimSuffix(strings.TrimSuffix(u, "IB"), "B")
	mult := int64(1)
	if u != "" {
		switch u[len(u)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			u = u[:len(u)-1]
		}
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q: not a size (use a number of bytes or 16K, 256M, 2G, 1T)", v)
	}
	return int64(f * float64(mult)), nil
}

// FormatSize prints n with the largest suffix that keeps it whole.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suf string
		m   int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n != 0 && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.suf
		}
	}
	return strconv.FormatInt(n, 10)
}

// extraFlags is sysbench's --file-extra-flags: a list of sync, dsync and
// direct, setting dbmark's --sync, --dsync and --direct.
type extraFlags struct{ o *Options }

func (e extraFlags) Type() string { return "list" }
func (e extraFlags) String() string {
	var out []string
	if e.o == nil {
		return ""
	}
	if e.o.Sync {
		out = append(out, "sync")
	}
	if e.o.DSync {
		out = append(out, "dsync")
	}
	if e.o.Direct {
		out = append(out, "direct")
	}
	return strings.Join(out, ",")
}
func (e extraFlags) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		switch strings.TrimSpace(f) {
		case "sync":
			e.o.Sync = true
		case "dsync":
			e.o.DSync = true
		case "direct":
			e.o.Direct = true
		case "":
		default:
			return fmt.Errorf("%q: use sync, dsync or direct (comma-separated)", f)
		}
	}
	return nil
}

// alias adds a hidden second name for a flag, sharing its value: sysbench's
// spellings of dbmark's options.
func alias(fs *pflag.FlagSet, name, of string) {
	f := fs.Lookup(of)
	fl := fs.VarPF(f.Value, name, "", "same as --"+of)
	fl.NoOptDefVal = f.NoOptDefVal
	_ = fs.MarkHidden(name)
}
