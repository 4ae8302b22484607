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

# Then an NVTX-annotated inference server whose requests go through decode,
# preprocess, infer and postprocess, 2% of them through a global lock in
# infer: the default report leads with findings, then the per-stage
# breakdown, tail attribution and locks.
DB2=${LP_DEMO_DB2:-infer_server.db}
if [ -x "$B/samples/infer_server" ]; then
	"$B/bin/latprof" run --force -o "$DB2" -- "$B/samples/infer_server" --threads 2 \
		--requests 300 --decode-us 500 --pre-us 400 --infer-us 1500 --post-us 200 \
		--locked-frac 0.02 --locked-stage infer --locked-us 5000
	"$B/bin/latprof" report "$DB2"
fi
