"""Benchmark gates (label bench). Every figure is printed with its target;
a figure that misses its target by more than its stated noise margin fails
the benchmark (exit 1 from finish()). Gate on ratios measured side by side,
best of N rounds, never on absolute times: the machine is shared.

  LP_BENCH_MARGIN_SCALE=F   multiply every margin by F (a noisier machine)
"""
import os
import sys

SCALE = float(os.environ.get("LP_BENCH_MARGIN_SCALE", "1"))
_results = []


def gate(what, value, target, margin, unit="x", most=True):
    """value must be <= target (most=True) or >= target, within margin (a
    fraction of the target). Prints the line either way; returns whether it
    passed."""
    m = margin * SCALE
    limit = target * (1 + m) if most else target / (1 + m)
    ok = value <= limit if most else value >= limit
    rel, edge = ("<=", "above") if most else (">=", "below")
    print(f"gate {'ok  ' if ok else 'FAIL'} {what}: {value:.3f}{unit} (target {rel} {target:g}{unit}; "
          f"noise margin {m * 100:.0f}%: fails {edge} {limit:.3f}{unit})", flush=True)
    _results.append((what, ok))
    return ok


def finish():
    bad = [w for w, ok in _results if not ok]
    print(f"gates: {len(_results) - len(bad)} of {len(_results)} met"
          + (f"; missed: {', '.join(bad)}" if bad else ""), flush=True)
    sys.exit(1 if bad else 0)
