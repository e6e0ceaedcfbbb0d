#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 5s): the parsers of
# target URLs, pgbench scripts and expressions, result documents,
# histograms and sweep axes. A crash fails the run and leaves its input in
# the package's testdata/fuzz/<target>/: fix the bug, keep the file.
#   FUZZTIME=1m bash scripts/fuzz.sh            every target for a minute
#   bash scripts/fuzz.sh FuzzValues FuzzEval     only these
# FUZZ_BIN_DIR keeps the packages' fuzz binaries there and reuses those
# already built; with FUZZ_BUILD_ONLY=1 the script only builds them (make
# test builds them at low priority while the other tests run: the
# instrumented build of every dependency is the phase's longest part).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZTIME=${FUZZTIME:-5s}
GO=${GO:-go}
TAGS=sqlite_dbstat

# package and target, one pair a line; a package's targets together.
targets="
./internal/target FuzzRegistryOpen
./internal/target FuzzRedact
./internal/target/postgres FuzzOpen
./internal/target/mysql FuzzOpen
./internal/target/sqlite FuzzOpen
./internal/workload/tpcb/script FuzzParse
./internal/workload/tpcb/script FuzzEval
./internal/workload/query FuzzParse
./internal/result FuzzUnmarshal
./internal/result FuzzHistogramDecode
./internal/sweep FuzzValues
./internal/redact FuzzRules
./internal/redact FuzzPlantedSecret
./internal/secret FuzzScrub
"

ran=0
built_n=0
failed=()
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bindir=${FUZZ_BIN_DIR:-$work}
log=$work/log
# Where `go test -fuzz` keeps the inputs that found new coverage, per
# package: the binary run directly is told the same place.
fuzzcache=$($GO env GOCACHE)/fuzz

# Each package's test binary is built once, instrumented for fuzzing as
# `go test -fuzz` builds it (any -fuzz pattern instruments the binary; the
# target is chosen when it runs), and each of its targets runs from it in
# the package's directory, where testdata/fuzz is, instead of a build and
# a link per target.
built=""
bin=""
dir=""
importpath=""
while read -r pkg name; do
	[[ -z $pkg ]] && continue
	if (($# > 0)) && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	if [[ $pkg != "$built" ]]; then
		built=$pkg
		bin=$bindir/$(echo "${pkg#./}" | tr / _).test
		if [[ ! -x $bin ]]; then
			echo "fuzz: building $pkg's test binary"
			# Written under another name first: a build cut off halfway
			# leaves no binary to be taken for a whole one.
			if ! $GO test -tags "$TAGS" -c -fuzz . -o "$bin.part" "$pkg" || ! mv "$bin.part" "$bin"; then
				failed+=("$pkg (build)")
				bin=""
				continue
			fi
			built_n=$((built_n + 1))
		fi
		read -r dir importpath < <($GO list -tags "$TAGS" -f '{{.Dir}} {{.ImportPath}}' "$pkg")
	fi
	[[ -z $bin || ${FUZZ_BUILD_ONLY:-} == 1 ]] && continue
	echo "fuzz: $pkg $name for $FUZZTIME"
	# Go's fuzzing engine can end a run with "context deadline exceeded"
	# when the time runs out while a worker is still minimizing an input;
	# no input failed and none is written, so that run is tried once more.
	# A failing input is always reported ("Failing input written to").
	for try in 1 2; do
		if (cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$FUZZTIME" \
			-test.fuzzcachedir "$fuzzcache/$importpath" -test.paniconexit0 </dev/null) 2>&1 | tee "$log"; then
			ran=$((ran + 1))
			break
		fi
		if ((try == 1)) && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written to' "$log"; then
			echo "fuzz: $pkg $name ended at its deadline without a failing input; once more"
			continue
		fi
		failed+=("$pkg $name")
		break
	done
done <<<"$targets"

if ((${#failed[@]} > 0)); then
	printf 'fuzz: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
if [[ ${FUZZ_BUILD_ONLY:-} == 1 ]]; then
	echo "fuzz: built $built_n test binaries in $bindir"
	exit 0
fi
if ((ran == 0)); then
	echo "fuzz: no target matched: $*" >&2
	exit 1
fi
echo "fuzz: $ran targets passed"
