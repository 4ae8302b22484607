#!/usr/bin/env python3
"""onnxruntime under a thread pool: a ThreadPoolExecutor's workers each run
infer(), which calls InferenceSession.run (a C extension) on a session with
an intra-op pool of its own that does not spin, so a caller that waits for
the pool blocks inside onnxruntime. The program writes where infer() calls
into the extension (file, line, from its own frame) to --out as JSON.

    py_pool_ext.py --out FILE [--requests N] [--workers N]
"""
import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnxruntime as ort

from py_ort_server import mlp

SITE = {}


def infer(sess, x):
    SITE.setdefault("line", sys._getframe().f_lineno + 1)
    return sess.run(None, {"x": x})[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--workers", type=int, default=4)
    a = ap.parse_args()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(mlp(256, 512, 3), so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(2).standard_normal((32, 256)).astype(np.float32)
    with ThreadPoolExecutor(max_workers=a.workers) as pool:
        outs = list(pool.map(lambda r: infer(sess, x + r % 7), range(a.requests)))
    del sess
    with open(a.out, "w") as f:
        json.dump({"file": __file__, "line": SITE["line"], "function": "infer",
                   "requests": len(outs)}, f)


if __name__ == "__main__":
    main()
