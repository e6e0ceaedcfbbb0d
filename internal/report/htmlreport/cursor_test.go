package htmlreport_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
)

// The time charts of a part share one cursor: hovering any of them, the
// wide throughput chart or a half-width counter chart, puts every other's
// pointer on the same second. A counter chosen in the throughput chart's
// caption is drawn over it on a second y axis, and taken off again.
func TestCursorAndOverlayInChromium(t *testing.T) {
	lib := library(t)
	ctx, problems, _ := openReport(t, []htmlreport.Run{htmlreport.FindingRun(1)}, htmlreport.Options{Library: lib, Generated: time.Now()})
	// The part's time charts: throughput and latency at full width, the
	// three counters that moved at half width.
	timeCharts := []string{"g1-tput", "g1-lat", "g1-ctr1", "g1-ctr2", "g1-ctr3"}

	// hover moves the mouse onto chart id where its x axis reads at, and
	// returns every time chart's cursor.
	hover := func(id string, at float64) map[string]float64 {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS("#"+id)),
			chromedp.MouseEvent(chromedp.MouseMoved, 1, 1)); err != nil {
			t.Fatal(err)
		}
		pt, err := chromedp.Run(ctx, chromedp.Evaluate[[2]float64](fmt.Sprintf(`(() => {
			const el = document.getElementById(%q), r = el.getBoundingClientRect();
			const c = echarts.getInstanceByDom(el);
			return [r.left + c.convertToPixel({xAxisIndex: 0}, %g), r.top + c.getHeight() / 2];
		})()`, id, at)))
		if err != nil {
			t.Fatal(err)
		}
		for _, dx := range []float64{-3, 0} { // enter, then move: as a hand does
			if err := chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, pt[0]+dx, pt[1])); err != nil {
				t.Fatal(err)
			}
		}
		cur, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`Object.fromEntries(
			Array.from(document.querySelectorAll('.chart[data-cursor]')).map(e => [e.id, Number(e.dataset.cursor)]))`))
		if err != nil {
			t.Fatal(err)
		}
		return cur
	}
	check := func(from string, at float64) {
		t.Helper()
		cur := hover(from, at)
		for _, id := range timeCharts {
			got, ok := cur[id]
			if !ok {
				t.Errorf("hovering %s at %g s: %s shows no cursor (cursors %v)", from, at, id, cur)
			} else if math.Abs(got-at) > 0.5 { // the samples are a second apart: the pointer snaps to the nearest
				t.Errorf("hovering %s at %g s: %s's cursor at %g s", from, at, id, got)
			}
		}
	}
	check("g1-tput", 8)
	check("g1-tput", 21)
	check("g1-ctr2", 13) // a half-width chart leads too
	check("g1-lat", 27)

	// overlay picks a counter in the throughput chart's caption and says
	// what the chart then holds.
	type state struct {
		Overlay string `json:"overlay"`
		Points  int    `json:"points"`
		YAxes   int    `json:"yAxes"`
	}
	overlay := func(name string) state {
		t.Helper()
		st, err := chromedp.Run(ctx, chromedp.Evaluate[state](fmt.Sprintf(`(() => {
			const sel = document.querySelector('select[data-overlay-of="g1-tput"]');
			sel.value = %q;
			sel.dispatchEvent(new Event('change'));
			const el = document.getElementById('g1-tput');
			return {overlay: el.dataset.overlay, points: Number(el.dataset.points),
				yAxes: echarts.getInstanceByDom(el).getOption().yAxis.length};
		})()`, name)))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// A flat counter (not drawn elsewhere), then one that has a chart of
	// its own: 30 points each over the throughput's 30.
	for _, name := range []string{"os.mem.used (bytes)", "db.checkpoint_buffers (pages/s)"} {
		if st := overlay(name); st.Overlay != name || st.Points != 60 || st.YAxes != 2 {
			t.Errorf("overlay %s: %+v, want it drawn on a second axis, 60 points", name, st)
		}
	}
	check("g1-tput", 14) // the cursor still leads with the counter over the throughput
	if st := overlay(""); st.Overlay != "" || st.Points != 30 || st.YAxes != 1 {
		t.Errorf("no overlay: %+v, want the throughput alone", st)
	}
	for _, p := range problems.Take() {
		t.Error(p)
	}
}
