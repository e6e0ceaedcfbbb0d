package runner

// alignWarmup makes the warm-up end at the configured wall-clock instant
// (Config.StartAt), so that runs on several hosts, each started when its
// clients were connected, measure the same window: the clients run as
// warm-up until then, whatever --warmup asked. Clients ready only after
// the instant get no warm-up, and their window starts late (the caller
// sees it in Outcome.StartedAt). The time limit, ticks and window all
// follow from the start and the warm-up as in any run.
func (r *run) alignWarmup() {
	if r.cfg.StartAt.IsZero() {
		return
	}
	r.cfg.Warmup = max(r.cfg.StartAt.Sub(r.start), 0)
}
