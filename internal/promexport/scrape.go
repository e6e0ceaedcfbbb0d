package promexport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape reads a metrics page as a scraper does and parses it: in
// Prometheus' text format, or with native set in protobuf, the format
// Prometheus asks for to read native histograms. The families are keyed
// by name.
func Scrape(ctx context.Context, url string, native bool) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if native {
		req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	} else {
		req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	if !native {
		p := expfmt.NewTextParser(model.UTF8Validation)
		return p.TextToMetricFamilies(resp.Body)
	}
	if got := expfmt.ResponseFormat(resp.Header).FormatType(); got != expfmt.TypeProtoDelim {
		return nil, fmt.Errorf("scrape %s: asked for protobuf, got %s", url, resp.Header.Get("Content-Type"))
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	out := map[string]*dto.MetricFamily{}
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out[mf.GetName()] = mf
	}
}

// NativeBuckets are a native histogram's positive buckets as a scraper
// reads them: the count of each non-empty bucket, by its index (bucket i
// ends at 2^(i/2^schema)).
func NativeBuckets(h *dto.Histogram) map[int]uint64 {
	out := map[int]uint64{}
	idx, di := 0, 0
	var count int64
	for _, sp := range h.PositiveSpan {
		idx += int(sp.GetOffset())
		for range sp.GetLength() {
			count += h.PositiveDelta[di]
			di++
			if count > 0 {
				out[idx] = uint64(count)
			}
			idx++
		}
	}
	return out
}
