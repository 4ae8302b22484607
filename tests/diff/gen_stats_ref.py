#!/usr/bin/env python3
# Not run by ctest: regenerates the reference values in test_stats.c (needs scipy).
# Offline reference generator (scipy 1.17.1); output pasted into test_stats.c.
import numpy as np
from scipy.stats import mannwhitneyu
rng = np.random.default_rng(6)
cases = []
def add(name, x, y, method):
    x = [float(v) for v in x]; y = [float(v) for v in y]
    r = mannwhitneyu(x, y, alternative='two-sided', method=method, use_continuity=True)
    cases.append((name, x, y, method, float(r.statistic), float(r.pvalue)))
add("exact_small", [1.2,3.4,5.6,2.2,8.1], [4.5,6.7,9.0,7.3,10.1,11.2], 'exact')
add("exact_disjoint", [1,2,3], [4,5,6,7], 'exact')
add("exact_20x20", np.round(rng.normal(10,2,20),4), np.round(rng.normal(11,2,20),4), 'exact')
add("exact_3x30", np.round(rng.exponential(5,3),4), np.round(rng.exponential(5,30),4), 'exact')
add("exact_25x25", np.round(rng.lognormal(1,0.3,25),4), np.round(rng.lognormal(1.1,0.3,25),4), 'exact')
add("asym_ties_small", [1,2,2,3,3,3,4], [2,3,4,4,5,5], 'asymptotic')
add("asym_ties_large", np.round(rng.normal(50,5,100)), np.round(rng.normal(51,5,120)), 'asymptotic')
add("asym_noties_30x31", np.round(rng.normal(0,1,30),5), np.round(rng.normal(0.5,1,31),5), 'asymptotic')
add("asym_forced_small", [1.5,2.5,3.5,4.5], [2.75,5.25,6.25,7.25,8.25], 'asymptotic')
for name,x,y,m,u,p in cases:
    fx = ", ".join(repr(v) for v in x); fy = ", ".join(repr(v) for v in y)
    print(f'\t{{"{name}", {len(x)}, {len(y)}, (const double[]){{{fx}}},\n\t (const double[]){{{fy}}},\n\t LP_MWU_{"EXACT" if m=="exact" else "ASYMPTOTIC"}, {u!r}, {p!r}}},')
for name,x,y,m,u,p in cases:
    if m == 'exact': assert len(set(x+y)) == len(x)+len(y), name
# Holm reference, by the textbook step-down definition (independent of lp_holm's code).
ps = [0.01, 0.04, 0.03, 0.005, 0.5, 0.04]
order = sorted(range(len(ps)), key=lambda i: (ps[i], i)); m = len(ps); adj=[0]*m; run=0
for j,i in enumerate(order):
    run = max(run, min(1, (m-j)*ps[i])); adj[i]=run
print("holm", ps, adj)
import numpy as np
v = [5.0, 1.0, 3.0, 2.0, 4.0, 10.0]
print("quantiles", [repr(float(np.percentile(v, q))) for q in (0, 50, 90, 99, 99.9, 100)])
