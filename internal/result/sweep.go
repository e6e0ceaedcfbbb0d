package result

import "time"

// SweepStatus is where a sweep stands.
type SweepStatus string

const (
	SweepRunning     SweepStatus = "running"
	SweepDone        SweepStatus = "done"
	SweepInterrupted SweepStatus = "interrupted"
	SweepFailed      SweepStatus = "failed"
)

// Sweep is the record of a sweep: enough to list it, find its runs (they
// carry a SweepRef with its ID) and resume it.
type Sweep struct {
	SchemaVersion int    `json:"schema_version"`
	ID            string `json:"id"` // UUID
	Workload      string `json:"workload"`
	// Command is the command line as typed, passwords removed.
	Command []string `json:"command"`
	// Args are the workload's options after its name, passwords removed:
	// what a resume parses again.
	Args          []string    `json:"args"`
	Axes          []SweepAxis `json:"axes"`
	Zip           [][]string  `json:"zip,omitempty"`
	Iterations    int         `json:"iterations"`
	UntilCV       float64     `json:"until_cv,omitempty"` // a fraction: 0.03 for 3%
	MaxIterations int         `json:"max_iterations,omitempty"`
	Headline      string      `json:"headline"`
	Better        string      `json:"better"`
	StartedAt     time.Time   `json:"started_at"`
	EndedAt       time.Time   `json:"ended_at,omitzero"`
	Status        SweepStatus `json:"status"`
	Error         string      `json:"error,omitempty"`
	// Cells are each cell's metrics over its finished runs, written when
	// the sweep stops (records of older sweeps have none: their runs
	// hold the same figures).
	Cells []SweepCell `json:"cells,omitempty"`
}

// SweepAxis is one swept option and its values in order.
type SweepAxis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// SweepCell is one cell's figures over its finished runs, as the sweep
// record keeps them when the sweep stops: every metric a run measured
// (sweep.Measures), each with its value in every run and their spread.
type SweepCell struct {
	Cell    map[string]string `json:"cell"`
	Runs    int               `json:"runs"` // finished runs (status ok)
	Metrics []SweepMetric     `json:"metrics"`
}

// SweepMetric is one metric over a cell's runs: null statistics where too
// few runs give none.
type SweepMetric struct {
	Name     string    `json:"name"` // "headline", "p95", "op:script:select-only"...
	Unit     string    `json:"unit"`
	Values   []float64 `json:"values"`
	Mean     *float64  `json:"mean"`
	CI95Low  *float64  `json:"ci95_low"`
	CI95High *float64  `json:"ci95_high"`
	CV       *float64  `json:"cv"`
}
