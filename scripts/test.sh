#!/usr/bin/env bash
# Fresh Debian 12 machine -> the whole test suite: install what is missing,
# build, run every test tier, then the benchmarks once: those that gate
# (tests/lib/lpgate.py: a figure missing its target by more than its noise
# margin) fail the run like a tier.
# Exits non-zero when a tier fails. .ci/run calls this with LATPROF_WERROR=ON.
#   LP_TEST_JOBS=N      parallel ctest jobs (default: nproc)
#   LP_NO_BENCH=1       skip the benchmarks
#   LP_TIERS_ONLY="a b" run only these tiers (names below; default: all)
#   LP_FUZZ_SECONDS=N   time per fuzz target (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh # installs packages, configures and builds the default tier's dir
B=${LP_BUILD_DIR:-build}
JOBS=${LP_TEST_JOBS:-$(nproc)}

# One entry per tier: "NAME;BUILD_DIR;CMAKE_ARGS;CTEST_ARGS[;TARGETS]". A tier
# with a build dir of its own is configured and built first (only TARGETS
# when given: the tier's tests need no more). Add tiers here.
#  - default: unit, e2e, reliability... and the `trials` label (tests/trials:
#    latprof diff's A/A false alarms and power on real recordings, counted
#    and asserted; 2-3 minutes, run serially).
#  - default: every test but benchmarks, GPU ones and the rebuild tier's,
#    tests/real (label real: pigz, memcached, PostgreSQL, Python servers)
#    included.
#  - rebuild: tests that configure and build another tree of the project
#    (label rebuild: counters_no_libpfm builds without libpfm4). A build on
#    every core beside the default tier's timing tests would stretch them,
#    so they run after it, alone.
#  - asan: ASan+UBSan (UBSan fatal) over every C target and the in-app
#    libraries, the whole unit+e2e suite but the trials (docs/reliability.md). Tests that
#    cannot run instrumented skip (77) or leave out timing checks, and say so.
#    tests/real stays in the default tier: its verdicts depend on timing.
#  - tsan: the recording core and importer under 8 threads, linked directly,
#    and the Kineto reader's two threads (import/captures/lp_json_pipe.c)
#    (a TSan runtime cannot be preloaded into an uninstrumented app).
#  - fuzz: each libFuzzer target for LP_FUZZ_SECONDS; crashes are kept in
#    build-fuzz/tests/fuzz/ (add them to tests/fuzz/<target>/ as regressions).
LP_TIERS=(
	"default;$B;;-LE bench|gpu|rebuild|manual"
	"rebuild;$B;;-L rebuild"
	"asan;build-asan;-DLATPROF_SANITIZE=address,undefined;-LE bench|gpu|fuzz|trials|real|rebuild|manual"
	"tsan;build-tsan;-DLATPROF_SANITIZE=thread;-L tsan;rel_core_stress json_pipe_unit"
	"fuzz;build-fuzz;-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DLATPROF_FUZZ=ON;-L fuzz;fuzz_import fuzz_expect fuzz_cupti fuzz_kineto"
)

fail=0
for t in "${LP_TIERS[@]}"; do
	IFS=';' read -r name dir cargs targs targets <<<"$t"
	if [ -n "${LP_TIERS_ONLY:-}" ] && [[ " $LP_TIERS_ONLY " != *" $name "* ]]; then
		continue
	fi
	t0=$SECONDS
	if [ "$dir" != "$B" ]; then
		# shellcheck disable=SC2086
		if ! { cmake -S . -B "$dir" -DLATPROF_WERROR="${LATPROF_WERROR:-OFF}" $cargs &&
			cmake --build "$dir" -j "$(nproc)" ${targets:+--target $targets}; }; then
			echo "=== test tier $name FAILED (build) ==="
			fail=1
			continue
		fi
	fi
	echo "=== test tier: $name (built in $((SECONDS - t0)) s) ==="
	# shellcheck disable=SC2086
	if ! ctest --test-dir "$dir" --output-on-failure -j "$JOBS" $targs; then
		echo "=== test tier $name FAILED ==="
		fail=1
	fi
	echo "=== test tier $name: $((SECONDS - t0)) s ==="
done

if [ "${LP_NO_BENCH:-0}" != 1 ]; then
	# Serially: a benchmark's figures are ratios measured side by side, but
	# two benchmarks at once on two CPUs would still skew each other.
	echo "=== benchmarks (gated: every figure printed with its target) ==="
	# ctest exits 8 when a benchmark fails: kept, not fatal under set -e,
	# so the figures and the failing gate are printed below.
	brc=0
	ctest --test-dir "$B" -L bench -V >"$B/bench.log" 2>&1 || brc=$?
	sed -n 's/^[0-9]*: //p' "$B/bench.log" |
		grep -vE '^(Test command|Working Directory|Environment variables|Test timeout|  [A-Z_]+=)' || true
	if [ "$brc" != 0 ]; then
		grep -E '^[0-9]+: gate FAIL|Failed|\*\*\*' "$B/bench.log" || true
		echo "=== benchmarks FAILED (a gated figure missed its target; $B/bench.log) ==="
		fail=1
	fi
fi
exit "$fail"
