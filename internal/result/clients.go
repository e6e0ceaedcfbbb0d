package result

import "time"

// StartAt is how a run started on a wall-clock instant (run --start-at),
// so that runs on several hosts measure the same window: the clients
// connected and warmed up, then the measured window began at At.
type StartAt struct {
	At time.Time `json:"at"`
	// LateS is how long after At the measured window began, when the
	// clients were ready only after it (0 when on time).
	LateS float64 `json:"late_s,omitempty"`
	// ClockOffsetMS is this host's clock minus the database server's
	// (its now()), measured before the run: half the round trip's
	// uncertainty is in ClockUncertaintyMS. Absent where the target has
	// no server clock (SQLite, a directory).
	ClockOffsetMS      *float64 `json:"clock_offset_ms,omitempty"`
	ClockUncertaintyMS float64  `json:"clock_uncertainty_ms,omitempty"`
}

// ClientHost is one host's share of a merged result (dbmark merge): what
// it ran, on which machine, and its own figures.
type ClientHost struct {
	// ID names the host: its --client-id, else its hostname, else its
	// place in the merge; counters kept per host carry it as a prefix.
	ID       string `json:"id"`
	Result   string `json:"result"` // its result's id
	Hostname string `json:"hostname,omitempty"`
	OS       string `json:"os,omitempty"`
	Arch     string `json:"arch,omitempty"`
	CPUs     int    `json:"cpus,omitempty"`
	CPUModel string `json:"cpu_model,omitempty"`
	Threads  int    `json:"threads"`
	// StartedAt and EndedAt are its run's; WindowStart is where its
	// measured window began.
	StartedAt    time.Time  `json:"started_at"`
	EndedAt      time.Time  `json:"ended_at"`
	WindowStart  time.Time  `json:"window_start"`
	DurationS    float64    `json:"duration_s"`
	Status       Status     `json:"status"`
	Events       int64      `json:"events"`
	EventsPerS   float64    `json:"events_per_s"`
	Headline     float64    `json:"headline"`
	HeadlineUnit string     `json:"headline_unit"`
	StartAt      *StartAt   `json:"start_at,omitempty"`
	Client       *ClientCPU `json:"client,omitempty"`
	// Saturated is what ran out on this host's machine during its run
	// (Summary.Saturated of its result).
	Saturated []Limit `json:"saturated,omitempty"`
}

// Merged says a result was made by dbmark merge of others, and how.
type Merged struct {
	Results []string `json:"results"` // the merged results' ids
	Note    string   `json:"note"`
}
