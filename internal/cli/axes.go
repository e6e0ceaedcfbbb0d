package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/serverset"
	"github.com/dbmark/dbmark/internal/sweep"
)

// axisValue lets a single-valued flag take a list or a range: each value is
// checked by the flag's own parser, the first is left set (so validation
// sees a real value), and all are kept as a sweep axis.
type axisValue struct {
	pflag.Value
	name   string
	set    *axisSet
	values []string
}

func (v *axisValue) Set(s string) error {
	if !sweep.IsMulti(s) {
		return v.Value.Set(s)
	}
	vals, err := sweep.Values(s)
	if err != nil {
		return err
	}
	for _, x := range vals {
		if err := v.Value.Set(x); err != nil {
			return fmt.Errorf("%s: %w", x, err)
		}
	}
	if err := v.Value.Set(vals[0]); err != nil {
		return err
	}
	if v.values == nil {
		v.set.order = append(v.set.order, v)
	}
	v.values = vals
	return nil
}

// axisSet is the flags of one command line given as lists or ranges, in
// the order they were first given.
type axisSet struct {
	order []*axisValue
	byKey map[string]*axisValue
}

// notAxes are options that say where, not what, or already take lists.
var notAxes = map[string]bool{"target": true, "store": true, "json": true, "help": true, "zip": true, "rows-by": true, "cols-by": true, "format": true,
	"server-set": true, "restart-cmd": true, "start-at": true, "client-id": true, "metrics-addr": true}

// sweepable makes every single-valued flag of fs accept a list or a range.
func sweepable(fs *pflag.FlagSet) *axisSet {
	set := &axisSet{byKey: map[string]*axisValue{}}
	fs.VisitAll(func(fl *pflag.Flag) {
		if notAxes[fl.Name] {
			return
		}
		if _, isSlice := fl.Value.(pflag.SliceValue); isSlice {
			return
		}
		// A flag given once per item (-f, -b, --server-set) is a list
		// already: each of its values goes to every cell.
		if _, isRepeated := fl.Value.(repeated); isRepeated {
			return
		}
		v := &axisValue{Value: fl.Value, name: fl.Name, set: set}
		fl.Value = v
		set.byKey[fl.Name] = v
	})
	return set
}

// axes are the swept options in the order given.
func (s *axisSet) axes() []sweep.Axis {
	out := make([]sweep.Axis, len(s.order))
	for i, v := range s.order {
		out[i] = sweep.Axis{Name: v.name, Values: v.values}
	}
	return out
}

// canonicalArgs writes the options changed in fs back as a command line,
// --name=value each and lists as given: what a sweep stores to be resumed,
// and what each of its runs parses afresh.
func canonicalArgs(fs *pflag.FlagSet) []string {
	var out []string
	var set *axisSet
	// VisitAll and Changed, not Visit: cobra hands out copies of its flag
	// sets that share the flags but not the record of which were set.
	fs.VisitAll(func(fl *pflag.Flag) {
		if !fl.Changed || fl.Name == "help" {
			return
		}
		val := fl.Value.String()
		switch v := fl.Value.(type) {
		case repeated:
			for _, a := range v.Args() {
				out = append(out, "--"+fl.Name+"="+a)
			}
			return
		case *axisValue:
			if v.values != nil {
				set = v.set // axes follow, in the order given: it sets the table's layout
				return
			}
		case pflag.SliceValue:
			val = strings.Join(v.GetSlice(), ",")
		}
		out = append(out, "--"+fl.Name+"="+val)
	})
	if set != nil {
		for _, v := range set.order {
			out = append(out, "--"+v.name+"="+strings.Join(v.values, ","))
		}
	}
	return out
}

// repeated is a flag given once per item (--server-set), written back the
// same way.
type repeated interface{ Args() []string }

// percent is a flag of a percentage: "3%" or "3" both mean 0.03.
type percent float64

func (p *percent) String() string { return strconv.FormatFloat(float64(*p)*100, 'g', -1, 64) + "%" }
func (p *percent) Type() string   { return "percent" }
func (p *percent) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil {
		return fmt.Errorf("not a percentage (use 3%% or 3)")
	}
	*p = percent(f / 100)
	return nil
}

// hasAxes reports whether any flag of fs was given a list or a range.
func hasAxes(fs *pflag.FlagSet) bool {
	found := false
	fs.VisitAll(func(fl *pflag.Flag) {
		if v, ok := fl.Value.(*axisValue); ok && v.values != nil {
			found = true
		}
		if v, ok := fl.Value.(*serverset.Flag); ok && len(v.Axes()) > 0 {
			found = true
		}
	})
	return found
}
