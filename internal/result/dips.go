package result

// Dip is a stretch of a run where throughput fell well below its running
// median (a flushing stall, a checkpoint, a lock), with the counters that
// moved most at that moment against the rest of the run.
type Dip struct {
	// FromS and ToS are seconds since the run's start, on the series'
	// axis: the start of the first interval in the dip and the end of the
	// last.
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// Change is the lowest interval's throughput against the running
	// median there, as a fraction: -0.63 is 63% below.
	Change float64 `json:"change"`
	// Movers are the counters that moved most during the dip, most
	// first; none when nothing stood out (or nothing was sampled).
	Movers []Mover `json:"movers,omitempty"`
}

// Mover is a counter that moved during a dip: its mean during the dip
// against its median over the rest of the run.
type Mover struct {
	Name    string  `json:"name"`
	Unit    string  `json:"unit"`
	During  float64 `json:"during"`
	Typical float64 `json:"typical"`
}

// Limit is a resource that was at its limit during a run (package
// saturation): for what share of the measured samples, and how.
type Limit struct {
	Resource string  `json:"resource"` // "cpu", "iowait", "steal", "disk vda", "memory", "engine"
	Share    float64 `json:"share"`    // of the measured samples, 0 to 1
	Detail   string  `json:"detail"`
	// Note marks a resource that was looked at and was not a limit, for
	// a reason worth saying (the network of a server on this machine);
	// its Share is 0.
	Note bool `json:"note,omitempty"`
}
