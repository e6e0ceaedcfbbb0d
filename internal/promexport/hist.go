package promexport

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/dbmark/dbmark/internal/metrics"
)

// Buckets are the classic buckets' upper bounds, in seconds: from 50 µs
// (a point select on loopback) to a minute, 1-2.5-5 a decade.
var Buckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Schema is the native histograms' resolution: each bucket 2^(1/16) times
// as wide as the one below (4.4%), where the run's own histograms keep
// 0.1%.
const Schema = 4

// newHistogram is one operation's latency as both kinds of histogram in
// one series: classic buckets, which every format carries, and native
// buckets, which a scraper asking for protobuf reads instead. Each of the
// run's histogram buckets goes whole to the bucket holding its middle.
func newHistogram(d *prometheus.Desc, o metrics.OpSnapshot, created time.Time, lv ...string) prometheus.Metric {
	classic := make([]uint64, len(Buckets))
	native := map[int]int64{}
	// The bins come in increasing order: the classic bucket moves on
	// along the bounds, and a native bucket's index (a logarithm) is
	// taken once for the bins it holds, not for each.
	j := 0
	ni, upper, pending := 0, math.Inf(-1), int64(0)
	metrics.Bins(o.Counts, func(low, width, n int64) {
		v := (float64(low) + float64(width-1)/2) / 1e9
		for j < len(Buckets) && v > Buckets[j] {
			j++
		}
		if j < len(Buckets) {
			classic[j] += uint64(n)
		}
		if v > upper {
			if pending > 0 {
				native[ni] += pending
			}
			ni = int(math.Ceil(math.Log2(v) * (1 << Schema)))
			upper, pending = math.Exp2(float64(ni)/(1<<Schema)), 0
		}
		pending += n
	})
	if pending > 0 {
		native[ni] += pending
	}
	cum := make(map[float64]uint64, len(Buckets))
	var run uint64
	for i, b := range Buckets {
		run += classic[i]
		cum[b] = run
	}
	sum := float64(o.SumNS) / 1e9
	return both{
		classic: prometheus.MustNewConstHistogramWithCreatedTimestamp(d, uint64(o.Timed), sum, cum, created, lv...),
		native:  prometheus.MustNewConstNativeHistogram(d, uint64(o.Timed), sum, native, nil, 0, Schema, prometheus.DefNativeHistogramZeroThreshold, created, lv...),
	}
}

// both is a histogram with classic and native buckets, as client_golang's
// own histograms are when given both.
type both struct{ classic, native prometheus.Metric }

func (b both) Desc() *prometheus.Desc { return b.classic.Desc() }

func (b both) Write(m *dto.Metric) error {
	var n dto.Metric
	if err := b.native.Write(&n); err != nil {
		return err
	}
	if err := b.classic.Write(m); err != nil {
		return err
	}
	h, nh := m.Histogram, n.Histogram
	h.Schema, h.ZeroThreshold, h.ZeroCount = nh.Schema, nh.ZeroThreshold, nh.ZeroCount
	h.PositiveSpan, h.PositiveDelta = nh.PositiveSpan, nh.PositiveDelta
	return nil
}
