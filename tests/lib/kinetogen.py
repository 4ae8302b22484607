"""PyTorch profiler (Kineto) traces written from the documented Chrome trace
event format Kineto uses, current (2023+), 2021 and TensorBoard-plugin era
(PyTorch 1.8, schemaVersion 1: "v1") flavours, with known contents; also a
streaming writer of arbitrarily large traces (benchmarks)."""
import gzip
import json

PID, TID = 3100, 3100
CATS = {
    "current": dict(kernel="kernel", memcpy="gpu_memcpy", memset="gpu_memset", runtime="cuda_runtime",
                    op="cpu_op", ext="External id"),
    "2021": dict(kernel="Kernel", memcpy="Memcpy", memset="Memset", runtime="Runtime", op="Operator",
                 ext="external id"),
    # libkineto's output_json.cpp of PyTorch 1.8: thread ids as text (host
    # "3100", GPU "stream 7"), GPU events under pid 0 with device/stream and
    # "correlation"/"external id" args, operators "External id", steps as
    # Operator events, launch flows "async"/"launch", integer microseconds
    # where the clock had no fraction
    "v1": dict(kernel="Kernel", memcpy="Memcpy", memset="Memset", runtime="Runtime", op="Operator",
               ext="External id", step="Operator", py="Python function"),
}


def us(ns):
    """ns -> the microsecond text Kineto writes (three decimals)."""
    return f"{ns // 1000}.{ns % 1000:03d}"


class Trace:
    def __init__(self, flavour="current", base_us=1700000000000000, unit="ms"):
        self.c = CATS[flavour]
        self.flavour = flavour
        self.base = base_us * 1000
        self.unit = unit
        self.ev = []
        self.corr = 100
        self.expect = dict(kernels=[], memcpys=0, memsets=0, syncs=[], runtime=0, steps=0, ops=0,
                           unattributed=0)

    def x(self, cat, name, start, dur, pid=PID, tid=TID, args=None):
        # ts/dur as raw JSON numbers with three decimals (json.dumps would
        # print floats with binary noise)
        self.ev.append(("X", cat, name, pid, tid, self.base + start, dur, args or {}))

    def step(self, n, start, dur):
        self.x(self.c.get("step", "user_annotation"), f"ProfilerStep#{n}", start, dur,
               args={self.c["ext"]: n})
        self.expect["steps"] += 1

    def py(self, name, start, dur):
        """A Python frame (python_function; "Python function" in v1)."""
        self.x(self.c.get("py", "python_function"), name, start, dur, args={"Python id": 1})
        self.expect["py"] = self.expect.get("py", 0) + 1

    def op(self, name, start, dur):
        self.x(self.c["op"], name, start, dur, args={self.c["ext"]: 7})
        self.expect["ops"] += 1

    def launch(self, name, start, kstart, kdur, with_corr=True, kind="kernel", nbytes=0,
               api="cudaLaunchKernel"):
        self.corr += 1
        c = self.corr
        rargs = {"cbid": 211, "correlation": c}
        if self.flavour == "v1":
            rargs.update({"external id": 7, "external ts": (self.base + start) // 1000})
        self.x(self.c["runtime"], api, start, 3000, args=rargs)
        self.expect["runtime"] += 1
        gargs = {"device": 0, "context": 1, "stream": 7}
        if self.flavour == "v1":
            # some 1.8 events name their device and stream only by pid and tid
            gargs = {"queued": 0, "device": 0, "context": 1, "stream": 7, "external id": 7}
            if c % 3 == 0:
                del gargs["device"], gargs["stream"]
        if with_corr:
            gargs["correlation"] = c
        if kind == "kernel":
            gargs.update({"grid": [64, 2, 1], "block": [256, 1, 1], "registers per thread": 40,
                          "shared memory": 1024})
            self.x(self.c["kernel"], name, kstart, kdur, pid=0, tid=7, args=gargs)
            self.expect["kernels"].append((name, kdur))
        elif kind == "memcpy":
            gargs["bytes"] = nbytes
            self.x(self.c["memcpy"], "Memcpy HtoD (Pinned -> Device)", kstart, kdur, 0, 7, gargs)
            self.expect["memcpys"] += 1
        elif kind == "memset":
            gargs["bytes"] = nbytes
            self.x(self.c["memset"], "Memset (Device)", kstart, kdur, 0, 7, gargs)
            self.expect["memsets"] += 1
        elif kind == "sync":
            gargs["cuda_sync_kind"] = name
            self.x("cuda_sync", name, kstart, kdur, 0, 7, gargs)
            self.expect["syncs"].append(name)
        self.ev.append(("s", "ac2g", c, PID, TID, self.base + start, 0, {}))
        self.ev.append(("f", "ac2g", c, 0, 7, self.base + kstart, 0, {}))

    def orphan(self, name, kstart, kdur, with_corr=True):
        """A kernel whose launching call is not in the trace: a correlation id
        no call has (or, in flows-only traces, no id and no flow)."""
        self.corr += 1
        gargs = {"device": 0, "context": 1, "stream": 7, "grid": [1, 1, 1], "block": [32, 1, 1]}
        if with_corr:
            gargs["correlation"] = self.corr
        self.x(self.c["kernel"], name, kstart, kdur, pid=0, tid=7, args=gargs)
        self.expect["kernels"].append((name, kdur))
        self.expect["unattributed"] += 1

    def tid(self, pid, tid):
        """v1: thread ids as text, "stream N" on the GPU (pid 0)."""
        if self.flavour != "v1":
            return str(tid)
        return f'"stream {tid}"' if pid == 0 else f'"{tid}"'

    def us(self, ns):
        """v1: integer microseconds where there is no fraction (1.8 wrote
        integers; later versions fractions)."""
        return str(ns // 1000) if self.flavour == "v1" and ns % 1000 == 0 else us(ns)

    def render_event(self, e):
        ph, cat, name, pid, tid, ts, dur, args = e
        if ph == "X":
            return (f'{{"ph": "X", "cat": {json.dumps(cat)}, "name": {json.dumps(name)}, '
                    f'"pid": {pid}, "tid": {self.tid(pid, tid)}, "ts": {self.us(ts)}, '
                    f'"dur": {self.us(dur)}, "args": {json.dumps(args)}}}')
        bp = ', "bp": "e"' if ph == "f" else ""
        if self.flavour == "v1":  # the launch's tid a number, the kernel's text
            return (f'{{"ph": "{ph}", "id": {name}, "pid": {pid}, '
                    f'"tid": {self.tid(pid, tid) if pid == 0 else tid}, "ts": {self.us(ts)}, '
                    f'"cat": "async", "name": "launch"{bp}}}')
        return (f'{{"ph": "{ph}", "id": {name}, "pid": {pid}, "tid": {tid}, "ts": {us(ts)}, '
                f'"cat": "ac2g", "name": "ac2g"{bp}}}')

    def header(self):
        if self.flavour == "v1":  # no deviceProperties yet
            return ('{\n  "schemaVersion": 1,\n  "traceEvents": [\n'
                    f'  {{"name": "process_name", "ph": "M", "ts": {self.base // 1000}, "pid": {PID}, '
                    f'"tid": 0, "args": {{"name": "gen_train.py"}}}},\n'
                    f'  {{"name": "process_labels", "ph": "M", "ts": {self.base // 1000}, "pid": {PID}, '
                    f'"tid": 0, "args": {{"labels": ""}}}},\n'
                    f'  {{"name": "thread_name", "ph": "M", "ts": {self.base // 1000}, "pid": {PID}, '
                    f'"tid": "{TID}", "args": {{"name": "main-thread"}}}}')
        h = ['{\n  "schemaVersion": 1,\n  "deviceProperties": [\n']
        h.append('    {"id": 0, "name": "Generated GPU A", "totalGlobalMem": 17000000000, '
                 '"computeMajor": 8, "computeMinor": 6, "numSms": 46},\n')
        h.append('    {"id": 1, "name": "Generated GPU B", "totalGlobalMem": 17000000000, '
                 '"computeMajor": 8, "computeMinor": 6, "numSms": 46}\n  ],\n')
        h.append(f'  "displayTimeUnit": "{self.unit}",\n  "traceEvents": [\n')
        h.append(f'  {{"name": "process_name", "ph": "M", "ts": {us(self.base)}, "pid": {PID}, '
                 f'"tid": 0, "args": {{"name": "gen_train.py"}}}},\n')
        h.append(f'  {{"name": "thread_name", "ph": "M", "ts": {us(self.base)}, "pid": {PID}, '
                 f'"tid": {TID}, "args": {{"name": "main-thread"}}}},\n')
        h.append(f'  {{"name": "process_labels", "ph": "M", "ts": {us(self.base)}, "pid": 0, '
                 f'"tid": 0, "args": {{"labels": "GPU 0"}}}}')
        return "".join(h)

    def text(self):
        body = "".join(",\n  " + self.render_event(e) for e in self.ev)
        if self.flavour == "v1":
            return (self.header() + body + ',\n  {"ph": "X", "cat": "Trace", "ts": '
                    f'{self.base // 1000}, "dur": 5000, "pid": "Traces", "tid": "PyTorch Profiler", '
                    '"name": "PyTorch Profiler (0)", "args": {"Op count": 0}},\n'
                    '  {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", '
                    f'"pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": {self.base // 1000}}},\n'
                    '  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", '
                    f'"ts": {self.base // 1000 + 5000}}}\n]}}\n')
        trailer = ',\n  {"ph": "X", "cat": "Trace", "ts": 0, "dur": 1, "pid": "Spans", ' \
                  '"tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)"}\n  ],\n' \
                  '  "traceName": "gen.pt.trace.json"\n}\n'
        return self.header() + body + trailer

    def write(self, path):
        data = self.text().encode()
        if path.endswith(".gz"):
            with gzip.open(path, "wb") as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)


def training(flavour="current", steps=3, with_corr=True, unit="ms"):
    """steps x (forward op: 2 kernels; copy; memset; a sync caused by
    cudaStreamSynchronize but labelled 'Event Sync')."""
    t = Trace(flavour, unit=unit)
    step_ns = 1_000_000
    for n in range(steps):
        s0 = n * step_ns + 10_000
        t.step(n + 1, s0, step_ns - 20_000)
        t.op("aten::linear", s0 + 1_000, 300_000)
        t.launch("gemm_kernel(float*)", s0 + 2_000, s0 + 8_000, 150_123, with_corr)
        t.launch("relu_kernel(float*)", s0 + 6_000, s0 + 160_000, 20_456, with_corr)
        t.op("aten::copy_", s0 + 400_000, 100_000)
        t.launch("", s0 + 401_000, s0 + 405_000, 30_000, with_corr, kind="memcpy", nbytes=4096,
                 api="cudaMemcpyAsync")
        t.launch("", s0 + 450_000, s0 + 452_000, 1_000, with_corr, kind="memset", nbytes=512,
                 api="cudaMemsetAsync")
        if flavour != "v1":  # Kineto recorded no syncs then
            t.launch("Event Sync", s0 + 600_000, s0 + 600_500, 200_000, with_corr, kind="sync",
                     api="cudaStreamSynchronize")
        if flavour == "v1":
            t.py("train.py(42): step", s0 + 500, 700_000)
    return t


def stream_big(path, target_bytes):
    """A trace of about target_bytes, written event by event (never held in
    memory): kernels, launches, operators and flows in realistic proportions."""
    t = Trace()
    n = 0
    with open(path, "w") as f:
        f.write(t.header())
        written = 0
        while written < target_bytes:
            s0 = n * 50_000
            t.ev = []
            t.expect["kernels"] = []
            t.op("aten::mm", s0, 40_000)
            t.launch(f"gemm_{n % 50}(float*)", s0 + 1_000, s0 + 5_000, 20_000)
            t.launch(f"relu_{n % 20}(float*)", s0 + 2_000, s0 + 26_000, 5_000)
            chunk = "".join(",\n  " + t.render_event(e) for e in t.ev)
            f.write(chunk)
            written += len(chunk)
            n += 1
        f.write('\n  ],\n  "traceName": "big"\n}\n')
    return n


# One line of the huge string's call stack, as JSON text: escapes and UTF-8.
STACK_UNIT = 'torch/nn/modules/module.py(1501): _call_impl\\n caf\u00e9 \\"q\\" \\u00e9;'


def huge_string(path, nbytes, where="stack"):
    """training() plus one operator holding one string of nbytes of JSON text
    (args "Call stack", where="stack"; or the name of one more kernel,
    where="kernel", plain ASCII), written piece by piece. The stack text
    mixes escapes and UTF-8 as Python stacks do."""
    t = training()
    t.op("aten::huge", 2_500_000, 10_000)
    if where == "kernel":
        t.orphan("K" * nbytes, 2_600_000, 1_000)
        t.write(path)
        return t
    head, tail = t.text().rsplit(',\n  {"ph": "X", "cat": "Trace"', 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head)
        f.write(f',\n  {{"ph": "X", "cat": "{t.c["op"]}", "name": "aten::stack_holder", '
                f'"pid": {PID}, "tid": {TID}, "ts": {us(t.base + 2_700_000)}, "dur": 1.000, '
                f'"args": {{"Call stack": "')
        left, piece = nbytes, STACK_UNIT * (1 << 14)
        blen = len(piece.encode())
        while left >= blen:
            f.write(piece)
            left -= blen
        f.write("x" * left)
        f.write('"}}')
        f.write(',\n  {"ph": "X", "cat": "Trace"' + tail)
    t.expect["ops"] += 1
    return t
