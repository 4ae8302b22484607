#!/usr/bin/env bash
# GPU capture check for a machine with an NVIDIA GPU and driver.
# Records samples/cuda/cuda_pipeline in both modes with --cuda=on and runs
# tests/gpu/check.py on them: kernels, memcpy and sync records present; no
# GPU operation starts before its launching API call or its request range
# (one clock); pageable and pinned copies told apart; --fixed waits less in
# sync and has a lower request p50. Then the overhead benchmark: a loop of
# ~1 us kernel launches, timed inside the app, alone and under latprof (and
# under nsys when it is found), medians of 3 runs each. Last, when PyTorch
# with CUDA is there, samples/cuda/torch_infer.py (unmodified PyTorch), alone
# and with the PyTorch profiler running over part of it.
# Second sources (tests/gpu/truth.py on samples/cuda/cuda_truth): exact
# kernel/copy/sync counts per request, kernel and copy time against the
# program's own cudaEvent timings (within 10%), no kernel ending after the
# sync that waited for it, a CUDA graph case, and the kill paths (SIGTERM,
# _exit) losing no kernel. Every step runs under `timeout` so the whole
# call stays under 8 minutes; nsys runs only when it is on PATH.
#
# Ends with one summary line per part ("gpu: PASS ..." / "gpu-bench: ...");
# exit 0 = the checks pass. With $OUT set (the device tool), the two
# databases and the whole log are copied there: commit the databases as
# samples/cuda/ref/cuda_{slow,fixed}.db.
#
# usage: tests/gpu/run.sh [BUILD_DIR]          builds here (needs the -dev packages)
#        LP_GPU_PREBUILT=.gpu tests/gpu/run.sh uses tests/gpu/bundle.sh's folder
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
requests=${LP_GPU_REQUESTS:-300}
launches=${LP_GPU_LAUNCHES:-200000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/gpu.log
exec > >(tee "$log") 2>&1

save() { # the databases and the log come back through $OUT
	[ -n "${OUT:-}" ] || return 0
	mkdir -p "$OUT"
	cp "$work"/cuda_*.db "$OUT/" 2>/dev/null || true # slow, fixed, torch
	sleep 0.2
	cp "$log" "$OUT/gpu.log"
}

if [ -n "${LP_GPU_PREBUILT:-}" ]; then
	root=$(cd "$LP_GPU_PREBUILT" && pwd)
	export LD_LIBRARY_PATH=$root/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
	root=${1:-$src/build-gpu}
	cmake -S "$src" -B "$root" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/cmake.log" 2>&1 ||
		{ tail -20 "$work/cmake.log"; echo "gpu: FAIL configure"; save; exit 1; }
	make -C "$root" -j"$(nproc)" latprof latprof_preload latprof_nvtx latprof_cupti \
		cuda_pipeline cuda_truth >"$work/make.log" 2>&1 ||
		{ tail -30 "$work/make.log"; echo "gpu: FAIL build"; save; exit 1; }
fi
lp=$root/bin/latprof
app=$root/samples/cuda_pipeline
truth=$root/samples/cuda_truth
export LATPROF=$lp
py() { env -u LD_LIBRARY_PATH python3 "$@"; } # the system's sqlite3, not the bundle's

command -v nvidia-smi >/dev/null && nvidia-smi -L || echo "note: nvidia-smi not found"
"$lp" --version || { echo "gpu: FAIL latprof does not start here"; save; exit 1; }
now() { date +%s.%N; }
secs() { py -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$@"; }

for mode in slow fixed; do
	args=(--requests "$requests")
	[ "$mode" = fixed ] && args+=(--fixed)
	t0=$(now)
	timeout 60 "$app" "${args[@]}" || { echo "gpu: FAIL the sample itself fails ($mode)"; save; exit 1; }
	t1=$(now)
	timeout 90 "$lp" run --cuda=on -f -o "$work/cuda_$mode.db" -- "$app" "${args[@]}" ||
		{ echo "gpu: FAIL latprof run --cuda=on ($mode)"; save; exit 1; }
	t2=$(now)
	echo "$mode: app alone $(secs "$t0" "$t1") s, under latprof $(secs "$t1" "$t2") s"
	for r in --kernels --memcpy --sync --cuda-api; do
		"$lp" report "$work/cuda_$mode.db" "$r" | head -14
	done
	"$lp" report "$work/cuda_$mode.db" --breakdown | head -16
	"$lp" report "$work/cuda_$mode.db" --bottlenecks | head -30
done
rc=0
py "$src/tests/gpu/check.py" "$work/cuda_slow.db" "$work/cuda_fixed.db" || rc=$?
save

# Second sources: the program's own counts and cudaEvent timings.
for case in "requests 200" "graph 100" "kill 1000" "exit 1000"; do
	read -r mode n <<<"$case"
	st=0
	timeout 60 "$lp" run --cuda=on -f -o "$work/cuda_truth_$mode.db" -- "$truth" "$mode" "$n" \
		>"$work/truth_$mode.out" 2>"$work/truth_$mode.err" || st=$?
	want=0
	[ "$mode" = kill ] && want=$((128 + 15))
	if [ "$st" -ne "$want" ]; then
		tail -5 "$work/truth_$mode.err"
		echo "gpu-truth: FAIL latprof run on cuda_truth $mode exited $st, expected $want"
		rc=1
		continue
	fi
	py "$src/tests/gpu/truth.py" "$work/cuda_truth_$mode.db" "$work/truth_$mode.out" || rc=1
done
save

# Overhead: the in-app time of the launch loop (CUDA and CUPTI start-up are
# not in it). Target: at most 2x the app alone, and no more than nsys.
loop_us() { "$@" --launch-loop "$launches" | sed -n 's/^launch loop: [0-9]* launches in \([0-9.]*\) us.*/\1/p'; }
median() { py -c "import sys, statistics; print(statistics.median(map(float, sys.argv[1:])))" "$@"; }
ratio() { py -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.{sys.argv[3]}f}')" "$@"; }
# nsys only when it is on PATH (its collection alone can take minutes).
nsys=$(command -v nsys || true)
alone=() under=() nsys_t=()
for i in 1 2 3; do # interleaved, so drift hits both alike
	t=$(loop_us timeout 60 "$app" || true) && [ -n "$t" ] && alone+=("$t")
	t=$(loop_us timeout 90 "$lp" run -f -o "$work/loop.db" -- "$app" || true) && [ -n "$t" ] &&
		under+=("$t")
	if [ -n "$nsys" ]; then
		t=$(loop_us timeout 90 "$nsys" profile -t cuda,nvtx -f true -o "$work/loop" "$app" || true)
		[ -n "$t" ] && nsys_t+=("$t")
	fi
done
echo "launch loop (us): alone ${alone[*]:-failed}; latprof ${under[*]:-failed}; nsys ${nsys_t[*]:-not run (${nsys:-not found})}"
if [ ${#alone[@]} -eq 0 ] || [ ${#under[@]} -eq 0 ]; then
	echo "gpu-bench: FAIL the launch loop did not run"
	save
	exit 1
fi
ma=$(median "${alone[@]}") ml=$(median "${under[@]}")
line="gpu-bench: $launches launches of a ~1 us kernel: alone $(ratio "$ma" "$launches" 3) us/launch,"
line+=" latprof $(ratio "$ml" "$launches" 3) us/launch, ratio $(ratio "$ml" "$ma" 2)x (target <= 2x)"
[ ${#nsys_t[@]} -gt 0 ] && line+=", nsys ratio $(ratio "$(median "${nsys_t[@]}")" "$ma" 2)x"
"$lp" report "$work/loop.db" --kernels | head -6
echo "$line"

# Unmodified PyTorch (when the machine has it): NVTX through torch.cuda.nvtx,
# kernels from cuBLAS and PyTorch's own, linked to the request that launched them.
if py -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
	if timeout 120 "$lp" run --cuda=on -f -o "$work/cuda_torch.db" -- python3 \
		"$src/samples/cuda/torch_infer.py" --requests 100; then
		"$lp" report "$work/cuda_torch.db" --breakdown | head -12
		"$lp" report "$work/cuda_torch.db" --kernels | head -8
		py - "$work/cuda_torch.db" <<'PY' || rc=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda s: c.execute(s).fetchone()[0]
req = q("SELECT count(*) FROM ranges_named WHERE name = 'request'")
k = q("SELECT count(*) FROM kernels")
inside = q("""SELECT count(*) FROM gpu_launches g JOIN ranges_named r ON r.name = 'request'
  AND r.start_thread_id = g.thread_id AND g.api_start_ns >= r.start_ns AND g.api_start_ns < r.end_ns""")
early = q("SELECT count(*) FROM gpu_launches WHERE start_ns < api_start_ns")
ok = req == 100 and k > 0 and inside > 0 and early == 0
print(f"gpu-torch: {'PASS' if ok else 'FAIL'} {req} requests, {k} kernels, {inside} GPU ops "
      f"launched inside requests, {early} before their API call")
sys.exit(0 if ok else 1)
PY
	else
		echo "gpu-torch: FAIL latprof run --cuda=on on samples/cuda/torch_infer.py"
		rc=1
	fi
	# With the PyTorch profiler over the middle third: the profiler still
	# sees its kernels (latprof left it CUPTI's subscriber), latprof keeps
	# the kernels before it, and if the profiler took the activity buffers
	# the status says records are missing, never "0 dropped".
	if timeout 120 "$lp" run --cuda=on -f -o "$work/cuda_torch_prof.db" -- python3 \
		"$src/samples/cuda/torch_infer.py" --requests 90 --profile >"$work/torch_prof.out"; then
		cat "$work/torch_prof.out"
		py - "$work/cuda_torch_prof.db" "$work/torch_prof.out" <<'PY' || rc=1
import re, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda s: (c.execute(s).fetchone() or [None])[0]
m = re.search(r"profiler saw (\d+) CUDA kernels", open(sys.argv[2]).read())
prof = int(m.group(1)) if m else -1
k = q("SELECT count(*) FROM kernels")
conf = q("SELECT value FROM meta WHERE key = 'cuda.conflicts'") or ""
status = q("SELECT value FROM meta WHERE key = 'cuda.status'") or ""
honest = "callbacks" not in conf or "unknown" in status
ok = prof > 0 and k > 0 and honest
print(f"gpu-torch-profiler: {'PASS' if ok else 'FAIL'} the profiler saw {prof} CUDA kernels, "
      f"latprof {k}; conflicts '{conf}'; status: {status}")
sys.exit(0 if ok else 1)
PY
	else
		echo "gpu-torch-profiler: FAIL latprof run on torch_infer.py --profile"
		rc=1
	fi
else
	echo "gpu-torch: not run (no PyTorch with CUDA here)"
fi
save
exit $rc
