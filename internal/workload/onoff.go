package workload

import (
	"errors"
	"strconv"

	"github.com/spf13/pflag"
)

// OnOff is a boolean flag that takes sysbench's spellings, on and off, as
// well as Go's (true, false, 1, 0, t, f...). As sysbench does, it refuses
// the rest (yes, no, ON): a mistake gets the same outcome with either
// tool. Given with no value it means on.
type OnOff bool

func (b *OnOff) String() string   { return strconv.FormatBool(bool(*b)) }
func (b *OnOff) Type() string     { return "bool" }
func (b *OnOff) IsBoolFlag() bool { return true }
func (b *OnOff) Set(v string) error {
	switch v {
	case "on":
		*b = true
		return nil
	case "off":
		*b = false
		return nil
	}
	x, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("use on or off")
	}
	*b = OnOff(x)
	return nil
}

// OnOffVar binds p to the flag name of fs: a boolean that takes on and off.
func OnOffVar(fs *pflag.FlagSet, p *bool, name string, value bool, usage string) {
	*p = value
	fs.Var((*OnOff)(p), name, usage)
	fs.Lookup(name).NoOptDefVal = "true"
}
