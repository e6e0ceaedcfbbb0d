// Package site is dbmark's public results database: an HTTP server that
// accepts redacted results (`dbmark submit`), keeps them in its own store
// (package sitestore) and serves an API and server-rendered pages to
// browse, filter, compare and rank them.
package site

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/redact"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// SubmissionFormat is the version of the Submission envelope.
const SubmissionFormat = 1

// DefaultMaxBody is the largest submission accepted, after decompression.
const DefaultMaxBody = 8 << 20

// Submission is what a client sends: one run, or a sweep with its runs,
// each redacted, with the submitter's note and tags.
type Submission struct {
	Format int               `json:"format"`
	Note   string            `json:"note,omitempty"`
	Tags   map[string]string `json:"tags,omitempty"`
	// Reproduces is the permalink id of a published result this run
	// reproduces (dbmark run --from).
	Reproduces string           `json:"reproduces,omitempty"`
	Sweep      *result.Sweep    `json:"sweep,omitempty"`
	Runs       []*result.Result `json:"runs"`

	// encoded and hash are the submission's JSON and Hash, kept by Decode
	// (which encodes it to check it); a Submission is not changed after.
	encoded []byte
	hash    string
}

// Error is a refused submission or request: the HTTP status, the field at
// fault (a JSON path such as runs[0].summary.headline) and why.
type Error struct {
	Status int
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Msg
	}
	return e.Msg
}

func bad(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ReadBody reads a request body of at most limit bytes after
// decompression (gzip when encoding says so). A larger body, or a gzip
// stream that inflates past the limit, is refused with 413 as soon as the
// limit is passed: nothing is inflated beyond limit+1 bytes.
func ReadBody(body io.Reader, encoding string, limit int64) ([]byte, error) {
	// The compressed body is held to the limit too.
	r := io.LimitReader(body, limit+1)
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, bad("", "body is not gzip: %v", err)
		}
		defer zr.Close()
		r = io.LimitReader(zr, limit+1)
	default:
		return nil, &Error{Status: http.StatusUnsupportedMediaType, Msg: fmt.Sprintf("Content-Encoding %q is not supported (send gzip or nothing)", encoding)}
	}
	b, err := io.ReadAll(r)
	if int64(len(b)) > limit {
		return nil, &Error{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("submission is larger than %d bytes (after decompression)", limit)}
	}
	if err != nil {
		return nil, bad("", "read body: %v", err)
	}
	return b, nil
}

// Decode parses and checks a submission: its form, its values and that it
// holds nothing personal. The error is an *Error naming the field.
func Decode(b []byte) (*Submission, error) {
	var s Submission
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return nil, bad(te.Field, "want %s, got JSON %s", te.Type, te.Value)
		case errors.As(err, &se):
			return nil, bad("", "not JSON: %v (at byte %d)", se, se.Offset)
		}
		return nil, bad("", "not a submission: %v", err)
	}
	if dec.More() {
		return nil, bad("", "more than one JSON value in the body")
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	s.hash = hashOf(s.encoded, s.Sweep != nil, s.Note, s.Tags, s.Reproduces)
	return &s, nil
}

var (
	tagKey  = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,31}$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)
	permaRE = regexp.MustCompile(`^[a-z2-7]{12}$`)
)

// Limits on what one submission may hold.
const (
	maxRuns    = 1000
	maxNote    = 2000
	maxTags    = 20
	maxTagText = 128
	maxString  = 64 << 10
)

func (s *Submission) validate() error {
	if s.Format != SubmissionFormat {
		return bad("format", "format %d is not known (this server reads %d)", s.Format, SubmissionFormat)
	}
	if len(s.Note) > maxNote {
		return bad("note", "longer than %d bytes", maxNote)
	}
	if len(s.Tags) > maxTags {
		return bad("tags", "more than %d tags", maxTags)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
		if !tagKey.MatchString(k) {
			return bad("tags."+k, "a tag's key is 1 to 32 of a-z, 0-9, _ . - (starting with a letter or digit)")
		}
		if len(s.Tags[k]) > maxTagText {
			return bad("tags."+k, "longer than %d bytes", maxTagText)
		}
	}
	if s.Reproduces != "" && !permaRE.MatchString(s.Reproduces) {
		return bad("reproduces", "not a result id")
	}
	if len(s.Runs) == 0 {
		return bad("runs", "no runs")
	}
	if len(s.Runs) > maxRuns {
		return bad("runs", "more than %d runs", maxRuns)
	}
	if len(s.Runs) > 1 && s.Sweep == nil {
		return bad("sweep", "several runs are a sweep's: the sweep's record is missing")
	}
	if sw := s.Sweep; sw != nil {
		if _, err := uuid.Parse(sw.ID); err != nil {
			return bad("sweep.id", "not a UUID")
		}
	}
	seen := map[string]bool{}
	for i, r := range s.Runs {
		at := fmt.Sprintf("runs[%d]", i)
		if r == nil {
			return bad(at, "null")
		}
		if err := validateRun(at, r); err != nil {
			return err
		}
		if seen[r.ID] {
			return bad(at+".id", "run %s appears twice", r.ID)
		}
		seen[r.ID] = true
		if s.Sweep != nil && (r.Sweep == nil || r.Sweep.ID != s.Sweep.ID) {
			return bad(at+".sweep.id", "the run is not one of sweep %s", s.Sweep.ID)
		}
	}
	// The checks of strings read the document as JSON: decoded into
	// generic values once, for all of them.
	b, err := json.Marshal(s)
	if err != nil {
		return bad("", "encode: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return bad("", "decode: %v", err)
	}
	if f := longString("", doc); f != "" {
		return bad(f, "longer than %d bytes", maxString)
	}
	if err := s.private(doc); err != nil {
		return err
	}
	s.encoded = b
	return nil
}

// private refuses a submission that holds what `dbmark submit` removes.
// doc is the submission as JSON, decoded into generic values.
func (s *Submission) private(doc map[string]any) error {
	runs, _ := doc["runs"].([]any)
	if len(runs) != len(s.Runs) {
		return bad("runs", "not a list of results")
	}
	for i, r := range s.Runs {
		if f := redact.FindDecoded(r, runs[i]); f != "" {
			return privacyError(fmt.Sprintf("runs[%d].%s", i, f))
		}
	}
	rest := map[string]any{"note": doc["note"], "tags": doc["tags"], "sweep": doc["sweep"]}
	if f := redact.FindInDecoded(rest); f != "" {
		return privacyError(f)
	}
	return nil
}

func privacyError(field string) error {
	return bad(field, "holds personal data (a host name, address, user name, path or credential): "+
		"submit with dbmark submit, which removes it as dbmark results export does")
}

func validateRun(at string, r *result.Result) error {
	switch {
	case r.SchemaVersion < 1 || r.SchemaVersion > result.SchemaVersion:
		return bad(at+".schema_version", "schema version %d is not known (this server reads 1 to %d)", r.SchemaVersion, result.SchemaVersion)
	case uuidErr(r.ID):
		return bad(at+".id", "not a UUID")
	case !nameRE.MatchString(r.Workload.Name):
		return bad(at+".workload.name", "missing or not a workload name")
	case r.Workload.Version == "":
		return bad(at+".workload.version", "missing")
	case r.Workload.Headline == "":
		return bad(at+".workload.headline", "missing")
	case r.Workload.Better != "higher" && r.Workload.Better != "lower":
		return bad(at+".workload.better", "must be higher or lower")
	case !nameRE.MatchString(r.Target.Kind):
		return bad(at+".target.kind", "missing or not a target kind")
	case r.Tool.Version == "":
		return bad(at+".tool.version", "missing")
	case r.StartedAt.IsZero() || r.StartedAt.Year() < 2000 || r.StartedAt.After(time.Now().Add(48*time.Hour)):
		return bad(at+".started_at", "missing or not a plausible time")
	case r.Run.Threads < 0 || r.Run.Threads > 1<<20:
		return bad(at+".run.threads", "out of range")
	}
	if !r.Status.Valid() {
		return bad(at+".status", "must be ok, degraded, interrupted or failed")
	}
	sm := r.Summary
	for _, n := range []struct {
		f string
		v float64
	}{{"summary.headline", sm.Headline}, {"summary.duration_s", sm.DurationS}, {"summary.events_per_s", sm.EventsPerS},
		{"summary.queries_per_s", sm.QueriesPerS}, {"run.duration_s", r.Run.DurationS}} {
		if math.IsNaN(n.v) || math.IsInf(n.v, 0) || n.v < 0 || n.v > 1e15 {
			return bad(at+"."+n.f, "must be a number from 0 to 1e15")
		}
	}
	if sm.Events < 0 || sm.ErrorsTotal < 0 {
		return bad(at+".summary.events", "negative")
	}
	if sm.HeadlineUnit == "" {
		return bad(at+".summary.headline_unit", "missing")
	}
	if l := sm.Latency; l != nil {
		for j, p := range l.Percentiles {
			if p.P < 0 || p.P > 100 || p.MS < 0 {
				return bad(fmt.Sprintf("%s.summary.latency.percentiles[%d]", at, j), "p must be 0 to 100 and ms not negative")
			}
		}
	}
	for j, iv := range r.Series {
		if iv.T < 0 || iv.DurationS < 0 || iv.EventsPerS < 0 {
			return bad(fmt.Sprintf("%s.series[%d]", at, j), "negative time or rate")
		}
	}
	return nil
}

func uuidErr(s string) bool {
	_, err := uuid.Parse(s)
	return err != nil
}

// longString returns the path of the first string in doc (JSON decoded
// into generic values, reached at p) longer than maxString, or "".
func longString(p string, doc any) string {
	switch x := doc.(type) {
	case string:
		if len(x) > maxString {
			return p
		}
	case []any:
		for i, e := range x {
			switch e.(type) {
			case float64, bool, nil:
				continue // no string inside: no path to build
			}
			if f := longString(fmt.Sprintf("%s[%d]", p, i), e); f != "" {
				return f
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			q := k
			if p != "" {
				q = p + "." + k
			}
			if f := longString(q, x[k]); f != "" {
				return f
			}
		}
	}
	return ""
}

// Hash is the canonical hash of a submission's measurements: the sweep
// and runs as this server decodes them, re-encoded (Go sorts map keys),
// so the same result submitted twice, with any note or tags, hashes alike.
func (s *Submission) Hash() string {
	if s.hash != "" {
		return s.hash
	}
	b, _ := json.Marshal(struct {
		Sweep *result.Sweep    `json:"sweep,omitempty"`
		Runs  []*result.Result `json:"runs"`
	}{s.Sweep, s.Runs})
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%x", sum)
}

// hashOf is Hash from the submission's own encoding, without encoding its
// runs again: Sweep and Runs are the envelope's last fields, so the
// encoding Hash reads is "{" followed by the envelope's from the sweep (or
// the runs) on, and what comes before them is the encoding of the small
// fields.
func hashOf(encoded []byte, sweep bool, note string, tags map[string]string, reproduces string) string {
	head, _ := json.Marshal(struct {
		Format     int               `json:"format"`
		Note       string            `json:"note,omitempty"`
		Tags       map[string]string `json:"tags,omitempty"`
		Reproduces string            `json:"reproduces,omitempty"`
	}{SubmissionFormat, note, tags, reproduces})
	// head ends in "}" where encoded goes on with ,"sweep": or ,"runs":.
	rest := encoded[len(head):]
	h := sha256.New()
	h.Write([]byte("{"))
	h.Write(rest)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// PermalinkID is the id a hash is published under: 60 bits of it, in
// lowercase base32.
func PermalinkID(hash string) string {
	b, err := hex.DecodeString(hash)
	if err != nil || len(b) < 8 {
		b = []byte(hash + "........")
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:8]))[:12]
}

var releasedVersion = regexp.MustCompile(`^v?\d+\.\d+\.\d+$`)

// Released says whether a result comes from a released dbmark build: a
// plain version number, not a development or locally modified one.
func Released(t result.Tool) bool {
	return releasedVersion.MatchString(t.Version) && !strings.HasSuffix(t.Revision, "+modified")
}

// ComparableKey is what results doing the same work share: the workload,
// its version, the threads, the rate and every option that changes the
// work (tables, table size, scale, mode...: result.WorkOption).
func ComparableKey(r *result.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00threads=%d\x00rate=%g", r.Workload.Name, r.Workload.Version, r.Run.Threads, r.Run.Rate)
	for _, k := range slices.Sorted(maps.Keys(r.Workload.Options)) {
		if result.ClassOf(k) == result.WorkOption {
			fmt.Fprintf(&b, "\x00%s=%s", k, r.Workload.Options[k])
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return fmt.Sprintf("%x", sum[:8])
}

// WorkOptions are the options of r that ComparableKey counts, for display.
func WorkOptions(r *result.Result) [][2]string {
	out := [][2]string{{"threads", strconv.Itoa(r.Run.Threads)}}
	if r.Run.Rate > 0 {
		out = append(out, [2]string{"rate", strconv.FormatFloat(r.Run.Rate, 'g', -1, 64)})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Workload.Options)) {
		if result.ClassOf(k) == result.WorkOption {
			out = append(out, [2]string{k, r.Workload.Options[k]})
		}
	}
	return out
}

// Primary is the run that stands for a submission in lists: the best ok
// run by the headline (a sweep's best cell), else the first.
func (s *Submission) Primary() *result.Result {
	var best *result.Result
	for _, r := range s.Runs {
		if r.Status != result.StatusOK {
			continue
		}
		if best == nil || betterThan(r.Workload.Better, r.Summary.Headline, best.Summary.Headline) {
			best = r
		}
	}
	if best == nil {
		return s.Runs[0]
	}
	return best
}

// betterThan says whether headline a beats b when better is "higher" or
// "lower".
func betterThan(better string, a, b float64) bool {
	if better == "lower" {
		return a < b
	}
	return a > b
}

// Entry derives what the store keeps beside the document.
func (s *Submission) Entry(now time.Time) (*sitestore.Entry, error) {
	doc := s.encoded
	if doc == nil {
		var err error
		if doc, err = json.Marshal(s); err != nil {
			return nil, fmt.Errorf("encode submission: %w", err)
		}
	}
	p := s.Primary()
	hash := s.Hash()
	e := &sitestore.Entry{
		ID:           PermalinkID(hash),
		Hash:         hash,
		SubmittedAt:  now,
		StartedAt:    p.StartedAt,
		Released:     Released(p.Tool),
		Status:       worstStatus(s),
		Kind:         "run",
		Runs:         len(s.Runs),
		Headline:     p.Summary.Headline,
		HeadlineUnit: p.Summary.HeadlineUnit,
		Better:       p.Workload.Better,
		Comparable:   ComparableKey(p),
		Reproduces:   s.Reproduces,
		Facets:       Facets(p),
		Document:     doc,
	}
	e.Facets["client"] = clientFacet(s.Runs)
	if e.Status == "ok" {
		e.Peer = PeerOf(p)
	}
	if s.Sweep != nil {
		e.Kind = "sweep"
	}
	return e, nil
}

func worstStatus(s *Submission) string {
	st := "ok"
	for _, r := range s.Runs {
		switch r.Status {
		case result.StatusFailed:
			return "failed"
		case result.StatusInterrupted:
			st = "interrupted"
		case result.StatusDegraded:
			if st == "ok" {
				st = "degraded"
			}
		}
	}
	if s.Sweep != nil && s.Sweep.Status != result.SweepDone && st == "ok" {
		st = "interrupted"
	}
	return st
}

// clientFacet says whether the client limited the figure of any of runs
// (result.ClientCPU); "" when none recorded its client's cost.
func clientFacet(runs []*result.Result) string {
	v := ""
	for _, r := range runs {
		switch c := r.Summary.Client; {
		case c == nil:
		case c.Limited:
			return "client-limited"
		default:
			v = "not client-limited"
		}
	}
	return v
}

// Facets are the values of r a list filters by.
func Facets(r *result.Result) map[string]string {
	f := map[string]string{
		"workload": r.Workload.Name, "workload_version": r.Workload.Version,
		"engine": r.Target.Engine, "engine_version": r.Target.Version,
		"dbmark": r.Tool.Version, "month": r.StartedAt.UTC().Format("2006-01"),
		"status": string(r.Status),
	}
	if f["engine"] == "" {
		f["engine"] = r.Target.Kind
	}
	e := r.Environment
	if e == nil {
		return f
	}
	f["cpu_model"] = e.CPUModel
	f["cpus"] = strconv.Itoa(e.CPUs)
	if e.MemoryB > 0 {
		f["memory"] = fmt.Sprintf("%.0f GiB", float64(e.MemoryB)/(1<<30))
	}
	f["kernel"] = e.Kernel
	m := e.MachineFacts
	if m == nil {
		return f
	}
	var virt []string
	for _, v := range []string{m.Virtualization, m.InstanceType, m.Container} {
		if v != "" && v != "none" {
			virt = append(virt, v)
		}
	}
	f["virtualization"] = strings.Join(virt, ", ")
	if f["virtualization"] == "" && m.Virtualization == "none" {
		f["virtualization"] = "none (bare metal)"
	}
	var mnt *result.Mount
	for i := range m.Mounts {
		if mnt == nil || m.Mounts[i].Role == "data_dir" {
			mnt = &m.Mounts[i]
		}
	}
	if mnt == nil {
		return f
	}
	f["fs"] = mnt.FSType
	f["mount_options"] = strings.Join(mnt.Options, ",")
	dev := path.Base(mnt.Device)
	f["raid"] = "none"
	for _, a := range m.RAID {
		if a.Name == dev {
			f["raid"] = a.Level
		}
	}
	for _, d := range m.Disks {
		if d.Name != "" && strings.HasPrefix(dev, d.Name) {
			f["disk_model"] = d.Model
			if d.Model == "" {
				f["disk_model"] = "(model unknown)"
			}
			if d.Rotational != nil {
				f["rotational"] = map[bool]string{true: "yes", false: "no"}[*d.Rotational]
			}
		}
	}
	return f
}
