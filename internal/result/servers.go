package result

import "strconv"

// Server is one server of a run on several (a cluster's SQL nodes): where
// it is, what it is, and its part of the run. The clients were spread over
// the servers round-robin, client i on server i mod len(Servers).
type Server struct {
	// Label names the server in the result: the prefix of its counters
	// ("server2/db.xact_commit"), as merge prefixes a host's.
	Label string `json:"label"`
	// Target is the server as the run found it: its redacted URL,
	// version, settings and facts.
	Target  Target         `json:"target"`
	Clients int            `json:"clients"`
	Summary *ServerSummary `json:"summary,omitempty"`
	// Histograms are its clients' latency histograms, per operation, as
	// the result's own are of every client.
	Histograms []Histogram `json:"histograms,omitempty"`
}

// ServerLabel is the label of the server at index i (from 0): "server1".
func ServerLabel(i int) string { return "server" + strconv.Itoa(i+1) }

// ServerSummary is one server's part of a run's summary, over the same
// measured window: its counts add up to the summary's.
type ServerSummary struct {
	Events      int64        `json:"events"`
	EventsPerS  float64      `json:"events_per_s"`
	Queries     QueryCounts  `json:"queries"`
	QueriesPerS float64      `json:"queries_per_s"`
	Errors      []ErrorCount `json:"errors,omitempty"`
	ErrorsTotal int64        `json:"errors_total"`
	Retries     int64        `json:"retries"`
	Reconnects  int64        `json:"reconnects"`
	Latency     *Latency     `json:"latency,omitempty"`
	Ops         []OpSummary  `json:"ops,omitempty"`
	// Concurrency is Little's law's count of its events in flight in a
	// closed loop: its clients, when none waited outside its events.
	Concurrency float64 `json:"effective_concurrency,omitempty"`
}
