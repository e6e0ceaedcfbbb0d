#!/usr/bin/env bash
# Fetches the chart library HTML reports embed (Apache ECharts, pinned in
# web/package-lock.json) with npm ci and copies its dist file to where the
# dbmark binary embeds it from. Installs npm from Debian's packages when it
# is missing and we are root. Run by `make assets` (and so by build, quick
# and test).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DEST=internal/report/htmlreport/assets/echarts.min.js
SRC=web/node_modules/echarts/dist/echarts.min.js

if ! command -v npm >/dev/null 2>&1; then
	[[ $(id -u) == 0 ]] || { echo "report-assets: npm is missing; install Node.js and npm (Debian: apt-get install npm)" >&2; exit 1; }
	echo "report-assets: installing npm" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends npm >&2
fi

# npm ci only when the lock file changed since the last install.
if [[ ! -f $SRC || web/package-lock.json -nt web/node_modules/.package-lock.json ]]; then
	npm ci --prefix web --no-audit --no-fund --loglevel=error >&2
fi
if ! cmp -s "$SRC" "$DEST"; then
	cp "$SRC" "$DEST"
	echo "report-assets: $DEST from $(node -p 'require("./web/node_modules/echarts/package.json").version' 2>/dev/null || echo echarts)" >&2
fi
