package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestHistogramRoundTrip(t *testing.T) {
	h := hdr.New(1, int64(time.Hour), 3)
	for i := int64(1); i < 100000; i += 7 {
		_ = h.RecordValue(i * 1000)
	}
	enc, err := EncodeHistogram("txn", "latency", h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := enc.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equals(h) {
		t.Fatal("decoded histogram differs")
	}
	if _, err := (Histogram{Encoded: "not base64!"}).Decode(); err == nil {
		t.Fatal("garbage decoded")
	}
}

func TestWriteFileIsAtomicAndReadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	r := &Result{SchemaVersion: SchemaVersion, ID: "x", Status: StatusOK, StartedAt: time.Now().UTC()}
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	r.Status = StatusInterrupted
	if err := WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(path)
	if err != nil || back.Status != StatusInterrupted {
		t.Fatalf("%v %v", back, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "r.json"), r); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	if _, err := ReadFile(filepath.Join(dir, "none.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file read as %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema_version": 0}`), 0o644)
	if _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a document of no schema version: %v, want an error naming the file", err)
	}
}

func TestUnmarshalChecksSchemaVersion(t *testing.T) {
	for _, doc := range []string{`{"schema_version": 0}`, `{"schema_version": 99}`, `{`, `[]`} {
		if _, err := Unmarshal([]byte(doc)); err == nil {
			t.Errorf("%s accepted", doc)
		}
	}
	if _, err := Unmarshal([]byte(`{"schema_version": 1}`)); err != nil {
		t.Fatal(err)
	}
}

func TestLatencyGet(t *testing.T) {
	h := hdr.New(1, int64(time.Hour), 3)
	for i := 1; i <= 100; i++ {
		_ = h.RecordValue(int64(i) * 1e6)
	}
	l := LatencyOf(h, []float64{50, 99})
	if v, ok := l.Get(99); !ok || v < 98.9 || v > 99.2 {
		t.Fatalf("p99 = %v %v", v, ok)
	}
	if _, ok := l.Get(95); ok {
		t.Fatal("p95 was not computed")
	}
	if LatencyOf(hdr.New(1, 10, 1), nil) != nil {
		t.Fatal("empty histogram gave a latency")
	}
}

// A run on one server's document has no servers; a cluster run's keeps
// each server's part through a write and a read.
func TestServersRoundTrip(t *testing.T) {
	one := &Result{SchemaVersion: SchemaVersion, ID: "x", Status: StatusOK}
	b, err := json.Marshal(one)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "servers") {
		t.Errorf("a run on one server writes servers: %s", b)
	}
	two := *one
	two.Servers = []Server{{Label: ServerLabel(0), Clients: 2, Target: Target{Kind: "postgres", URL: "postgres://a/b"},
		Summary: &ServerSummary{Events: 10, EventsPerS: 5, Latency: &Latency{MeanMS: 1}}}, {Label: ServerLabel(1), Clients: 1}}
	b, err = json.Marshal(&two)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Servers) != 2 || back.Servers[0].Label != "server1" || back.Servers[1].Label != "server2" ||
		back.Servers[0].Summary.Events != 10 || back.Servers[0].Target.URL != "postgres://a/b" {
		t.Errorf("read back %+v", back.Servers)
	}
}
