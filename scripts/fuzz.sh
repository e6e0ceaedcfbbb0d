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
./internal/result FuzzUnmarshal
./internal/result FuzzHistogramDecode
./internal/sweep FuzzValues
./internal/redact FuzzRules
./internal/redact FuzzPlantedSecret
./internal/secret FuzzScrub
"

ran=0
failed=()
while read -r pkg name; do
	[[ -z $pkg ]] && continue
	if (($# > 0)) && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	echo "fuzz: $pkg $name for $FUZZTIME"
	if $GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg"; then
		ran=$((ran + 1))
	else
		failed+=("$pkg $name")
	fi
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
