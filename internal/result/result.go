// Package result defines the result document of a run: a versioned JSON
// document holding the options, the context, the summaries, the encoded
// histograms and the interval series. It is what the store keeps and what
// reports read.
package result

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// SchemaVersion is bumped whenever a field changes meaning or is removed.
const SchemaVersion = 1

// Status is how a run ended.
type Status string

const (
	StatusOK Status = "ok"
	// StatusDegraded is a run that went to its end, but whose clients
	// lost their connection and reconnected on the way (the server
	// restarted, a backend was killed): its figures hold the outage, and
	// Summary.Disconnects says when and for how long.
	StatusDegraded    Status = "degraded"
	StatusInterrupted Status = "interrupted"
	StatusFailed      Status = "failed"
)

// Statuses are every status, best first.
var Statuses = []Status{StatusOK, StatusDegraded, StatusInterrupted, StatusFailed}

// Valid says whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Result is one run.
type Result struct {
	SchemaVersion int          `json:"schema_version"`
	ID            string       `json:"id"`
	Tool          Tool         `json:"tool"`
	Command       []string     `json:"command"`
	Workload      Workload     `json:"workload"`
	Target        Target       `json:"target"`
	Environment   *Environment `json:"environment,omitempty"`
	Warnings      []string     `json:"warnings,omitempty"`
	Seed          uint64       `json:"seed"`
	Run           RunOptions   `json:"run"`
	StartedAt     time.Time    `json:"started_at"`
	EndedAt       time.Time    `json:"ended_at"`
	Status        Status       `json:"status"`
	Error         string       `json:"error,omitempty"`
	Summary       Summary      `json:"summary"`
	Histograms    []Histogram  `json:"histograms,omitempty"`
	Series        []Interval   `json:"series,omitempty"`
	Rows          *Rows        `json:"rows,omitempty"`
	Sweep         *SweepRef    `json:"sweep,omitempty"`
	// Counters are the OS and database counters sampled during the run, on
	// the series' time axis (see counters.go).
	Counters *Counters `json:"counters,omitempty"`
	// Plan is the run's shape as computed once from its options; documents
	// written before it was recorded have none.
	Plan *Plan `json:"plan,omitempty"`
	// Queries is a query suite's every run and figures (queries.go).
	Queries *Queries `json:"queries,omitempty"`
	// ClientID names the host that ran (run --client-id), and StartAt
	// how its measured window was set on a wall-clock instant
	// (run --start-at; clients.go).
	ClientID string   `json:"client_id,omitempty"`
	StartAt  *StartAt `json:"start_at,omitempty"`
	// Clients are the hosts whose results dbmark merge made this one of,
	// and Merged how (clients.go); a run's own result has none.
	Clients []ClientHost `json:"clients,omitempty"`
	Merged  *Merged      `json:"merged,omitempty"`
	// Servers are the servers of a run on several (--target given more
	// than once: a cluster's SQL nodes), each with its facts and its part
	// of the run (servers.go); Target is then the first's. A run on one
	// server has none.
	Servers []Server `json:"servers,omitempty"`
}

// Rows is what a workload that grows a table reports (iibench): the rows
// it inserted, the table's size as the engine reports it, the index builds
// that followed the load, and a series keyed by rows rather than by time.
type Rows struct {
	Table       string  `json:"table"`
	Inserted    int64   `json:"inserted"` // by this run
	PerS        float64 `json:"per_s"`    // inserted rows per measured second
	Deleted     int64   `json:"deleted,omitempty"`
	TableRows   int64   `json:"table_rows"`
	Resumed     bool    `json:"resumed,omitempty"`
	ResumedFrom int64   `json:"resumed_from,omitempty"` // rows (highest id) the table held when the run resumed it
	// DataBytes and IndexBytes are the engine's own figures; -1 when it
	// has none.
	DataBytes   int64        `json:"data_bytes"`
	IndexBytes  int64        `json:"index_bytes"`
	IndexBuilds []IndexBuild `json:"index_builds,omitempty"`
	Series      []RowPoint   `json:"series,omitempty"`
}

// IndexBuild is one index built after the load, and how long it took.
type IndexBuild struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// RowPoint is one point of the series keyed by rows: taken at the first
// tick after the table reached Rows rows.
type RowPoint struct {
	Rows           int64        `json:"rows"` // inserted in all, counting a resumed run's
	T              float64      `json:"t"`    // seconds since the run started
	TableRows      int64        `json:"table_rows"`
	InsertsPerS    float64      `json:"inserts_per_s"`            // since the previous point
	CumInsertsPerS float64      `json:"cum_inserts_per_s"`        // since the run started
	QueriesPerS    float64      `json:"queries_per_s"`            // since the previous point
	CumQueriesPerS float64      `json:"cum_queries_per_s"`        // since the run started
	InsertLatency  []Percentile `json:"insert_latency,omitempty"` // per insert transaction, since the previous point
	QueryLatency   []Percentile `json:"query_latency,omitempty"`
	DataBytes      int64        `json:"data_bytes"`
	IndexBytes     int64        `json:"index_bytes"`
}

// Tool is the dbmark build that produced the result.
type Tool struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Go       string `json:"go"`
}

// Workload is what ran, with every effective option including defaults.
type Workload struct {
	Name     string            `json:"name"`
	Version  string            `json:"version"`
	Headline string            `json:"headline"` // the metric that sums up the run, e.g. "tps"
	Better   string            `json:"better"`   // "higher" or "lower"
	Options  map[string]string `json:"options"`
}

// Target is where the load went. URL is redacted: it never holds a password.
type Target struct {
	Kind     string            `json:"kind"`
	URL      string            `json:"url"`
	Engine   string            `json:"engine"`
	Version  string            `json:"version"`
	Driver   string            `json:"driver,omitempty"`
	DataDir  string            `json:"data_dir,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	// ServerSet are the settings dbmark changed for the run (serverset.go).
	ServerSet []ServerSetting `json:"server_set,omitempty"`
	// EngineFacts (facts.go): settings that differ from their defaults,
	// the sizes that matter, the size of the data.
	*EngineFacts
}

// Environment is the machine the run happened on.
type Environment struct {
	Hostname   string  `json:"hostname,omitempty"`
	OS         string  `json:"os"`
	Arch       string  `json:"arch"`
	Kernel     string  `json:"kernel,omitempty"`
	CPUs       int     `json:"cpus"`
	CPUModel   string  `json:"cpu_model,omitempty"`
	MemoryB    uint64  `json:"memory_bytes,omitempty"`
	ClockSrc   string  `json:"clocksource,omitempty"`
	ClockNowNS float64 `json:"clock_read_ns,omitempty"` // measured cost of reading the clock
	GoMaxProcs int     `json:"gomaxprocs"`
	// MachineFacts (facts.go): CPU, memory, disks, RAID, mounts and the
	// facts that could not be read, with why.
	*MachineFacts
}

// RunOptions are the runner's settings.
type RunOptions struct {
	Threads        int       `json:"threads"`
	DurationS      float64   `json:"duration_s,omitempty"`
	Events         int64     `json:"events,omitempty"`
	WarmupS        float64   `json:"warmup_s,omitempty"`
	ReportInterval float64   `json:"report_interval_s,omitempty"`
	Rate           float64   `json:"rate,omitempty"` // events/s; 0 = closed loop
	MaxTries       int       `json:"max_tries"`
	IgnoreErrors   []string  `json:"ignore_errors,omitempty"`
	Percentiles    []float64 `json:"percentiles"`
}

// Plan is a run's clients and limits as the command computed them from
// the options given and what the workload declares (workload.NewPlan):
// pgbench's -t made a total, its default, a self-ending workload's
// unused --time.
type Plan struct {
	Clients     int     `json:"clients"`
	Connections int     `json:"connections"` // one per client; 0 on a workload's own target
	Events      int64   `json:"events,omitempty"`
	PerClient   int64   `json:"events_per_client,omitempty"` // what Events was made from (pgbench's -t)
	TimeS       float64 `json:"time_s,omitempty"`
	WarmupS     float64 `json:"warmup_s,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	MaxTries    int     `json:"max_tries"`
	SelfLimited bool    `json:"self_limited,omitempty"`
	SkipLateS   float64 `json:"skip_late_s,omitempty"`
	CountFailed bool    `json:"count_failed,omitempty"`
	AbortClient bool    `json:"abort_client,omitempty"`
}

// Summary is the run after warm-up.
type Summary struct {
	DurationS    float64      `json:"duration_s"`
	Events       int64        `json:"events"` // committed transactions
	EventsPerS   float64      `json:"events_per_s"`
	Queries      QueryCounts  `json:"queries"`
	QueriesPerS  float64      `json:"queries_per_s"`
	ReadMiBPerS  float64      `json:"read_mib_per_s,omitempty"`  // operations that move bytes (file I/O)
	WriteMiBPerS float64      `json:"write_mib_per_s,omitempty"` // likewise
	Errors       []ErrorCount `json:"errors,omitempty"`
	ErrorsTotal  int64        `json:"errors_total"`
	Retries      int64        `json:"retries"`
	Reconnects   int64        `json:"reconnects"`
	Latency      *Latency     `json:"latency,omitempty"`      // of events; from the intended start under --rate
	Service      *Latency     `json:"service,omitempty"`      // of events from the actual start, under --rate
	ScheduleLag  *Latency     `json:"schedule_lag,omitempty"` // under --rate
	Ops          []OpSummary  `json:"ops"`
	Clamped      int64        `json:"clamped,omitempty"` // latencies above one hour, recorded as one hour
	// Disconnects are the clients' outages: each time a client lost its
	// connection, from the start of the attempt that failed to when it
	// was connected again and to its next committed event. A run with any
	// is degraded.
	Disconnects []Disconnect `json:"disconnects,omitempty"`
	// ReconnectWait is the distribution of the Disconnects' waits: from
	// the failed attempt's start to the client's next committed event.
	ReconnectWait *Latency `json:"reconnect_wait,omitempty"`
	// LatencyWithReconnects is Latency with each of those waits counted
	// as one more event's latency (the transaction the outage cut off):
	// the worst a client lived through. Latency itself, and the
	// histograms, hold only the events that ran, as in a clean run, so
	// runs stay comparable.
	LatencyWithReconnects *Latency `json:"latency_with_reconnects,omitempty"`
	// LatencyOps names the operations Latency is of, when not every event
	// (iibench: its inserts, not its queries).
	LatencyOps []string `json:"latency_ops,omitempty"`
	// HeadlineSeries is the series field that draws the headline over
	// time: a key of each interval's extra figures ("": events_per_s).
	HeadlineSeries string `json:"headline_series,omitempty"`
	// DrainS and DrainEvents are the time after the time limit that the
	// events under way took to finish, and how many did: their latencies
	// are in the histograms, their count is not in the rates.
	DrainS      float64 `json:"drain_s,omitempty"`
	DrainEvents int64   `json:"drain_events,omitempty"`
	// Concurrency is Little's law's count of events in flight (events/s
	// x mean latency) in a closed loop, where it should be the number of
	// clients; 0 under a rate. It is summed exactly: the clients' time
	// inside events, committed or not, within the measured window, over
	// its length (an event at an edge counts with its part inside).
	Concurrency float64 `json:"effective_concurrency,omitempty"`
	// ReadCheck counts the reads that must find rows and those that came
	// back short, where the workload knows which reads must (a point
	// select of an id that prepare loaded): a read that finds nothing is
	// fast, so a table that lost rows shows here and not in the rates.
	ReadCheck *ReadCheck `json:"read_check,omitempty"`
	// Client is the CPU dbmark's own process used over the measured
	// window (client.go); documents written before it was recorded have
	// none.
	Client *ClientCPU `json:"client,omitempty"`
	// Fairness is how evenly the clients shared the work: sysbench's
	// "Threads fairness".
	Fairness *Fairness `json:"fairness,omitempty"`
	// Warnings are what the run found wrong with its own figures.
	Warnings []string `json:"warnings,omitempty"`
	// Dips are where throughput fell well below its running median, with
	// the counters that moved then (package dips).
	Dips []Dip `json:"dips,omitempty"`
	// Saturated are the resources at their limit during the run, from
	// the sampled counters (package saturation); nil when none was
	// sampled, empty when none ran out.
	Saturated    []Limit           `json:"saturated,omitempty"`
	Extra        map[string]string `json:"extra,omitempty"`
	Headline     float64           `json:"headline"`
	HeadlineUnit string            `json:"headline_unit"`
}

// ReadCheck is what the reads that must find rows found: Checked of them
// ran after the warm-up, and Missed found none (a point read) or fewer
// rows than their range holds. Ops splits both by operation.
type ReadCheck struct {
	Checked int64         `json:"checked"`
	Missed  int64         `json:"missed"`
	Ops     []ReadCheckOp `json:"ops,omitempty"`
}

// ReadCheckOp is one operation's share of a ReadCheck.
type ReadCheckOp struct {
	Op      string `json:"op"`
	Checked int64  `json:"checked"`
	Missed  int64  `json:"missed"`
}

// MissedShare is the share of the checked reads that missed, 0 when none
// were checked.
func (c *ReadCheck) MissedShare() float64 {
	if c == nil || c.Checked == 0 {
		return 0
	}
	return float64(c.Missed) / float64(c.Checked)
}

// Disconnect is one client's outage. Times are seconds since the run's
// start, on the series' axis.
type Disconnect struct {
	Client int `json:"client"`
	// StartS is when the attempt that met the lost connection began.
	StartS float64 `json:"start_s"`
	// BackS is when the client was connected again; 0 (with Back false)
	// when the run ended first.
	BackS float64 `json:"back_s,omitempty"`
	Back  bool    `json:"back"`
	// DisconnectedS is BackS - StartS, or to the run's end when not back.
	DisconnectedS float64 `json:"disconnected_s"`
	// WaitS is from StartS to the client's next committed event; 0 when
	// it committed none after.
	WaitS float64 `json:"wait_s,omitempty"`
	// Reconnects counts the connections it lost in this outage (the
	// first and any that failed again before an event committed).
	Reconnects int `json:"reconnects"`
}

// Fairness is each client's share of the events, and of the time spent
// inside them (from each event's actual start, as sysbench times them), as
// a mean over the clients with its standard deviation. It counts every
// event a client committed, the warm-up's and the drain's too.
type Fairness struct {
	EventsMean   float64 `json:"events_mean"`
	EventsStdDev float64 `json:"events_stddev"`
	BusyMeanS    float64 `json:"busy_mean_s"`
	BusyStdDevS  float64 `json:"busy_stddev_s"`
	// BusyS is the clients' time inside events, added up (sysbench's
	// latency "sum").
	BusyS float64 `json:"busy_s"`
}

// QueryCounts splits statements like sysbench does.
type QueryCounts struct {
	Read  int64 `json:"read"`
	Write int64 `json:"write"`
	Other int64 `json:"other"`
	Total int64 `json:"total"`
}

// ErrorCount is the number of errors of one class and code.
type ErrorCount struct {
	Class string `json:"class"`
	Code  string `json:"code"`
	Count int64  `json:"count"`
}

// OpSummary is one operation's summary.
type OpSummary struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Count   int64    `json:"count"`
	PerS    float64  `json:"per_s"`
	MiBPerS float64  `json:"mib_per_s,omitempty"`
	Latency *Latency `json:"latency,omitempty"`
	Service *Latency `json:"service,omitempty"`
}

// Latency is a latency distribution in milliseconds.
type Latency struct {
	MinMS       float64      `json:"min_ms"`
	MeanMS      float64      `json:"mean_ms"`
	StdDevMS    float64      `json:"stddev_ms"`
	MaxMS       float64      `json:"max_ms"`
	Percentiles []Percentile `json:"percentiles"`
}

// Percentile is one point of a distribution.
type Percentile struct {
	P  float64 `json:"p"`
	MS float64 `json:"ms"`
}

// Get returns the value at percentile p, if it was computed.
func (l *Latency) Get(p float64) (float64, bool) {
	if l == nil {
		return 0, false
	}
	for _, q := range l.Percentiles {
		if q.P == p {
			return q.MS, true
		}
	}
	return 0, false
}

// Histogram is one operation's latency histogram in HdrHistogram's V2
// compressed encoding, base64 as in HdrHistogram's log format.
type Histogram struct {
	Op      string `json:"op"`
	Kind    string `json:"kind"` // "latency", "service" or "lag"
	Unit    string `json:"unit"` // "ns"
	Encoded string `json:"encoded"`
}

// Interval is one point of the series: one tick of the runner, or in a long
// run several neighbouring ticks merged (MergeIntervals).
type Interval struct {
	T            float64      `json:"t"` // seconds since start, at the end of the interval
	DurationS    float64      `json:"duration_s"`
	Warmup       bool         `json:"warmup,omitempty"`
	EventsPerS   float64      `json:"events_per_s"`
	ReadsPerS    float64      `json:"reads_per_s"`
	WritesPerS   float64      `json:"writes_per_s"`
	OtherPerS    float64      `json:"other_per_s"`
	ReadMiBPerS  float64      `json:"read_mib_per_s,omitempty"`
	WriteMiBPerS float64      `json:"write_mib_per_s,omitempty"`
	ErrorsPerS   float64      `json:"errors_per_s"`
	ReconnPerS   float64      `json:"reconnects_per_s"`
	RetriesPerS  float64      `json:"retries_per_s,omitempty"`
	Latency      []Percentile `json:"latency,omitempty"`
	LagMeanMS    float64      `json:"lag_mean_ms,omitempty"`
	// ServersEventsPerS are each server's events/s, in the order of
	// Result.Servers, in a run on several.
	ServersEventsPerS []float64 `json:"servers_events_per_s,omitempty"`
	// Extra holds a workload's own figures: a name ending in "_per_s" is a
	// rate, any other a level at the end of the interval.
	Extra map[string]float64 `json:"extra,omitempty"`
}

// SweepRef links a run to the sweep it belongs to.
type SweepRef struct {
	ID        string            `json:"id"`
	Cell      map[string]string `json:"cell"`
	Iteration int               `json:"iteration"`
}

// LatencyOf summarises a histogram of nanoseconds.
func LatencyOf(h *hdr.Histogram, ps []float64) *Latency {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	l := &Latency{
		MinMS:    nsToMS(float64(h.Min())),
		MeanMS:   nsToMS(h.Mean()),
		StdDevMS: nsToMS(h.StdDev()),
		MaxMS:    nsToMS(float64(h.Max())),
	}
	for _, p := range ps {
		l.Percentiles = append(l.Percentiles, Percentile{P: p, MS: nsToMS(float64(h.ValueAtQuantile(p)))})
	}
	return l
}

func nsToMS(ns float64) float64 { return ns / 1e6 }

// EncodeHistogram encodes h for the document.
func EncodeHistogram(op, kind string, h *hdr.Histogram) (Histogram, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return Histogram{}, fmt.Errorf("encode histogram %s/%s: %w", op, kind, err)
	}
	return Histogram{Op: op, Kind: kind, Unit: "ns", Encoded: base64.StdEncoding.EncodeToString(b)}, nil
}

// maxDecodedHistogram caps what a decoded histogram may claim, so a hostile
// document cannot make the decoder allocate without bound.
const maxDecodedHistogram = 64 << 20

// Decode returns the histogram.
func (h Histogram) Decode() (*hdr.Histogram, error) {
	if len(h.Encoded) > maxDecodedHistogram {
		return nil, fmt.Errorf("histogram %s/%s: encoded form too large", h.Op, h.Kind)
	}
	b, err := base64.StdEncoding.DecodeString(h.Encoded)
	if err != nil {
		return nil, fmt.Errorf("histogram %s/%s: %w", h.Op, h.Kind, err)
	}
	out, err := hdr.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("histogram %s/%s: %w", h.Op, h.Kind, err)
	}
	return out, nil
}

// Marshal encodes r as indented JSON.
func Marshal(r *Result) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return append(b, '\n'), nil
}

// Unmarshal decodes a result document and checks its schema version.
func Unmarshal(b []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	if r.SchemaVersion < 1 || r.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("decode result: schema version %d is not supported (this dbmark reads 1 to %d)", r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}

// Read decodes a result document from r.
func Read(r io.Reader) (*Result, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	return Unmarshal(b)
}

// ReadFile reads the result document at path (as WriteFile and --json
// write it).
func ReadFile(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read result %s: %w", path, unwrapPath(err))
	}
	r, err := Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("read result %s: %w", path, err)
	}
	return r, nil
}

// started is about when this process started: a temporary file of
// WriteFile's naming older than it was left by an earlier process (one
// killed between writing and renaming it).
var started = time.Now()

// RemoveStaleTemps removes from dir the temporary files WriteFile leaves
// when killed before its rename (".NAME.tmpDIGITS", NAME a file for which
// keep is true), of them only regular files last changed before this
// process started: a concurrent writer's are never touched. It returns
// the names removed; it is best effort, and an unreadable dir removes
// nothing.
func RemoveStaleTemps(dir string, keep func(name string) bool) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		name, ok := tempTarget(e.Name())
		if !ok || !keep(name) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(started) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// tempTarget is the file a temporary file of WriteFile's naming stands
// for: ".NAME.tmpDIGITS" gives NAME.
func tempTarget(temp string) (string, bool) {
	i := strings.LastIndex(temp, ".tmp")
	if !strings.HasPrefix(temp, ".") || i < 2 {
		return "", false
	}
	digits := temp[i+len(".tmp"):]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	return temp[1:i], true
}

// CheckWritable says whether WriteFile could write path, without writing
// it: path must not be a directory, and its directory must exist and take
// a new file (the temporary one WriteFile renames). A run checks its
// output file with it before measuring anything; it also removes the
// temporary files an earlier writer of path left when it was killed
// (RemoveStaleTemps).
func CheckWritable(path string) error {
	if path == "" {
		return errors.New("no file name")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory: name a file in it", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("directory %s does not exist: create it or name a file elsewhere", dir)
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	base := filepath.Base(path)
	RemoveStaleTemps(dir, func(name string) bool { return name == base })
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot create a file in %s: %w", dir, unwrapPath(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// unwrapPath drops the temporary name from a file error: the user named
// the directory, not the temporary file.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// WriteFile writes r to path atomically: a temporary file in the same
// directory, fsync, rename, fsync of the directory. A crash leaves either
// the old file or the new one, never a truncated one.
func WriteFile(path string, r *Result) error {
	b, err := Marshal(r)
	if err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("write result %s: it is a directory: name a file in it", path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write result %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write result %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: some filesystems refuse to sync a directory
		d.Close()
	}
	return nil
}
