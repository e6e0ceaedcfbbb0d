package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/sampler"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/transport"
	"github.com/dbmark/dbmark/internal/workload"
)

// A run on a cluster: --target given once per server (a Galera or NDB
// cluster's SQL nodes, or sysbench's --mysql-host list). The clients are
// spread over the servers round-robin, client i on server i mod the
// number of servers, each client's connection, reconnects and TLS its
// server's as on one. What a cluster shares is acted on once, through the
// first server: prepare, cleanup, check, the workload's own checks, the
// server's clock for --start-at. Each server's facts and counters are
// recorded, and its part of the run (result.Server).

// openMore opens the further servers of a run on several (f.more), as
// openTarget opens the first (tg), without connecting, with the hold tg
// was opened with. They must all be servers of tg's engine: a cluster's
// nodes speak one dialect, and the workload writes for one.
func (a *App) openMore(ctx context.Context, w workload.Spec, f *runFlags, tg target.Target, clients int, hold *transport.Hold) ([]target.Target, error) {
	if len(f.more) == 0 || w.OwnTarget != nil {
		return nil, nil
	}
	if d := tg.Dialect(); d != nil && d.Embedded() {
		return nil, withCode(ExitUsage, fmt.Errorf("--target given %d times: %s is an embedded engine, not a server a cluster is made of (give one --target, or several servers' URLs)", 1+len(f.more), tg.Kind()))
	}
	var more []target.Target
	for _, raw := range f.more {
		t, err := a.Targets.Open(ctx, raw, a.targetOptions(f, clients, hold))
		if err != nil {
			closeTargets(more)
			return nil, withCode(ExitUsage, err)
		}
		more = append(more, t)
		if t.Kind() != tg.Kind() {
			closeTargets(more)
			return nil, withCode(ExitUsage, fmt.Errorf("--target %s is %s, the first --target %s: a run's servers are of one engine (run each engine apart)", t.Redacted(), t.Kind(), tg.Kind()))
		}
	}
	return more, nil
}

func closeTargets(tgs []target.Target) {
	for _, t := range tgs {
		t.Close()
	}
}

// refuseServerSetOnCluster refuses --server-set with several servers: it
// sets, reads back and restores one server's settings.
func refuseServerSetOnCluster(f *runFlags) error {
	if len(f.more) > 0 && !f.serverSet.Empty() {
		return withCode(ExitUsage, errors.New("--server-set changes one server's settings, and --target names several: set them on each node of the cluster yourself, or run on one --target"))
	}
	return nil
}

// servers is each server of a run on several as the run found it: the
// first's target as recorded (first), then each of more inspected and
// its facts read. Nil for a run on one server.
func (a *App) servers(ctx context.Context, first result.Target, more []target.Target) ([]result.Server, error) {
	if len(more) == 0 {
		return nil, nil
	}
	first.ServerSet = nil // the result's target keeps them
	out := []result.Server{{Label: result.ServerLabel(0), Target: first}}
	for i, t := range more {
		eng, err := t.Inspect(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Redacted(), err)
		}
		out = append(out, result.Server{Label: result.ServerLabel(i + 1), Target: result.Target{
			Kind: t.Kind(), URL: t.Redacted(), Engine: eng.Name, Version: eng.Version, Driver: eng.Driver,
			DataDir: eng.DataDir, Settings: eng.Settings, EngineFacts: engineFacts(ctx, t, a)}})
	}
	return out, nil
}

// addServers puts each server's part of the run (the runner's, by index)
// beside its facts.
func addServers(servers []result.Server, parts []result.Server) {
	for i := range servers {
		if i < len(parts) {
			servers[i].Clients, servers[i].Summary, servers[i].Histograms = parts[i].Clients, parts[i].Summary, parts[i].Histograms
		}
	}
}

// serverCounters are the counter sources of a run's servers, each under
// its label; nil for a run on one.
func serverCounters(tg target.Target, more []target.Target) []sampler.Server {
	if len(more) == 0 {
		return nil
	}
	var out []sampler.Server
	for i, t := range append([]target.Target{tg}, more...) {
		sv := sampler.Server{Label: result.ServerLabel(i)}
		if cs, ok := t.(target.CounterSource); ok {
			sv.DB = cs
		} else {
			sv.NoDB = t.Kind() + ": the driver exposes no server counters"
		}
		out = append(out, sv)
	}
	return out
}
