package site_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
)

// FuzzDecode feeds the submission decoder arbitrary bodies: it must answer
// every one with a submission or an *site.Error with a 4xx status, never a
// panic, and a submission it accepts must encode and hash.
// The seed corpus is testdata/fuzz/FuzzDecode: small documents, valid and
// not, so that mutations stay fast (whole real runs are the other tests').
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := site.Decode(body)
		if err != nil {
			var e *site.Error
			if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
				t.Fatalf("error %v is not a 4xx *site.Error", err)
			}
			return
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("accepted submission does not encode: %v", err)
		}
		if len(s.Hash()) != 64 || len(site.PermalinkID(s.Hash())) != 12 {
			t.Fatalf("bad hash or id")
		}
		fresh := &site.Submission{Format: s.Format, Note: s.Note, Tags: s.Tags, Reproduces: s.Reproduces, Sweep: s.Sweep, Runs: s.Runs}
		if s.Hash() != fresh.Hash() {
			t.Fatalf("the hash kept by Decode is not Hash's")
		}
		if _, err := s.Entry(s.Runs[0].StartedAt); err != nil {
			t.Fatalf("entry: %v", err)
		}
	})
}

// BenchmarkAccept is what the server spends on a submission of a real run
// before the database: decoding, the checks (form, privacy), the hash and
// the stored form.
func BenchmarkAccept(b *testing.B) {
	body, err := json.Marshal(submission(realRun(b, "oltp_read_only")))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := site.Decode(body)
		if err == nil {
			_ = s.Hash()
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Entry(s.Runs[0].StartedAt); err != nil {
			b.Fatal(err)
		}
	}
}

// Decode keeps the hash it takes from the submission's own encoding: it
// must be Hash's, for a run and for a sweep with a note, tags and the
// result it reproduces (what a result already on the site is found by).
func TestDecodeKeepsHash(t *testing.T) {
	a := realRun(t, "oltp_point_select")
	sw := &result.Sweep{SchemaVersion: 1, ID: uuid.NewString(), Workload: a.Workload.Name, Headline: "tps", Better: "higher",
		StartedAt: a.StartedAt, Status: result.SweepDone}
	runs := []*result.Result{variant(t, a, nil), variant(t, a, nil)}
	for _, r := range runs {
		r.Sweep = &result.SweepRef{ID: sw.ID, Cell: map[string]string{"threads": "1"}}
	}
	for _, sub := range []*site.Submission{
		submission(a),
		{Format: site.SubmissionFormat, Note: `a "note" <b>`, Tags: map[string]string{"dc": "fra1", "a": "b"}, Reproduces: "abcdefghijkl", Sweep: sw, Runs: runs},
	} {
		body, err := json.Marshal(sub)
		if err != nil {
			t.Fatal(err)
		}
		got, err := site.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		if got.Hash() != sub.Hash() {
			t.Errorf("decoded hash %s, want %s", got.Hash(), sub.Hash())
		}
	}
}
