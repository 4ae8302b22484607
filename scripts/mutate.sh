#!/usr/bin/env bash
# Sampled mutation testing of import and analysis (import/, analysis/): how many
# realistic one-line bugs do the tests catch? Not part of any CI tier (an
# hour or more on 2 cores). Run it before closing work that touches import/ or analysis/,
# and quote the score and the seed:
#   nice -n 10 scripts/mutate.sh -n 100 --seed 39
# Options (scripts/mutate.py --help): -n COUNT, --seed N, --files analysis/x.c ...,
# --timeout S (per mutant, build + tests), --work DIR (default
# /tmp/latprof-mutate: a copy of this tree and its build, kept between runs so
# the next run rebuilds incrementally), --list (the sample only),
# --only FILE:LINE:OP:ORIG:NEW (one mutant, e.g. to check the test that kills it),
# --results FILE (a TSV line per mutant).
# The checkout itself is never modified: mutants are written into the copy and
# the copy's file is restored after each one (and on Ctrl-C / SIGTERM).
# tests/mutation-map.txt says which tests cover which file; docs/mutation.md
# holds the last score and why each survivor is equivalent or killed.
set -euo pipefail
exec python3 "$(dirname "$0")/mutate.py" "$@"
