package randgen

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind is a --rand-type value.
type Kind uint8

// The distributions of --rand-type.
const (
	// KindUniform: every value of the range is equally likely.
	KindUniform Kind = iota
	// KindGaussian: the mean of rand-spec-iter uniform draws, a bell
	// curve centred on the middle of the range.
	KindGaussian
	// KindSpecial: sysbench 1.0's "hot spot" distribution, where
	// rand-spec-res percent of draws hit the middle rand-spec-pct percent
	// of the range and the rest follow the gaussian-like curve.
	KindSpecial
	// KindPareto: heavily skewed towards the low end, shape rand-pareto-h.
	KindPareto
	// KindZipfian: P(lo+k-1) is proportional to 1/k^rand-zipfian-exp.
	KindZipfian
)

// String returns the --rand-type spelling of k.
func (k Kind) String() string {
	if name, ok := kindName(k); ok {
		return name
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

func kindName(k Kind) (string, bool) {
	switch k {
	case KindUniform:
		return "uniform", true
	case KindGaussian:
		return "gaussian", true
	case KindSpecial:
		return "special", true
	case KindPareto:
		return "pareto", true
	case KindZipfian:
		return "zipfian", true
	}
	return "", false
}

// ParseKind parses a --rand-type value.
func ParseKind(s string) (Kind, error) {
	for k := KindUniform; k <= KindZipfian; k++ {
		if name, _ := kindName(k); name == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("invalid rand-type %q: want one of uniform, gaussian, special, pareto, zipfian", s)
}

// Set parses s into k, so that *Kind is a flag.Value.
func (k *Kind) Set(s string) error {
	v, err := ParseKind(s)
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Type names the value for pflag.Value.
func (k *Kind) Type() string { return "rand-type" }

// Dist is the random-number configuration of a run, the counterpart of
// sysbench's --rand-* options. Build it with [DefaultDist], [ParseDist] or
// [Dist.SetOption], and check it with [Dist.Validate] before use.
type Dist struct {
	Kind       Kind    // --rand-type
	SpecIter   int     // --rand-spec-iter: uniform draws averaged by gaussian and special
	SpecPct    int     // --rand-spec-pct: size of the special hot region, percent of the range
	SpecRes    int     // --rand-spec-res: percent of special draws that go to the hot region
	ParetoH    float64 // --rand-pareto-h: Pareto shape; smaller is more skewed, 0.5 is uniform
	ZipfianExp float64 // --rand-zipfian-exp: Zipf exponent (theta); 0 is uniform
}

// Defaults of sysbench 1.0. sysbench 1.1 dropped "special" from --rand-type
// and made "uniform" the default; 1.0 (every 1.0.x release) defaults to
// "special". --rand-zipfian-exp only exists after 1.0; its default is 0.8.
const (
	DefaultKind       = KindSpecial
	DefaultSpecIter   = 12
	DefaultSpecPct    = 1
	DefaultSpecRes    = 75
	DefaultParetoH    = 0.2
	DefaultZipfianExp = 0.8
)

// DefaultDist returns sysbench 1.0's defaults.
func DefaultDist() Dist {
	return Dist{
		Kind:       DefaultKind,
		SpecIter:   DefaultSpecIter,
		SpecPct:    DefaultSpecPct,
		SpecRes:    DefaultSpecRes,
		ParetoH:    DefaultParetoH,
		ZipfianExp: DefaultZipfianExp,
	}
}

// Option describes one command-line option understood by [Dist.SetOption],
// for registering flags with whatever flag package the CLI uses.
type Option struct {
	Name    string // without leading dashes, e.g. "rand-type"
	Default string
	Usage   string
}

// Options lists the options [Dist.SetOption] accepts, with sysbench 1.0's
// defaults.
func Options() []Option {
	return []Option{
		{"rand-type", DefaultKind.String(), "random numbers distribution {uniform, gaussian, special, pareto, zipfian}"},
		{"rand-spec-iter", strconv.Itoa(DefaultSpecIter), "number of iterations for the gaussian and special distributions"},
		{"rand-spec-pct", strconv.Itoa(DefaultSpecPct), "percentage of values treated as 'special' (hot) by the special distribution"},
		{"rand-spec-res", strconv.Itoa(DefaultSpecRes), "percentage of 'special' (hot) values to use in the special distribution"},
		{"rand-pareto-h", strconv.FormatFloat(DefaultParetoH, 'g', -1, 64), "shape parameter for the Pareto distribution"},
		{"rand-zipfian-exp", strconv.FormatFloat(DefaultZipfianExp, 'g', -1, 64), "shape parameter (exponent, theta) for the Zipfian distribution"},
	}
}

// SetOption sets one sysbench option by name ("rand-type" or "--rand-type")
// from its command-line text. It checks syntax only; use [Dist.Validate]
// for ranges.
func (d *Dist) SetOption(name, value string) error {
	name = strings.TrimLeft(name, "-")
	var err error
	switch name {
	case "rand-type":
		return d.Kind.Set(value)
	case "rand-spec-iter":
		d.SpecIter, err = strconv.Atoi(value)
	case "rand-spec-pct":
		d.SpecPct, err = strconv.Atoi(value)
	case "rand-spec-res":
		d.SpecRes, err = strconv.Atoi(value)
	case "rand-pareto-h":
		d.ParetoH, err = strconv.ParseFloat(value, 64)
	case "rand-zipfian-exp":
		d.ZipfianExp, err = strconv.ParseFloat(value, 64)
	default:
		return fmt.Errorf("unknown random number option %q", name)
	}
	if err != nil {
		return fmt.Errorf("%s: invalid value %q", name, value)
	}
	return nil
}

// ParseDist starts from [DefaultDist], applies opts (option name to value,
// as for [Dist.SetOption]) and validates the result.
func ParseDist(opts map[string]string) (Dist, error) {
	d := DefaultDist()
	names := make([]string, 0, len(opts))
	for name := range opts {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic error order
	var errs []error
	for _, name := range names {
		if err := d.SetOption(name, opts[name]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Dist{}, err
	}
	return d, d.Validate()
}

// Validate reports every out-of-range setting. All settings are checked,
// not just those of d.Kind, so that a typo is caught even when unused (like
// sysbench, which rejects a negative --rand-zipfian-exp whatever the type).
//
// sysbench itself checks only the Zipfian exponent; the other limits are
// where its formulas stop making sense: with no iterations the gaussian mean
// divides by zero, percentages outside [0, 100] leave the range, and a
// Pareto h of 0 or 1 (or outside) has no finite positive exponent.
func (d Dist) Validate() error {
	var errs []error
	if _, ok := kindName(d.Kind); !ok {
		errs = append(errs, fmt.Errorf("rand-type %d is not a known distribution", d.Kind))
	}
	if d.SpecIter < 1 {
		errs = append(errs, fmt.Errorf("rand-spec-iter must be at least 1 (got %d)", d.SpecIter))
	}
	if d.SpecPct < 0 || d.SpecPct > 100 {
		errs = append(errs, fmt.Errorf("rand-spec-pct must be between 0 and 100 (got %d)", d.SpecPct))
	}
	if d.SpecRes < 0 || d.SpecRes > 100 {
		errs = append(errs, fmt.Errorf("rand-spec-res must be between 0 and 100 (got %d)", d.SpecRes))
	}
	if !(d.ParetoH > 0 && d.ParetoH < 1) {
		errs = append(errs, fmt.Errorf("rand-pareto-h must be between 0 and 1, exclusive (got %g)", d.ParetoH))
	}
	if !(d.ZipfianExp >= 0) || math.IsInf(d.ZipfianExp, 1) {
		errs = append(errs, fmt.Errorf("rand-zipfian-exp must be a finite number >= 0 (got %g)", d.ZipfianExp))
	}
	return errors.Join(errs...)
}

// Int returns a number in [lo, hi] drawn from d, the equivalent of
// sysbench.rand.default(lo, hi). d must be valid (see [Dist.Validate]);
// Int panics if lo > hi.
//
// Int derives the distribution's constants on every call, which for
// zipfian costs several transcendental functions (about 5x the draw
// itself). When the range is fixed, build a [Generator] once and share it.
func (d Dist) Int(src *Source, lo, hi int64) int64 {
	if d.Kind == KindUniform {
		return src.Uniform(lo, hi)
	}
	if lo > hi {
		panic("randgen: Dist.Int called with lo > hi")
	}
	g := d.generator(lo, hi)
	return g.Int(src)
}
