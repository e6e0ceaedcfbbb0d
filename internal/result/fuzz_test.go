package result

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// seedHistogram is a small real histogram, encoded.
func seedHistogram(tb testing.TB) Histogram {
	h := hdr.New(1, int64(time.Hour), 3)
	for i := int64(1); i < 5000; i += 13 {
		_ = h.RecordValue(i * 997)
	}
	enc, err := EncodeHistogram("txn", "latency", h)
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

func oneLine(t *testing.T, what string, err error) {
	t.Helper()
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("%s: the error spans lines: %q", what, err)
	}
}

// FuzzUnmarshal decodes any bytes as a result document: no panic, a
// one-line error, and a document that decodes encodes to a fixed point
// (decode, encode, decode, encode gives the same bytes).
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"histograms":[{"op":"a","encoded":"HISTFAAAACB4nJNpmSzMwMDAyQABzFCaEUzOmNUAAQ=="}]}`))
	f.Add([]byte(`{"schema_version":1}`))
	f.Add([]byte(`{"schema_version":2}`))
	f.Add([]byte(`{"schema_version":1,"status":"failed","queries":{"iterations":2,"streams":1,"total_s":0.5,"geomean_s":0.1,"failed":1,` +
		`"list":[{"label":"q1","sql":"select 1","cold_s":0.2,"hot_s":0.1,"median_s":0.15,"rows":1,"runs":[{"stream":0,"iteration":1,"t":0,"s":0.2,"rows":1,"bytes":1},` +
		`{"stream":0,"iteration":2,"t":0.2,"s":0.1,"rows":0,"bytes":0,"kind":"wrong answer","error":"want 1 row"}]}]}}`))
	f.Add([]byte(`{"schema_version":1,"status":"ok","summary":{"ops":[{"name":"txn","count":3}]},` +
		`"series":[{"t":1,"duration_s":1,"events_per_s":3,"extra":{"rows":5}}],"started_at":"2024-01-02T03:04:05.123456789+02:00"}`))
	full := &Result{SchemaVersion: 1, ID: "x", Status: StatusOK, Histograms: []Histogram{seedHistogram(f)},
		Summary: Summary{Events: 3, Client: &ClientCPU{UserS: 0.5, SystemS: 0.25, PerEventUS: 12.5, MachineShare: 0.45, CPUs: 2, SharedMachine: true, Limited: true}},
		Series:  []Interval{{T: 1, DurationS: 1, EventsPerS: 2.5, Latency: []Percentile{{P: 95, MS: 1.25}}}}}
	b, err := Marshal(full)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Unmarshal(b)
		if err != nil {
			oneLine(t, "Unmarshal", err)
			return
		}
		for _, h := range r.Histograms {
			if _, err := h.Decode(); err != nil {
				oneLine(t, "Decode", err)
			}
		}
		b1, err := Marshal(r)
		if err != nil {
			t.Fatalf("a decoded document does not encode: %v", err)
		}
		r2, err := Unmarshal(b1)
		if err != nil {
			t.Fatalf("an encoded document does not decode: %v\n%s", err, b1)
		}
		b2, err := Marshal(r2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("encoding is not a fixed point:\n%s\n%s", b1, b2)
		}
	})
}

// FuzzHistogramDecode decodes any text as an encoded histogram: no panic,
// bounded memory, a one-line error, and what decodes re-encodes to a
// histogram equal to it.
func FuzzHistogramDecode(f *testing.F) {
	f.Add(seedHistogram(f).Encoded)
	f.Add("HISTFAAAACB4nJNpmSzMwMDAyQABzFCaEUzOmNUAAQ==")
	f.Add("")
	f.Add("not base64!")
	empty, err := EncodeHistogram("e", "latency", hdr.New(1, 1000, 1))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(empty.Encoded)
	// Raw bytes are easier for the fuzzer to mutate than base64.
	raw, _ := base64.StdEncoding.DecodeString(seedHistogram(f).Encoded)
	f.Add(string(raw))
	f.Fuzz(func(t *testing.T, s string) {
		for _, enc := range []string{s, base64.StdEncoding.EncodeToString([]byte(s))} {
			h, err := Histogram{Op: "op", Kind: "latency", Encoded: enc}.Decode()
			if err != nil {
				oneLine(t, "Decode", err)
				if !strings.Contains(err.Error(), "histogram op/latency") {
					t.Fatalf("error %q does not name the histogram", err)
				}
				continue
			}
			again, err := EncodeHistogram("op", "latency", h)
			if err != nil {
				t.Fatalf("a decoded histogram does not encode: %v", err)
			}
			back, err := again.Decode()
			if err != nil {
				t.Fatalf("a re-encoded histogram does not decode: %v", err)
			}
			if !back.Equals(h) {
				t.Fatalf("round trip changed the histogram: %d values, min %d max %d -> %d values, min %d max %d",
					h.TotalCount(), h.Min(), h.Max(), back.TotalCount(), back.Min(), back.Max())
			}
		}
	})
}
