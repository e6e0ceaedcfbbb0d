package result

// Queries is what a query suite measured (dbmark run query, and the
// workloads built on it): every run of every query, each query's
// figures, and the suite's.
type Queries struct {
	Iterations int `json:"iterations"` // runs of each query in each stream
	Streams    int `json:"streams"`    // connections that each ran the whole suite at once
	// Cold says each query's first iteration was made cold: the server
	// restarted (Restarted) and the OS page cache dropped (Dropped, when
	// run as root) before it.
	Cold      bool `json:"cold,omitempty"`
	Restarted bool `json:"restarted,omitempty"`
	Dropped   bool `json:"dropped,omitempty"`
	// TotalS is the suite's time: from the start of its first query to
	// the end of its last, less the time spent making cold runs cold.
	TotalS float64 `json:"total_s"`
	// GeomeanS is the geometric mean of the queries' median times, over
	// the queries with a time (0 when none has one).
	GeomeanS float64 `json:"geomean_s"`
	// Failed counts the queries with a failed run (an error, a timeout or
	// a wrong answer); NotRun those that never ran (the run was cut short).
	Failed int           `json:"failed"`
	NotRun int           `json:"not_run,omitempty"`
	List   []QueryResult `json:"list"`
}

// QueryResult is one query of a suite: its figures over its runs that
// succeeded, and every run.
type QueryResult struct {
	Label string `json:"label"`
	SQL   string `json:"sql"`
	// Plan is the engine's plan for the query (--explain), as text, or
	// why it could not be had.
	Plan string `json:"plan,omitempty"`
	// ColdS is the first iteration's time (the median over streams of
	// each stream's first), HotS the fastest of the other iterations (0
	// with one iteration), MedianS the median of every run.
	ColdS   float64 `json:"cold_s"`
	HotS    float64 `json:"hot_s,omitempty"`
	MedianS float64 `json:"median_s"`
	// Rows is what the query's last successful run returned (or, for a
	// statement that returns none, affected).
	Rows int64 `json:"rows"`
	// Errors counts its failed runs; Error is the first one's message.
	Errors int        `json:"errors,omitempty"`
	Error  string     `json:"error,omitempty"`
	Runs   []QueryRun `json:"runs"`
}

// Kinds of a failed QueryRun.
const (
	QueryError       = "error"
	QueryTimeout     = "timeout"
	QueryWrongAnswer = "wrong answer"
	QueryNotRun      = "not run"
)

// QueryRun is one run of a query: one iteration in one stream.
type QueryRun struct {
	Stream    int     `json:"stream"`    // 0-based
	Iteration int     `json:"iteration"` // 1-based: 1 is the cold run
	T         float64 `json:"t"`         // its start, in seconds since the run's
	S         float64 `json:"s"`         // how long it took
	Rows      int64   `json:"rows"`      // returned, or affected when none were returned
	Bytes     int64   `json:"bytes"`     // the returned values' size as text
	// Kind says how a failed run failed (QueryError, QueryTimeout,
	// QueryWrongAnswer, QueryNotRun) and Error says what happened; both
	// are empty for a run that succeeded.
	Kind  string `json:"kind,omitempty"`
	Error string `json:"error,omitempty"`
}

// OK says whether the run succeeded.
func (r QueryRun) OK() bool { return r.Kind == "" }
