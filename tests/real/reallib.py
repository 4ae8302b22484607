"""Helpers for tests/real: record real programs from Debian and PyPI
packages (scripts/setup.sh installs them) and read latprof's verdicts.
A missing package skips (77) and says which."""
import importlib.util
import json
import os
import shutil
import sys

import lptest
from lptest import latprof

HERE = os.path.dirname(os.path.abspath(__file__))


def need_python(*mods):
    for m in mods:
        if importlib.util.find_spec(m) is None:
            lptest.skip(f"python package '{m}' is not installed (scripts/setup.sh installs it)")


def need_cmd(*paths):
    for p in paths:
        if not (shutil.which(p) or os.access(p, os.X_OK)):
            lptest.skip(f"'{p}' is not installed (scripts/setup.sh installs it)")


def findings(db, *args):
    return json.loads(latprof("report", db, "--bottlenecks", "--format", "json", *args,
                              check=0).stdout)


def locks(db, *args):
    return json.loads(latprof("report", db, "--locks", "--format", "json", *args,
                              check=0).stdout)


def rule(doc, rid):
    return next(r for r in doc["rules"] if r["id"] == rid)


def found(doc, rid):
    return [f for f in doc["findings"] if f["id"] == rid]


def script(name):
    return [sys.executable, os.path.join(HERE, name)]
