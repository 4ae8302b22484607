"""Architecture lint (docs/architecture.md): dependencies go one way.
1. Includes: each folder includes headers only from the folders its row of
   ALLOWED names (db <- import framework <- sources and captures <- driver
   <- cli; analysis reads only through db; in-app code and tool code apart,
   format/ shared). A header is found by name, as the build finds it.
2. Links: the read-only libraries (liblatprof_db.a, liblatprof_analysis.a)
   need no symbol that the importer's library defines, so a report links
   without the importer."""
import os
import re
import subprocess

from lptest import BUILD, SRC, check

TOOL = ("util", "db", "import", "analysis", "report", "cli")
APP = ("format", "collector", "preload")
IMPORT_FRAMEWORK = ("import", "db", "util", "format")
ALLOWED = {
    "format": ("format",),
    "collector": ("collector", "format"),
    "preload": ("preload", "collector", "format"),
    "util": ("util",),
    "db": ("db", "util"),
    "import": IMPORT_FRAMEWORK,
    "import/sources": ("import/sources",) + IMPORT_FRAMEWORK,
    "import/captures": ("import/captures", "import/sources") + IMPORT_FRAMEWORK,
    "analysis": ("analysis", "db", "util"),
    "analysis/findings": ("analysis/findings", "analysis", "db", "util"),
    "analysis/findings/rules": ("analysis/findings", "analysis", "db", "util"),
    "analysis/compare": ("analysis/compare", "analysis/findings", "analysis", "db", "util"),
    "report": ("report", "analysis", "analysis/findings", "analysis/compare", "db", "util"),
    "cli": TOOL + ("import/sources", "import/captures", "analysis/findings",
                   "analysis/compare", "format", "collector"),
}
# (file, header folder): why the file may reach past its row.
EXCEPT = {
    # The driver (and the source table) sit on top of the sources and captures.
    ("import/lp_import_driver.c", "import/sources"): "the driver runs the sources",
    ("import/lp_import_sources.c", "import/sources"): "the table of sources",
    # The tool makes and reads the run's table of waits in progress with the
    # recorder's TSC clock, a header-only file.
    ("import/sources/lp_inf_table.c", "collector"): "lp_tsc.h",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    d = os.path.dirname(rel)
    for top in ("collector",):  # nvtx/ and cupti/ are the collector's
        if d.startswith(top + "/"):
            return top
    return d


where = {}  # header name -> folder
files = []
for top in TOOL + APP:
    for root, _, names in os.walk(os.path.join(SRC, top)):
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(root, n), SRC)
            if n.endswith(".h"):
                where.setdefault(n, folder_of(rel))
            if n.endswith((".c", ".h")):
                files.append(rel)
check(len(files) > 150, f"the lint sees the tree ({len(files)} files)")
check("analyze" not in os.listdir(SRC) or not os.listdir(os.path.join(SRC, "analyze")),
      "analyze/ is gone: import and analysis have their own folders")

bad = []
for rel in files:
    f = folder_of(rel)
    allowed = ALLOWED.get(f)
    if allowed is None:
        bad.append(f"{rel}: folder {f}/ has no row in ALLOWED (docs/architecture.md)")
        continue
    for h in INCLUDE.findall(open(os.path.join(SRC, rel), encoding="utf-8").read()):
        hf = where.get(os.path.basename(h))
        if hf is None or hf in allowed or (rel, hf) in EXCEPT:
            continue  # a system or generated header, or an allowed one
        bad.append(f"{rel} includes {h} ({hf}/)")
check(not bad, "every include follows docs/architecture.md" + "".join("\n  " + b for b in bad))

# 2. The read-only path links no importer code.
lib = os.path.join(BUILD, "lib", "static")


def nm(name, *flags):
    p = subprocess.run(["nm", *flags, os.path.join(lib, name)], capture_output=True, text=True,
                       check=True)
    return {l.split()[-1] for l in p.stdout.splitlines() if l.strip() and not l.endswith(":")}


imported = {s for s in nm("liblatprof_import.a", "--defined-only", "-g") if s.startswith("lp_")}
check(len(imported) > 50, f"the importer's library defines its lp_ symbols ({len(imported)})")
for name in ("liblatprof_db.a", "liblatprof_analysis.a"):
    need = nm(name, "-u") & imported
    check(not need, f"{name} needs none of the importer's symbols ({sorted(need)})")
