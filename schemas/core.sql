-- latprof database, core tables (schema version in PRAGMA user_version,
-- see db/lp_db.h LP_SCHEMA_VERSION). Documented column by column in
-- docs/schema.md. All times are CLOCK_MONOTONIC nanoseconds.

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value
) WITHOUT ROWID;

CREATE TABLE strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL
);

-- One row per process image: exec() starts a new row with the same pid.
CREATE TABLE processes (
  id          INTEGER PRIMARY KEY,
  pid         INTEGER NOT NULL,
  ppid        INTEGER NOT NULL,
  parent_id   INTEGER REFERENCES processes(id),
  exec_from   INTEGER REFERENCES processes(id),
  cmdline     TEXT,
  exe         TEXT,
  title       TEXT,              -- /proc/self/cmdline at exit when the process rewrote it, else NULL
  start_ns    INTEGER NOT NULL,
  end_ns      INTEGER,
  exit_status INTEGER,
  exit_signal INTEGER,
  exit_how    TEXT,
  exec_path   TEXT,              -- ended by a successful exec: the program exec'd
  exec_unrecorded TEXT,          -- why that program is not recorded, when known: elf-class, chroot
  raw_clone_threads   INTEGER NOT NULL DEFAULT 0, -- threads it made by raw clone(): not recorded
  raw_clone_processes INTEGER NOT NULL DEFAULT 0, -- processes it made by raw clone(): not recorded
  log_closed  INTEGER NOT NULL DEFAULT 0,
  dropped_records INTEGER NOT NULL DEFAULT 0,
  dropped_chunks  INTEGER NOT NULL DEFAULT 0,
  dropped_strings INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE threads (
  id          INTEGER PRIMARY KEY,
  process_id  INTEGER NOT NULL REFERENCES processes(id),
  tid         INTEGER NOT NULL,
  parent_tid  INTEGER,
  name        TEXT,
  start_ns    INTEGER,
  end_ns      INTEGER,
  run_delay_ns INTEGER  -- the kernel's schedstat run_delay at its end (with counters), else NULL
);

CREATE TABLE modules (
  id          INTEGER PRIMARY KEY,
  process_id  INTEGER NOT NULL REFERENCES processes(id),
  path        TEXT NOT NULL,
  load_bias   INTEGER NOT NULL,
  start_addr  INTEGER NOT NULL,
  end_addr    INTEGER NOT NULL
);

-- A symbolized code location, shared by every stack that passes through it.
CREATE TABLE frames (
  id        INTEGER PRIMARY KEY,
  module    TEXT,
  offset    INTEGER,
  function  TEXT,
  file      TEXT,
  line      INTEGER
);

CREATE TABLE stacks (
  id        INTEGER PRIMARY KEY,
  depth     INTEGER NOT NULL,
  top_frame INTEGER REFERENCES frames(id)
);

CREATE TABLE stack_frames (
  stack_id  INTEGER NOT NULL REFERENCES stacks(id),
  depth     INTEGER NOT NULL, -- 0 = innermost (the caller of the lock function)
  frame_id  INTEGER NOT NULL REFERENCES frames(id),
  PRIMARY KEY (stack_id, depth)
) WITHOUT ROWID;

CREATE TABLE locks (
  id          INTEGER PRIMARY KEY,
  process_id  INTEGER NOT NULL REFERENCES processes(id),
  address     INTEGER NOT NULL,
  kind        TEXT NOT NULL,      -- mutex, rwlock, sem, spin, futex, monitor, juc
  name        TEXT,               -- variable symbol when the lock is static data
  module      TEXT                -- module whose data holds it, NULL for heap/stack
);

-- Clustered by start: most of a recording's rows, and reports read them
-- by time, so the table is its own start_ns index (one b-tree to grow, not
-- two; docs/schema.md says why). id is given by the writer: a number unique
-- in the table, in start order as the importer assigns it.
CREATE TABLE lock_waits (
  id        INTEGER NOT NULL,
  lock_id   INTEGER NOT NULL REFERENCES locks(id),
  thread_id INTEGER NOT NULL REFERENCES threads(id),
  owner_tid INTEGER,             -- NULL when unknown
  start_ns  INTEGER NOT NULL,
  dur_ns    INTEGER NOT NULL,
  end_ns    INTEGER GENERATED ALWAYS AS (start_ns + dur_ns) VIRTUAL,
  mode      INTEGER NOT NULL DEFAULT 0, -- 0 exclusive, 1 shared (rwlock read)
  stack_id  INTEGER REFERENCES stacks(id),
  flags     INTEGER NOT NULL DEFAULT 0, -- 1 timed out, 2 failed, 4 unfinished: still waiting at
                                  -- the process's exit, which is its end
  class     INTEGER NOT NULL DEFAULT 0 REFERENCES wait_classes(id), -- set after import
  owner_range_id INTEGER,         -- ranges.id: the owner's innermost open NVTX range then
  runq_ns   INTEGER,             -- of dur_ns, runnable but waiting for a CPU; NULL unknown
  PRIMARY KEY (start_ns, id)
) WITHOUT ROWID;

-- Holds of a lock that some thread of its process had waited on, from that
-- first wait on: acquisition to release, those that lasted at least 50 us
-- (LP_HOLD_MIN_NS). pthread mutexes only.
CREATE TABLE lock_holds (
  id        INTEGER PRIMARY KEY,
  lock_id   INTEGER NOT NULL REFERENCES locks(id),
  thread_id INTEGER NOT NULL REFERENCES threads(id), -- the holder
  start_ns  INTEGER NOT NULL,    -- acquired
  dur_ns    INTEGER NOT NULL,
  end_ns    INTEGER GENERATED ALWAYS AS (start_ns + dur_ns) VIRTUAL,
  stack_id  INTEGER REFERENCES stacks(id), -- the acquiring call site
  range_id  INTEGER              -- ranges.id: the holder's innermost open NVTX range at the
                                 -- acquisition (its stage), set after import; NULL none
);

CREATE TABLE cond_waits (
  id        INTEGER PRIMARY KEY,
  thread_id INTEGER NOT NULL REFERENCES threads(id),
  cond_addr INTEGER NOT NULL,
  mutex_lock_id INTEGER REFERENCES locks(id),
  start_ns  INTEGER NOT NULL,
  dur_ns    INTEGER NOT NULL,
  end_ns    INTEGER GENERATED ALWAYS AS (start_ns + dur_ns) VIRTUAL,
  timed     INTEGER NOT NULL DEFAULT 0,
  stack_id  INTEGER REFERENCES stacks(id),
  flags     INTEGER NOT NULL DEFAULT 0, -- as lock_waits.flags
  class     INTEGER NOT NULL DEFAULT 4 REFERENCES wait_classes(id), -- set after import
  runq_ns   INTEGER                -- as lock_waits.runq_ns
);

-- Blocking calls that lasted at least the run's threshold (latprof run
-- --block-threshold, default 10 us): sleeping, descriptor I/O, poll/select/epoll waits,
-- fsync, raw futex waits.
CREATE TABLE blocking_calls (
  id        INTEGER PRIMARY KEY,
  thread_id INTEGER NOT NULL REFERENCES threads(id),
  start_ns  INTEGER NOT NULL,
  dur_ns    INTEGER NOT NULL,
  end_ns    INTEGER GENERATED ALWAYS AS (start_ns + dur_ns) VIRTUAL,
  call      TEXT NOT NULL,      -- nanosleep, read, recv, poll, fsync, futex, pthread_join, waitpid, ...
  category  TEXT NOT NULL,      -- sleep, file_io, socket_io, poll_wait, other_block
  fd        INTEGER,            -- NULL when the call has no descriptor
  fd_kind   TEXT,               -- file, socket, pipe, eventfd, tty, other, unknown
  result    INTEGER NOT NULL,   -- return value, or -errno when it failed; 0 when unfinished
  stack_id  INTEGER REFERENCES stacks(id),
  flags     INTEGER NOT NULL DEFAULT 0, -- 4 unfinished: still in the call at the process's exit,
                                        -- which is its end (as lock_waits.flags)
  runq_ns   INTEGER                -- as lock_waits.runq_ns
);

-- What a recorded wait was waiting for (import/sources/lp_import_waits.c decides,
-- docs/schema.md "Wait classes" says how). Ids are stable.
CREATE TABLE wait_classes (
  id    INTEGER PRIMARY KEY,
  name  TEXT NOT NULL UNIQUE,
  means TEXT NOT NULL
);
INSERT INTO wait_classes VALUES
  (0, 'contention', 'a thread queued for a lock another thread held (mutex, rwlock, spin, semaphore used as a lock)'),
  (1, 'gil', 'a Python thread waited for the GIL (CPython take_gil/drop_gil)'),
  (2, 'idle', 'a worker waited for work: outside requests, on a thread that serves requests or a pool thread'),
  (3, 'join', 'a thread waited for another thread to end (Python Thread.join)'),
  (4, 'signal', 'a condition or one-shot semaphore wait for an event (a queue, Event.wait)'),
  (5, 'sync', 'the host waited for the GPU (CUDA synchronization)');
