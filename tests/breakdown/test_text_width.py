"""The breakdown's stage table fits the terminal: one table when COLUMNS
allows, else the statistics, the time categories and the counters in parts,
each with the stage names; the category column 'on-CPU' and the counter
column 'cpu/wall' are two names (before: 'on-CPU' twice in one 178-column
row). Every number of the one-table form is in the parts."""
import os

from lptest import check, latprof, record, sample, skip, tmpdir

srv = sample("infer_server")
if not os.path.exists(srv):
    skip("infer_server not built (no NVTX3 headers)")
d = tmpdir()
run = os.path.join(d, "run.db")
record(run, srv, "--requests", 50, "--threads", 1)


def table(cols):
    out = latprof("report", run, "--breakdown", env={"COLUMNS": str(cols)}, check=0).stdout
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("stage "))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Times are"))
    return lines[start:end]


wide = table(400)
heads = [ln for ln in wide if ln.startswith("stage ")]
check(len(heads) == 1, f"COLUMNS=400: one table ({len(heads)} headers)")
check(heads[0].split().count("on-CPU") == 1 and "cpu/wall" in heads[0],
      f"one on-CPU column and one cpu/wall column: {heads[0]}")
for cols in (100, 90):
    parts = table(cols)
    widest = max(len(ln) for ln in parts)
    check(widest <= cols, f"COLUMNS={cols}: widest table line {widest} <= {cols}")
    hs = [ln for ln in parts if ln.startswith("stage ")]
    check(len(hs) >= 2, f"COLUMNS={cols}: the table comes in {len(hs)} parts")
    # Same cells: every stage row's values of the wide table are in the parts.
    def cells_of(ln):
        name, _, rest = ln.strip().partition("  ")  # a name may hold one space
        return name, rest.split()

    for row in wide[1:]:
        name, cells = cells_of(row)
        got = [c for ln in parts if cells_of(ln)[0] == name for c in cells_of(ln)[1]]
        check(sorted(cells) == sorted(got), f"COLUMNS={cols}: {name}'s cells all there")

# The slowest requests: as many stage columns as fit in each part, every
# stage named in one part's header, every line within COLUMNS.
for cols in (100, 90):
    out = latprof("report", run, "--breakdown", env={"COLUMNS": str(cols)}, check=0).stdout
    sec = out.split("Slowest requests", 1)[1].splitlines()[1:]
    sec = sec[:next((i for i, ln in enumerate(sec) if ln and not ln[0].isspace() and
                     not ln.lstrip()[:1].isdigit()), len(sec))]
    widest = max(len(ln) for ln in sec)
    check(widest <= cols, f"COLUMNS={cols}: slowest requests' widest line {widest} <= {cols}")
    heads = " ".join(ln for ln in sec if "range id" in ln)
    check(all(s in heads for s in ("decode", "preprocess", "infer", "postprocess")),
          f"COLUMNS={cols}: every stage has its column in some part")
