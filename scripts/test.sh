#!/usr/bin/env bash
# Fresh Debian 12 machine -> the whole test suite: install what is missing,
# build, run every test tier, then the benchmarks once (informational).
# Exits non-zero when a tier fails. .ci/run calls this with LATPROF_WERROR=ON.
#   LP_TEST_JOBS=N   parallel ctest jobs (default: nproc)
#   LP_NO_BENCH=1    skip the benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
B=${LP_BUILD_DIR:-build}
JOBS=${LP_TEST_JOBS:-$(nproc)}

# One entry per tier: "NAME;BUILD_DIR;CMAKE_ARGS;CTEST_ARGS". A tier with a
# build dir of its own (say, -DLATPROF_SANITIZE=address,undefined with
# -L sanitize) is configured and built first. Add tiers here.
LP_TIERS=(
	"default;$B;;-LE bench|gpu"
)

fail=0
for t in "${LP_TIERS[@]}"; do
	IFS=';' read -r name dir cargs targs <<<"$t"
	if [ "$dir" != "$B" ]; then
		# shellcheck disable=SC2086
		cmake -S . -B "$dir" -DLATPROF_WERROR="${LATPROF_WERROR:-OFF}" $cargs
		cmake --build "$dir" -j "$(nproc)"
	fi
	echo "=== test tier: $name ==="
	# shellcheck disable=SC2086
	if ! ctest --test-dir "$dir" --output-on-failure -j "$JOBS" $targs; then
		echo "=== test tier $name FAILED ==="
		fail=1
	fi
done

if [ "${LP_NO_BENCH:-0}" != 1 ]; then
	echo "=== benchmarks (informational: figures, never a failure) ==="
	ctest --test-dir "$B" -L bench -V 2>&1 | sed -n 's/^[0-9]*: //p' |
		grep -vE '^(Test command|Working Directory|Environment variables|Test timeout|  [A-Z_]+=)' || true
fi
exit "$fail"
