"""Helpers for tests/real: record real programs from Debian and PyPI
packages (scripts/setup.sh installs them) and read latprof's verdicts.
A missing package skips (77) and says which."""
import importlib.util
import json
import os
import glob
import pwd
import shutil
import subprocess
import sys

import lptest
from lptest import latprof, need_python  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))


def need_cmd(*paths):
    for p in paths:
        if not (shutil.which(p) or os.access(p, os.X_OK)):
            lptest.skip(f"'{p}' is not installed (scripts/setup.sh installs it)")


def findings(db, *args):
    """The findings JSON, checked as one account (tests/lib/lpaccount.py)."""
    from lpaccount import check_account
    if not args:
        check_account(db)
    return json.loads(latprof("report", db, "--bottlenecks", "--format", "json", *args,
                              check=0).stdout)


def locks(db, *args):
    return json.loads(latprof("report", db, "--locks", "--format", "json", *args,
                              check=0).stdout)


def rule(doc, rid):
    return next(r for r in doc["rules"] if r["id"] == rid)


def found(doc, rid):
    return [f for f in doc["findings"] if f["id"] == rid]


def first_app_finding(doc):
    """The first finding about the program, past those about the machine's
    CPU load (cpu-saturated, cpu-starved), which the other jobs of a busy
    test host can raise first; None when there is none."""
    return next((f for f in doc["findings"]
                 if f["id"] not in ("cpu-saturated", "cpu-starved")), None)


def javac(name):
    """tests/real/NAME.java compiled into a new temporary directory (skips
    without a JDK); the directory, for -cp."""
    need_cmd("javac", "java")
    d = lptest.tmpdir()
    subprocess.run(["javac", "-d", d, os.path.join(HERE, f"{name}.java")], check=True)
    return d


def drop_perf_maps(db_path):
    """Removes the /tmp/perf-PID.map a JIT (the JVM, V8) wrote for each
    process of the recording: the import read them, the names are in the
    database."""
    with lptest.db(db_path) as c:
        for (pid,) in c.execute("SELECT DISTINCT pid FROM processes"):
            if os.path.exists(f"/tmp/perf-{pid}.map"):
                os.unlink(f"/tmp/perf-{pid}.map")


def check_first_lock_finding(doc, ldoc, want, kind):
    """The first finding about the program is lock-contention on the lock
    named want, the longest-waited lock of that kind in ldoc (--locks JSON).
    A lock whose holder spins (a JVM's, timed by the program) loses share
    on a test host whose other jobs take the CPUs: its threads queue for a
    CPU rather than at the lock, and the machine's load is the finding.
    Then the rule may be quiet beside cpu-saturated, and the lock is
    checked as the top one of its kind alone; the test says so."""
    from lptest import check
    top = max((r for r in ldoc["locks"] if r.get("kind") == kind), key=lambda r: r["total_ns"],
              default={})
    check(top.get("name") == want, f"the {kind} lock waited on longest is {want} "
          f"({top.get('name')})")
    rule = next(r for r in doc["rules"] if r["id"] == "lock-contention")
    if rule["state"] == "quiet" and any(f["id"] == "cpu-saturated" for f in doc["findings"]):
        print(f"lock-contention quiet at {100 * rule['value']:.1f}% beside cpu-saturated: the "
              f"host is busy; {want} checked as the top {kind} lock above")
        return
    first = first_app_finding(doc) or {}
    check(first.get("id") == "lock-contention" and first.get("subject") == want,
          f"the first finding (past the machine's CPU load) is lock-contention on {want} "
          f"({[(f['id'], f['subject']) for f in doc['findings']]})")


def script(name):
    return [sys.executable, os.path.join(HERE, name)]


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=15):
    """Until 127.0.0.1:port accepts, the server exits, or timeout s."""
    import socket
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.1)
    return False


def start_recording(db, *cmd, env=None, pre=()):
    """latprof run -o db -- cmd... in the background (its own process
    group, so a failing test can end it by pid); pre: a command that runs
    latprof (setpriv to drop root)."""
    import subprocess
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.Popen([*pre, lptest.LATPROF, "run", "-o", db, "--", *cmd], env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def postgres_cluster(d):
    """A new PostgreSQL data directory in d (skips when PostgreSQL is not
    installed): (bin dir, the prefix that runs a command as the directory's
    owner, data dir). As root, nobody owns d: postgres refuses to run as root."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not bins or not os.access(os.path.join(bins[-1], "pgbench"), os.X_OK):
        lptest.skip("PostgreSQL is not installed (scripts/setup.sh installs postgresql)")
    os.chmod(d, 0o755)
    pre = []
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
        pre = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
               "--clear-groups"]
    data = os.path.join(d, "data")
    r = subprocess.run([*pre, f"{bins[-1]}/initdb", "-D", data, "-A", "trust", "-U", "postgres",
                        "--no-sync"], capture_output=True, text=True, timeout=60)
    lptest.check(r.returncode == 0, f"initdb in {data} ({r.stderr.strip()[-200:]})")
    return bins[-1], pre, data


def one_cpu():
    """The lowest-numbered CPU this test may run on, as taskset -c names it:
    a case confined there saturates it whatever the machine's size."""
    return str(min(os.sched_getaffinity(0)))


def start_memcached(d, threads=4, cpus=None):
    """Debian's memcached recorded in the background, on loopback, writing
    its pid file in d: (recording, port, pid file, database path); cpus: a
    taskset -c list that memcached is confined to, by `latprof run --
    taskset -c CPUS memcached` (latprof's own affinity, run.cpus_allowed,
    stays the machine's; the threads' own, run.cpus_threads, is CPUS). As root,
    latprof and memcached run as nobody from the start (memcached refuses
    root without -u): a process that drops root keeps recording
    (rel_uid_drop), but with kernel.perf_event_paranoid=2 its threads
    counted kernel mode before the drop and can count nothing after it, so
    this way every thread counts the same (user mode)."""
    import pwd
    os.chmod(d, 0o777)  # nobody writes its pid file here
    path = os.path.join(d, "mc.db")
    port = free_port()
    pidfile = os.path.join(d, "mc.pid")
    pre = []
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        pre = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
               "--clear-groups"]
    pin = ["taskset", "-c", cpus] if cpus is not None else []
    rec = start_recording(path, *pin, "memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0",
                          "-t", str(threads), "-P", pidfile, pre=pre, env={"TMPDIR": d})
    return rec, port, pidfile, path


def pidfile_pid(pidfile, tries=50):
    """The pid a server wrote to pidfile, waiting up to tries x 0.1 s."""
    import time
    for _ in range(tries):
        if os.path.exists(pidfile):
            with open(pidfile) as f:
                text = f.read().strip()
            if text:
                return int(text)
        time.sleep(0.1)
    raise RuntimeError(f"no pid in {pidfile}")


def stop(proc, timeout=30):
    """End a background recording's process group by its pid if it is still
    running; returns (stdout, stderr)."""
    import signal
    import subprocess
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.communicate()


def check_saturation(fdoc, kernel, what, cpus=None):
    """cpu-saturated against the kernel's own figures for the same threads:
    kernel is [(run_delay_ns, life_ns)] from /proc schedstat. The rule
    judges all threads' time waiting for a CPU against their life (>= 10%):
    found where the kernel's share is clearly above (>= 12%), quiet where
    clearly below (<= 8%); at the threshold either, and said so. Whether a
    load generator saturates 2 CPUs depends on what else runs: the second
    source, not the load, decides what is right. cpus: the case was
    confined to that many CPUs to saturate them: the kernel's share must be
    clearly above the threshold, and the finding must say "on N CPUs"."""
    q = sum(k[0] for k in kernel)
    life = sum(k[1] for k in kernel)
    share = q / life if life else 0.0
    sat = next((f for f in fdoc["findings"] if f["id"] == "cpu-saturated"), None)
    r = next(r for r in fdoc["rules"] if r["id"] == "cpu-saturated")
    verdict = f"{r['state']}, value {r.get('value')}; the kernel's share {share:.3f}"
    if cpus is not None:
        lptest.check(share >= 0.12, f"{what}: the kernel says its threads waited {100 * share:.1f}% "
                                    "of their time for a CPU (>= 12%, above the rule's 10%)")
        ev = {n["key"]: n["value"] for n in sat["evidence"]} if sat else {}
        on_m = f" on {cpus} CPU{'' if cpus == 1 else 's'}; "
        lptest.check(sat is not None and ev.get("cpus") == cpus
                     and ev.get("runnable_threads", 0) > cpus and on_m in sat["summary"],
                     f"{what}: cpu-saturated found, more runnable threads than the {cpus} "
                     f"CPU(s) it may use ({verdict}; {sat and sat['summary']})")
    elif share >= 0.12:
        lptest.check(sat is not None, f"{what}: cpu-saturated found ({verdict})")
    elif share <= 0.08:
        lptest.check(sat is None, f"{what}: no cpu-saturated finding ({verdict})")
    else:
        print(f"ok: {what}: the kernel's share is at the threshold: either verdict ({verdict})")
    return sat
