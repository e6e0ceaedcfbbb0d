# dbmark: `make test` installs and starts the private test databases
# (scripts/testenv.sh) and runs every Go test against them.

# bash with -e/-o pipefail so a failing step in a multi-line recipe fails the target.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO      ?= go
TESTENV := bash scripts/testenv.sh
DEPLOYTOOLS := bash scripts/deploy-tools.sh
# Empty outside a git checkout (or before the first commit); the build still works.
REVISION ?= $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -X github.com/dbmark/dbmark/internal/buildinfo.Revision=$(REVISION)

# GOFLAGS from the environment (e.g. -buildvcs=false) is left alone on purpose.
# sqlite_dbstat compiles SQLite's dbstat table in: the insert benchmark's
# table and index sizes on SQLite.
TAGS    := sqlite_dbstat

.PHONY: test build testenv-start testenv-stop bench assets quick screenshots fuzz deploy-tools deploy-check

# The packages whose goroutines share state (workers, metric handles,
# connections): their tests run under the race detector, the rest without
# it (it slows tests several times over). ./internal/target/... holds the
# blocking transport's net.Conn conformance (x/net/nettest) and every
# engine's suite on it.
RACE_PKGS := ./internal/runner/... ./internal/metrics/... ./internal/promexport/... ./internal/sampler/... ./internal/target/... ./internal/testsrv/...

# The packages whose tests take longest (minutes each, against the servers
# and the peers): listed first, go test starts them first, and the short
# ones fill the other lane instead of waiting behind them at the end.
SLOW_PKGS := ./internal/cli ./internal/compat ./cmd/dbmark

# One shell, so the exported DBMARK_TEST_* settings reach go vet and go test.
# The tests wait on servers and timed runs most of the time (the race
# packages alone use a third of the two cores), so the race detector's
# packages run beside the others, their output held until both are done.
# The fuzz targets' instrumented binaries are built at the lowest priority
# meanwhile, then fuzzed after the tests.
test: testenv-start assets deploy-tools
	eval "$$($(TESTENV) env)"; \
	eval "$$($(DEPLOYTOOLS) env)"; \
	tmp=$$(mktemp -d); fuzzbin=$$tmp/fuzz; mkdir "$$fuzzbin"; fuzzbuild=; raced=; \
	trap 'for p in $$fuzzbuild $$raced; do kill $$p 2>/dev/null; done; rm -rf "$$tmp"' EXIT; \
	FUZZ_BIN_DIR=$$fuzzbin FUZZ_BUILD_ONLY=1 nice -n 19 bash scripts/fuzz.sh > $$tmp/fuzz-build.log 2>&1 & fuzzbuild=$$!; \
	$(GO) vet -tags $(TAGS) -p 2 ./...; \
	$(GO) test -tags $(TAGS) -race -p 2 -count=1 -timeout 12m $(RACE_PKGS) > $$tmp/race.log 2>&1 & raced=$$!; \
	$(GO) test -tags $(TAGS) -p 2 -count=1 -timeout 12m $(SLOW_PKGS) $$($(GO) list ./... | grep -vxF -f <($(GO) list $(RACE_PKGS) $(SLOW_PKGS))) || \
		{ wait $$raced; raced=; cat $$tmp/race.log; exit 1; }; \
	echo "# the race detector's packages:"; \
	wait $$raced || { cat $$tmp/race.log; exit 1; }; raced=; cat $$tmp/race.log; \
	wait $$fuzzbuild || { cat $$tmp/fuzz-build.log; exit 1; }; fuzzbuild=; \
	FUZZTIME=3s FUZZ_BIN_DIR=$$fuzzbin bash scripts/fuzz.sh

build: assets
	$(GO) build -tags $(TAGS) -o bin/dbmark -ldflags "$(LDFLAGS)" ./cmd/dbmark

# The chart library that HTML reports embed (web/package-lock.json), by npm ci.
assets:
	bash scripts/report-assets.sh

# The main job: a short suite on the embedded defaults that writes report.html.
quick: build
	bin/dbmark quick $(QUICK_ARGS)

# Regenerates the report screenshots in docs/ from fresh runs (needs chromium).
screenshots: assets
	$(GO) test -tags $(TAGS) ./internal/report/htmlreport -run 'TestReportInChromium|TestQueryBarsInChromium|TestSweepMetricPicker' -count=1 -timeout 10m -args -screenshots $(CURDIR)/docs

testenv-start:
	$(TESTENV) start

# kubectl and ansible-playbook, which the tests of deploy/'s recipes use.
deploy-tools:
	$(DEPLOYTOOLS) install

# The recipes in deploy/ and several hosts in network namespaces
# (docs/scale-out.md), alone: part of `make test` too.
deploy-check: testenv-start deploy-tools
	eval "$$($(TESTENV) env)"; \
	eval "$$($(DEPLOYTOOLS) env)"; \
	$(GO) test -tags $(TAGS) -count=1 -v -run 'TestKubernetesRecipe|TestAnsibleRecipe|TestHostsInNetworkNamespaces' ./cmd/dbmark/

testenv-stop:
	$(TESTENV) stop

# bench/run.sh gets the same connection settings as the tests.
bench: testenv-start
	eval "$$($(TESTENV) env)"; \
	bash bench/run.sh $(BENCH_ARGS)

# Every fuzz target for FUZZTIME each (scripts/fuzz.sh); crashers land in
# the package's testdata/fuzz and stay there as regression cases.
FUZZTIME ?= 10s
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh
