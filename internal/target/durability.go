package target

import (
	"sort"
	"strings"
)

// Unsafe is an engine setting, as a result records it, whose value lets a
// commit be acknowledged before it is on durable storage (or lets a crash
// corrupt the data): a run with it measures a database that would lose
// work on a power failure, faster than any durable one can be.
type Unsafe struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	// Risk says what the value gives up, in a few words.
	Risk string `json:"risk"`
}

func (u Unsafe) String() string { return u.Setting + "=" + u.Value }

// DurabilityRule finds an engine's unsafe settings among all of its
// settings as Inspect records them (result.Target.Settings). Each engine
// declares its own (its settings are its own vocabulary) and registers it
// with its kind.
type DurabilityRule func(settings map[string]string) []Unsafe

// RegisterDurability adds the rule for targets of kind (Target.Kind).
func (r *Registry) RegisterDurability(kind string, rule DurabilityRule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.durability == nil {
		r.durability = map[string]DurabilityRule{}
	}
	r.durability[kind] = rule
}

// Unsafe lists the unsafe settings among a result's engine settings, by
// the rule of its kind of target, ordered by setting; none for a kind
// with no rule (files) or no settings recorded.
func (r *Registry) Unsafe(kind string, settings map[string]string) []Unsafe {
	r.mu.RLock()
	rule := r.durability[kind]
	r.mu.RUnlock()
	if rule == nil || len(settings) == 0 {
		return nil
	}
	out := rule(settings)
	sort.Slice(out, func(i, j int) bool { return out[i].Setting < out[j].Setting })
	return out
}

// DescribeUnsafe is the one line every output uses for unsafe settings:
// the preflight's warning, the site's flag, compare's note.
func DescribeUnsafe(us []Unsafe) string {
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = u.String() + " (" + u.Risk + ")"
	}
	return "durability is off: " + strings.Join(parts, ", ") +
		": the figures are not those of a database that keeps every commit through a crash"
}
