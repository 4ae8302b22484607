#!/usr/bin/env python3
"""An onnxruntime server in Python: a small MLP (built with onnx.helper),
N server threads each taking requests from a shared counter and running the
model inside NVTX ranges (request > preprocess/infer/postprocess).

    py_ort_server.py [--requests N] [--threads N] [--hidden N] [--batch N]
                     [--intra-op N] [--no-spin]
"""
import argparse
import threading

import numpy as np
import nvtx
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper


def mlp(inp, hidden, layers):
    rng = np.random.default_rng(1)
    nodes, inits, prev, width = [], [], "x", inp
    for i in range(layers):
        w = rng.standard_normal((width, hidden)).astype(np.float32) * 0.05
        b = np.zeros(hidden, np.float32)
        inits += [helper.make_tensor(f"w{i}", TensorProto.FLOAT, w.shape, w.flatten()),
                  helper.make_tensor(f"b{i}", TensorProto.FLOAT, b.shape, b)]
        nodes += [helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"h{i}"])]
        prev, width = f"h{i}", hidden
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, inp])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [None, hidden])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--intra-op", type=int, default=0)
    ap.add_argument("--no-spin", action="store_true")
    a = ap.parse_args()
    so = ort.SessionOptions()
    if a.intra_op:
        so.intra_op_num_threads = a.intra_op
    if a.no_spin:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(mlp(256, a.hidden, 3), so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(2).standard_normal((a.batch, 256)).astype(np.float32)
    counter = iter(range(a.requests))
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                rid = next(counter, None)
            if rid is None:
                return
            with nvtx.annotate("request", domain="ort", payload=rid):
                with nvtx.annotate("preprocess", domain="ort"):
                    inp = (x + rid % 7).astype(np.float32)
                with nvtx.annotate("infer", domain="ort"):
                    out = sess.run(None, {"x": inp})[0]
                with nvtx.annotate("postprocess", domain="ort"):
                    out.argmax(axis=1)

    th = [threading.Thread(target=worker, name=f"server-{i}") for i in range(a.threads)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    del sess  # joins the intra-op pool: its threads end (and write counters) before exit
    print(f"py_ort_server: {a.requests} requests on {a.threads} threads")


if __name__ == "__main__":
    main()
