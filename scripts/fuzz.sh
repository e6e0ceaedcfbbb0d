#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 5s): the parsers of
# target URLs, pgbench scripts and expressions, result documents,
# histograms and sweep axes. A crash fails the run and leaves its input in
# the package's testdata/fuzz/<target>/: fix the bug, keep the file.
#   FUZZTIME=1m bash scripts/fuzz.sh            every target for a minute
#   bash scripts/fuzz.sh FuzzValues FuzzEval     only these
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZTIME=${FUZZTIME:-5s}
GO=${GO:-go}

# package and target, one pair a line.
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
failed=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
while read -r pkg name; do
	[[ -z $pkg ]] && continue
	if (($# > 0)) && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	echo "fuzz: $pkg $name for $FUZZTIME"
	# Go's fuzzing engine can end a run with "context deadline exceeded"
	# when the time runs out while a worker is still minimizing an input;
	# no input failed and none is written, so that run is tried once more.
	# A failing input is always reported ("Failing input written to").
	for try in 1 2; do
		if $GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$log"; then
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
if ((ran == 0)); then
	echo "fuzz: no target matched: $*" >&2
	exit 1
fi
echo "fuzz: $ran targets passed"
