#!/usr/bin/env bash
# GPU capture check (issue 4) for a machine with an NVIDIA GPU and driver.
# Builds everything, records samples/cuda in both modes with --cuda=on and
# checks: kernels, memcpy and sync records are present; no GPU operation
# starts before its launching API call (one clock); pageable and pinned
# copies are told apart; --fixed shows less sync wait and a lower request
# p50. Prints one summary line; exit 0 = pass. Copies the two databases to
# $OUT when set (commit them under samples/ as reference data).
#
# usage: tests/gpu/run.sh [BUILD_DIR]   (default: build-gpu in the source tree)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build-gpu}
requests=${LP_GPU_REQUESTS:-300}

command -v nvidia-smi >/dev/null && nvidia-smi -L || echo "note: nvidia-smi not found"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.cmake.log" 2>&1 ||
	{ tail -20 "$build.cmake.log"; echo "gpu: FAIL configure"; exit 1; }
make -C "$build" -j"$(nproc)" latprof latprof_preload latprof_cupti cuda_pipeline \
	$(test -f "$src/collector/nvtx/CMakeLists.txt" && echo latprof_nvtx) >"$build.make.log" 2>&1 ||
	{ tail -30 "$build.make.log"; echo "gpu: FAIL build"; exit 1; }

lp=$build/bin/latprof
app=$build/samples/cuda_pipeline
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mode in slow fixed; do
	args=(--requests "$requests")
	[ "$mode" = fixed ] && args+=(--fixed)
	t0=$(date +%s.%N)
	"$app" "${args[@]}" || { echo "gpu: FAIL the sample itself fails ($mode)"; exit 1; }
	t1=$(date +%s.%N)
	"$lp" run --cuda=on -f -o "$work/cuda_$mode.db" -- "$app" "${args[@]}" \
		2>"$work/$mode.err" || { cat "$work/$mode.err"; echo "gpu: FAIL latprof run ($mode)"; exit 1; }
	t2=$(date +%s.%N)
	echo "$mode: app alone $(echo "$t1 - $t0" | bc) s, under latprof $(echo "$t2 - $t1" | bc) s"
	"$lp" report "$work/cuda_$mode.db" --kernels | head -12
	"$lp" report "$work/cuda_$mode.db" --memcpy | head -8
	"$lp" report "$work/cuda_$mode.db" --sync | head -8
done

rc=0
python3 - "$work/cuda_slow.db" "$work/cuda_fixed.db" <<'PY' || rc=$?
import sqlite3, sys

fails = []
def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        fails.append(msg)

def q1(c, sql):
    return c.execute(sql).fetchone()[0]

def p50(c, name):
    v = sorted(r[0] for r in c.execute(
        "SELECT end_ns - start_ns FROM ranges_named WHERE name = ?", (name,)))
    return v[len(v) // 2] if v else None

# Host blocked: sync API calls and synchronous copies (same rule as report --sync).
SYNC_WAIT = """SELECT coalesce(sum(a.end_ns - a.start_ns), 0) FROM cuda_api a
  WHERE a.domain = 'runtime' AND (
    EXISTS (SELECT 1 FROM syncs y WHERE y.process_id = a.process_id AND y.correlation_id = a.correlation_id)
    OR EXISTS (SELECT 1 FROM memcpys m WHERE m.process_id = a.process_id AND m.async = 0
               AND a.correlation_id = coalesce(m.runtime_correlation_id, m.correlation_id)))"""

res = {}
for mode, path in (("slow", sys.argv[1]), ("fixed", sys.argv[2])):
    c = sqlite3.connect(path)
    check(q1(c, "SELECT value FROM meta WHERE key = 'cuda.captured'") == 1, f"{mode}: GPU data captured")
    k, m, s = (q1(c, f"SELECT count(*) FROM {t}") for t in ("kernels", "memcpys", "syncs"))
    check(k > 0 and m > 0 and s > 0, f"{mode}: kernels {k}, memcpys {m}, syncs {s} present")
    check(q1(c, "SELECT count(*) FROM gpu_devices") >= 1, f"{mode}: device row")
    early = q1(c, "SELECT count(*) FROM gpu_launches WHERE start_ns < api_start_ns")
    linked = q1(c, "SELECT count(*) FROM gpu_launches")
    check(linked > 0 and early == 0,
          f"{mode}: {linked} GPU ops linked to their API call, none starts before it ({early})")
    # A request's GPU work starts after the request began (NVTX and CUPTI share the clock).
    before = q1(c, """SELECT count(*) FROM gpu_launches g JOIN ranges r ON r.start_thread_id = g.thread_id
        AND r.depth = 0 AND g.api_start_ns >= r.start_ns AND g.api_start_ns < r.end_ns
        WHERE g.start_ns < r.start_ns""")
    check(before == 0, f"{mode}: no GPU work starts before its request range ({before})")
    check(q1(c, "SELECT coalesce(sum(dropped), 0) FROM cuda_capture") == 0, f"{mode}: no dropped records")
    res[mode] = dict(
        sync=q1(c, SYNC_WAIT), p50=p50(c, "request"), kernels=k,
        pageable=q1(c, "SELECT count(*) FROM memcpys WHERE 'pageable' IN (src_kind, dst_kind)"),
        pinned=q1(c, "SELECT count(*) FROM memcpys WHERE 'pinned' IN (src_kind, dst_kind) AND async = 1"),
        wall=q1(c, "SELECT sum(end_ns - start_ns) FROM processes"))
    c.close()

s, f = res["slow"], res["fixed"]
check(s["pageable"] > 0 and s["pinned"] == 0, f"slow: pageable copies {s['pageable']}, no pinned async")
check(f["pinned"] > 0 and f["pageable"] == 0, f"fixed: pinned async copies {f['pinned']}, no pageable")
check(f["sync"] < s["sync"], f"fixed waits less in sync: {f['sync']/1e6:.1f} ms vs {s['sync']/1e6:.1f} ms")
check(s["p50"] and f["p50"] and f["p50"] < s["p50"],
      f"fixed request p50 lower: {(f['p50'] or 0)/1e3:.0f} us vs {(s['p50'] or 0)/1e3:.0f} us")
summary = (f"gpu: {'PASS' if not fails else 'FAIL'} slow p50 {(s['p50'] or 0)/1e3:.0f} us, sync wait "
           f"{100*s['sync']/max(s['wall'],1):.0f}% of wall; fixed p50 {(f['p50'] or 0)/1e3:.0f} us, sync "
           f"wait {100*f['sync']/max(f['wall'],1):.0f}%; kernels {s['kernels']}/{f['kernels']}"
           + (f"; failed: {'; '.join(fails)}" if fails else ""))
print(summary)
sys.exit(1 if fails else 0)
PY
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	cp "$work/cuda_slow.db" "$work/cuda_fixed.db" "$OUT/"
fi
exit $rc
