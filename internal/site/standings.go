package site

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site/sitestore"
	"github.com/dbmark/dbmark/internal/site/standing"
)

// PeerOf is the set of results r stands among: those that did the same
// work (ComparableKey) on the same engine's major version (the version's
// first number: 16 for 16.4, 11 for 11.4.3), with the facts the set's
// analysis compares: CPU model, CPUs, storage kind, file system and the
// engine settings that differ from their defaults.
func PeerOf(r *result.Result) *sitestore.Peer {
	engine := r.Target.Engine
	if engine == "" {
		engine = r.Target.Kind
	}
	major, _, _ := strings.Cut(r.Target.Version, ".")
	sum := sha256.Sum256([]byte(ComparableKey(r) + "\x00" + engine + "\x00" + major))
	// The label names the engine and the load (WorkOptions' first rows:
	// threads, and the rate of an open loop); the rest of the options
	// that change the work are shown apart.
	label := []string{strings.TrimSpace(engine + " " + major)}
	var work []string
	for i, kv := range WorkOptions(r) {
		switch {
		case i == 0 || i == 1 && r.Run.Rate > 0:
			label = append(label, kv[0]+" "+kv[1])
		case kv[0] != "threads" && kv[0] != "rate":
			work = append(work, kv[0]+" "+kv[1])
		}
	}
	p := &sitestore.Peer{Key: fmt.Sprintf("%x", sum[:8]), Workload: r.Workload.Name, Label: strings.Join(label, ", "),
		Work: strings.Join(work, ", "), Facts: map[string]string{}}
	if env := r.Environment; env != nil {
		if env.CPUModel != "" {
			p.Facts["cpu_model"] = env.CPUModel
		}
		if env.CPUs > 0 {
			p.Facts["cpus"] = strconv.Itoa(env.CPUs)
		}
		if m := env.MachineFacts; m != nil {
			if mnt := dataMount(m); mnt != nil {
				if mnt.FSType != "" {
					p.Facts["fs"] = mnt.FSType
				}
				if k := storageKind(m, mnt); k != "" {
					p.Facts["storage"] = k
				}
			}
		}
	}
	if f := r.Target.EngineFacts; f != nil {
		p.Facts[standing.Known] = "yes"
		for k, nd := range f.NonDefault {
			p.Facts[standing.SettingPrefix+k] = nd.Value
		}
	}
	return p
}

// dataMount is the mount of the data directory, else the first one (as
// Facets chooses).
func dataMount(m *result.MachineFacts) *result.Mount {
	var mnt *result.Mount
	for i := range m.Mounts {
		if mnt == nil || m.Mounts[i].Role == "data_dir" {
			mnt = &m.Mounts[i]
		}
	}
	return mnt
}

// storageKind is NVMe, SSD or HDD for the disk under mnt ("" unknown).
func storageKind(m *result.MachineFacts, mnt *result.Mount) string {
	dev := path.Base(mnt.Device)
	for _, d := range m.Disks {
		if d.Name == "" || !strings.HasPrefix(dev, d.Name) {
			continue
		}
		switch {
		case strings.HasPrefix(d.Name, "nvme"):
			return "NVMe"
		case d.Rotational == nil:
			return ""
		case *d.Rotational:
			return "HDD"
		default:
			return "SSD"
		}
	}
	return ""
}

// backfillPeers gives the results stored before the store kept their
// standing facts theirs.
func (s *Server) backfillPeers(ctx context.Context) error {
	n, err := s.cfg.Store.BackfillPeers(ctx, func(m sitestore.MissingPeer) *sitestore.Peer {
		var sub Submission
		if json.Unmarshal(m.Document, &sub) != nil || len(sub.Runs) == 0 {
			return nil
		}
		return PeerOf(sub.Primary())
	})
	if n > 0 {
		s.cfg.Logger.InfoContext(ctx, "standing: read the facts of results stored before", "results", n)
	}
	if err != nil {
		return err
	}
	// Every set in memory before the first request, not by it.
	return s.cfg.Store.WarmStanding(ctx)
}

// factLabels name the facts pages show.
var factLabels = map[string]string{"cpu_model": "CPU model", "cpus": "CPUs", "storage": "storage kind", "fs": "file system"}

func factLabel(k string) string {
	if l, ok := factLabels[k]; ok {
		return l
	}
	if name, ok := strings.CutPrefix(k, standing.SettingPrefix); ok {
		return "engine setting " + name
	}
	return k
}

// findingView is a standing.Finding as pages show it.
type findingView struct {
	Fact, Value, Ratio, Superiority, BetterHalf, OthersBetterHalf, P string
	N, Others                                                        int
	// Yours says the result on the page has this value.
	Yours bool
}

// standingView is where a result stands, or a set on the workload's page.
type standingView struct {
	Key, Label, Work, Workload string
	Link                       string
	// Own says the view is on a result's page: findings say whether the
	// result has them.
	Own bool
	// Percentile is the share of the set's other results this one beats
	// (empty on the workload's page, or when it is not placed); Others how
	// many those are.
	Percentile string
	Others     int
	Stored     int64
	Better     string
	Findings   []findingView
	Tests      int
	// From is how many results the findings come from.
	From int
	// Note says why a result is not placed.
	Note string
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 0, 64) + "%" }

func viewOf(ps *sitestore.PeerSet, facts map[string]string) standingView {
	a := ps.Analysis
	v := standingView{Key: ps.Key, Own: facts != nil, Label: ps.Label, Work: ps.Work, Workload: ps.Workload, Link: "/standing/" + url.PathEscape(ps.Workload) + "#set-" + ps.Key,
		Others: a.Len(), Stored: ps.Stored, Better: ps.Better, Tests: a.Tests, From: a.From}
	for _, f := range a.Findings {
		fv := findingView{Fact: factLabel(f.Fact), Value: f.Value, N: f.N, Others: f.Others,
			Ratio: strconv.FormatFloat(f.Ratio, 'f', 2, 64) + "×", Superiority: pct(f.Superiority),
			BetterHalf: pct(f.BetterHalf), OthersBetterHalf: pct(f.OthersBetterHalf), P: strconv.FormatFloat(f.P, 'g', 2, 64)}
		if facts != nil {
			own, ok := facts[f.Fact]
			if !ok && strings.HasPrefix(f.Fact, standing.SettingPrefix) && facts[standing.Known] != "" {
				own, ok = standing.DefaultValue, true
			}
			fv.Yours = ok && own == f.Value
		}
		v.Findings = append(v.Findings, fv)
	}
	return v
}

// resultStanding is where the result e (of primary run p) stands among
// its set; nil when it has none.
func (s *Server) resultStanding(ctx context.Context, e *sitestore.Entry, p *result.Result) (*standingView, error) {
	peer := PeerOf(p)
	ps, err := s.cfg.Store.Standing(ctx, peer.Key)
	if err != nil {
		return nil, err
	}
	if ps == nil {
		return nil, nil
	}
	v := viewOf(ps, peer.Facts)
	member := e.Status == "ok" && !e.Hidden
	switch pc, others, ok := ps.Analysis.Percentile(e.Headline, member); {
	case e.Status != "ok":
		v.Note = "The run did not end ok: it is not placed among the others."
		v.Others = ps.Analysis.Len()
	case !ok:
		v.Note = "No other result did the same work on this engine's major version yet."
	default:
		v.Percentile, v.Others = strconv.FormatFloat(pc, 'f', 0, 64), others
	}
	return &v, nil
}

// minShown is how many results a set needs to be on the workload's page:
// below, no fact can be tested (standing.MinResults a side).
const minShown = 2 * standing.MinResults

func (s *Server) pageStanding(w http.ResponseWriter, r *http.Request) {
	wl := r.PathValue("workload")
	sets, err := s.cfg.Store.PeerSets(r.Context(), wl, minShown, 40)
	if err != nil {
		s.pageFailed(w, r, err)
		return
	}
	v := struct {
		page
		Workload string
		Sets     []standingView
	}{page: page{Title: "Where results stand: " + wl}, Workload: wl}
	for _, set := range sets {
		ps, err := s.cfg.Store.Standing(r.Context(), set.Key)
		if err != nil {
			s.pageFailed(w, r, err)
			return
		}
		if ps == nil {
			continue
		}
		v.Sets = append(v.Sets, viewOf(ps, nil))
	}
	s.render(w, r, http.StatusOK, "standing", v)
}
