// Command sitebench fills a results site's store with varied results and
// drives a running site at a fixed rate, for bench/site.sh.
//
//	sitebench gen -store DSN -n 100000
//	sitebench load -url http://127.0.0.1:8080 -kind results|result|submit|standing|api -rate 200 -duration 30s [-many-clients]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/uuid"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sitebench gen|load [flags]")
		os.Exit(1)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "load":
		err = load(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sitebench:", err)
		os.Exit(1)
	}
}

var (
	workloads = []string{"oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only", "tpcb", "oltp_insert"}
	engines   = [][2]string{{"PostgreSQL", "16.4"}, {"PostgreSQL", "17.2"}, {"MariaDB", "11.4.3"}, {"MySQL", "8.4.2"}, {"SQLite", "3.46.1"}}
	cpus      = []string{"AMD EPYC 7763 64-Core Processor", "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "AMD Ryzen 9 7950X 16-Core Processor",
		"Intel(R) Core(TM) i7-12700K", "Apple M2 Pro", "Neoverse-N1", "AMD EPYC 9654 96-Core Processor", "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"}
	cores   = []int{2, 4, 8, 16, 32, 64, 96}
	disks   = []string{"Samsung SSD 980 PRO 1TB", "INTEL SSDPE2KX040T8", "WDC WD40EFRX-68N32N0", "Amazon Elastic Block Store", "PersistentDisk", "KXG60ZNV512G TOSHIBA"}
	fss     = []string{"ext4", "xfs", "btrfs", "zfs"}
	virts   = []string{"none", "kvm", "xen", "microsoft", "amazon"}
	kernels = []string{"6.1.0-25-amd64", "6.8.0-45-generic", "5.15.0-122-generic", "6.10.11-200.fc40.x86_64"}
	threads = []int{1, 8, 16, 32, 64}
)

// variant is base made into a different, plausible result.
func variant(base *result.Result, rng *rand.Rand) *result.Result {
	b, _ := json.Marshal(base)
	var r result.Result
	json.Unmarshal(b, &r)
	r.ID = uuid.NewString()
	r.Workload.Name = workloads[rng.IntN(len(workloads))]
	e := engines[rng.IntN(len(engines))]
	r.Target.Engine, r.Target.Version = e[0], e[1]
	r.Tool.Version = fmt.Sprintf("1.%d.%d", rng.IntN(4), rng.IntN(3))
	r.Tool.Revision = "0123abc"
	r.Run.Threads = threads[rng.IntN(len(threads))]
	r.Workload.Options["threads"] = fmt.Sprint(r.Run.Threads)
	r.StartedAt = time.Now().Add(-time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour))))
	r.Summary.Headline = math.Exp(rng.NormFloat64()*0.8) * 5000
	if rng.IntN(20) == 0 {
		r.Status = result.StatusFailed
	}
	env := r.Environment
	env.CPUModel = cpus[rng.IntN(len(cpus))]
	env.CPUs = cores[rng.IntN(len(cores))]
	env.MemoryB = uint64(env.CPUs) * 4 << 30
	env.Kernel = kernels[rng.IntN(len(kernels))]
	if env.MachineFacts == nil {
		// A data directory on one disk, so that results differ in
		// storage and file system as real ones do.
		env.MachineFacts = &result.MachineFacts{Disks: []result.Disk{{Name: "sda"}}, Mounts: []result.Mount{{Role: "data_dir", Device: "sda1"}}}
	}
	if m := env.MachineFacts; m != nil {
		m.Virtualization = virts[rng.IntN(len(virts))]
		m.Container = ""
		for i := range m.Disks {
			m.Disks[i].Model = disks[rng.IntN(len(disks))]
			rot := rng.IntN(5) == 0
			m.Disks[i].Rotational = &rot
			if rot {
				r.Summary.Headline /= 2 // an effect for the standing pages to find
			}
		}
		fs := fss[rng.IntN(len(fss))]
		for i := range m.Mounts {
			m.Mounts[i].FSType = fs
		}
	}
	return &r
}

func readBase() ([]*result.Result, error) {
	var out []*result.Result
	for _, n := range []string{"oltp_point_select", "oltp_read_only"} {
		b, err := os.ReadFile("internal/site/testdata/" + n + ".json")
		if err != nil {
			return nil, fmt.Errorf("%w (run from the repository's root)", err)
		}
		r, err := result.Unmarshal(b)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	dsn := fs.String("store", "", "the site's store")
	n := fs.Int("n", 10000, "results to add")
	fs.Parse(args)
	ctx := context.Background()
	st, err := sitestore.Open(ctx, *dsn, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	bases, err := readBase()
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	start := time.Now()
	for i := range *n {
		r := variant(bases[i%len(bases)], rng)
		sub := &site.Submission{Format: site.SubmissionFormat, Runs: []*result.Result{r}}
		e, err := sub.Entry(r.StartedAt.Add(time.Hour))
		if err != nil {
			return err
		}
		if _, _, _, err := st.Put(ctx, e, nil); err != nil {
			return err
		}
		if (i+1)%10000 == 0 {
			fmt.Fprintf(os.Stderr, "%d results in %s\n", i+1, time.Since(start).Round(time.Second))
		}
	}
	return nil
}

func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	base := fs.String("url", "http://127.0.0.1:8080", "the site")
	kind := fs.String("kind", "results", "results (filtered lists), result (one result's page, with where it stands), submit, standing (a workload's standing page) or api (the API's reference page)")
	rate := fs.Float64("rate", 200, "requests per second")
	dur := fs.Duration("duration", 30*time.Second, "how long to measure")
	warmup := fs.Duration("warmup", 0, "how long to send the same load before measuring (caches fill)")
	spread := fs.Bool("many-clients", false, "send each submission from a random address in 10.0.0.0/8, in X-Forwarded-For (for a server with --trust-proxy and its default rate limits)")
	fs.Parse(args)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	var ids []string
	var bases []*result.Result
	switch *kind {
	case "result":
		res, err := client.Get(*base + "/api/v1/results?limit=500")
		if err != nil {
			return err
		}
		var l site.ResultList
		json.NewDecoder(res.Body).Decode(&l)
		res.Body.Close()
		for _, r := range l.Results {
			ids = append(ids, r.ID)
		}
		if len(ids) == 0 {
			return fmt.Errorf("the site has no results")
		}
	case "submit":
		var err error
		if bases, err = readBase(); err != nil {
			return err
		}
	case "results", "standing", "api":
	default:
		return fmt.Errorf("unknown kind %q", *kind)
	}
	var mu sync.Mutex
	var rngMu sync.Mutex
	h := hdr.New(1, 60_000_000, 3) // microseconds, of the answers served
	var errs, shed, sent atomic.Int64
	request := func() (*http.Request, error) {
		rngMu.Lock()
		defer rngMu.Unlock()
		switch *kind {
		case "result":
			return http.NewRequest("GET", *base+"/r/"+ids[rng.IntN(len(ids))], nil)
		case "standing":
			return http.NewRequest("GET", *base+"/standing/"+workloads[rng.IntN(len(workloads))], nil)
		case "api":
			return http.NewRequest("GET", *base+"/api", nil)
		case "submit":
			r := variant(bases[rng.IntN(len(bases))], rng)
			b, _ := json.Marshal(&site.Submission{Format: site.SubmissionFormat, Runs: []*result.Result{r}})
			req, err := http.NewRequest("POST", *base+"/api/v1/results", bytes.NewReader(b))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
				if *spread {
					req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", rng.IntN(256), rng.IntN(256), rng.IntN(256)))
				}
			}
			return req, err
		}
		q := url.Values{}
		switch rng.IntN(4) {
		case 0:
			q.Set("workload", workloads[rng.IntN(len(workloads))])
		case 1:
			q.Set("engine", engines[rng.IntN(len(engines))][0])
			q.Set("cpus", fmt.Sprint(cores[rng.IntN(len(cores))]))
		case 2:
			q.Set("workload", workloads[rng.IntN(len(workloads))])
			q.Set("sort", "headline")
		case 3:
			q.Set("fs", fss[rng.IntN(len(fss))])
			q.Set("virtualization", virts[rng.IntN(len(virts))])
		}
		return http.NewRequest("GET", *base+"/results?"+q.Encode(), nil)
	}
	interval := time.Duration(float64(time.Second) / *rate)
	measureFrom := time.Now().Add(*warmup)
	end := measureFrom.Add(*dur)
	var wg sync.WaitGroup
	for next := time.Now(); next.Before(end); next = next.Add(interval) {
		time.Sleep(time.Until(next))
		req, err := request()
		if err != nil {
			return err
		}
		measured := !next.Before(measureFrom)
		if measured {
			sent.Add(1)
		}
		wg.Add(1)
		go func(intended time.Time) {
			defer wg.Done()
			res, err := client.Do(req)
			busy := false
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				busy = res.StatusCode == http.StatusServiceUnavailable
				if res.StatusCode >= 300 && !busy {
					err = fmt.Errorf("%s", res.Status)
				}
			}
			if !measured {
				return
			}
			switch {
			case err != nil:
				errs.Add(1)
			case busy:
				shed.Add(1)
			default:
				// From the intended start: a late request counts its wait.
				us := time.Since(intended).Microseconds()
				mu.Lock()
				h.RecordValue(us)
				mu.Unlock()
			}
		}(next)
	}
	wg.Wait()
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
	fmt.Printf("%s: %d requests at %.0f/s for %s: %d served, p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d shed (503), %d errors\n",
		*kind, sent.Load(), *rate, *dur, h.TotalCount(), ms(50), ms(99), float64(h.Max())/1000, shed.Load(), errs.Load())
	return nil
}
