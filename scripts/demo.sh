#!/usr/bin/env bash
# Fresh Debian 12 machine -> latprof's lock report of samples/lock_server:
# install what is missing, build, record the sample, print the report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
B=${LP_BUILD_DIR:-build}
DB=${LP_DEMO_DB:-lock_server.db}
"$B/bin/latprof" run --force -o "$DB" -- "$B/samples/lock_server" --threads 8 --requests 2000 \
	--work-us 100 --locked-us 100
"$B/bin/latprof" report "$DB" --locks
