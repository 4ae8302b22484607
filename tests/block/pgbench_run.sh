#!/bin/bash
# PostgreSQL under pgbench over a Unix socket, recorded by latprof (run as
# root: the server runs as user postgres). Usage: D=DIR pgbench_run.sh SECONDS
# Leaves DIR/pg.db, DIR/proc_cpu.txt: "<pid> <utime+stime ticks>" of each
# backend that served pgbench, sampled every 0.1 s until it ended (a lower
# bound), DIR/pm_cpu.txt: the postmaster's cutime+cstime before and after
# the run (its reaped children's CPU: exactly those backends, autovacuum off),
# and DIR/steal.txt: the machine's steal ticks before and after.
set -u
D=${D:?}; PGBIN=$(ls -d /usr/lib/postgresql/*/bin | tail -1); LP=${LATPROF:?}
rm -rf $D; mkdir -p $D; chown postgres $D
R="runuser -u postgres --"
$R $PGBIN/initdb -D $D/data -A trust >/dev/null 2>&1 || { echo initdb failed; exit 1; }
$R env TMPDIR=$D $LP run -o $D/pg.db -- $PGBIN/postgres -D $D/data -k $D -c listen_addresses= \
   -c shared_buffers=32MB -c max_connections=20 -c autovacuum=off > $D/lp.out 2>&1 &
LPPID=$!
for i in $(seq 100); do [ -S $D/.s.PGSQL.5432 ] && break; sleep 0.1; done
$R $PGBIN/pgbench -h $D -i -s 2 postgres > $D/init.out 2>&1
sleep 0.5 # the init's backend is reaped
PM=$(head -1 $D/data/postmaster.pid)
pm_cpu() { awk '{print $16+$17}' /proc/$PM/stat; }
# The hypervisor's stolen time over the run (ticks, all CPUs, /proc/stat):
# task-clock counts it as running, utime+stime do not.
steal() { awk '/^cpu /{print $9; exit}' /proc/stat; }
BEFORE=$(pm_cpu); STEAL_BEFORE=$(steal)
$R $PGBIN/pgbench -h $D -c 4 -j 2 -T ${1:-8} postgres > $D/bench.out 2>&1 &
BP=$!
declare -A cpu
while kill -0 $BP 2>/dev/null; do
  for p in $(pgrep -u postgres -f "postgres: postgres postgres"); do
    v=$(awk '{print $14+$15}' /proc/$p/stat 2>/dev/null) && [ -n "$v" ] && cpu[$p]=$v
  done
  sleep 0.1
done
for p in "${!cpu[@]}"; do echo "$p ${cpu[$p]}"; done > $D/proc_cpu.txt
# Until the postmaster has reaped each backend: an exited backend stays a
# zombie, with its /proc entry, until then, and its CPU is in the
# postmaster's cutime+cstime only after. (A loaded CI once read cutime with
# one of four backends not yet reaped: 3.36 s against 4.52 s recorded.)
for p in "${!cpu[@]}"; do
  for i in $(seq 100); do [ -e /proc/$p ] || break; sleep 0.1; done
done
STEAL_AFTER=$(steal)
echo "$BEFORE $(pm_cpu)" > $D/pm_cpu.txt
echo "$STEAL_BEFORE $STEAL_AFTER" > $D/steal.txt
# never leave a server behind: a fast stop, else kill it
$R $PGBIN/pg_ctl -D $D/data stop -m fast -t 60 > /dev/null || kill -9 $PM
wait $LPPID
