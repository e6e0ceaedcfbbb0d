package site_test

import (
	"encoding/json"
	"errors"
	"testing"

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
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Entry(s.Runs[0].StartedAt); err != nil {
			b.Fatal(err)
		}
	}
}
