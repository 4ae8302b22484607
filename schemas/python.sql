-- latprof database, Python tables (preload/lp_py.c records them, docs/python.md
-- says how; documented column by column in docs/schema.md). A wait of a thread
-- that ran Python is a lock_waits, cond_waits or blocking_calls row with a
-- py_waits row of the same thread_id and start_ns.

-- One row per CPython image found: its version and whether its frames were read.
CREATE TABLE py_runtimes (
  process_id INTEGER NOT NULL REFERENCES processes(id),
  version    TEXT NOT NULL,      -- "3.12.1"
  frames     TEXT NOT NULL       -- read; unknown-version, layout-check-failed, no-safe-read: none recorded
);

-- A Python code location.
CREATE TABLE py_frames (
  id        INTEGER PRIMARY KEY,
  function  TEXT NOT NULL,       -- co_name
  file      TEXT NOT NULL,       -- co_filename
  line      INTEGER,             -- NULL when the interpreter had none
  source    TEXT,                -- the line's text, stripped, when the file was readable at import
  wait_lib  INTEGER NOT NULL DEFAULT 0 -- 1: in the standard library's threading, queue or
                                       -- concurrent modules (never a call site)
);

CREATE TABLE py_stacks (
  id         INTEGER PRIMARY KEY,
  depth      INTEGER NOT NULL,   -- frames recorded (at most 16, innermost first)
  site_frame INTEGER REFERENCES py_frames(id) -- the call site: the innermost frame not in
                                             -- threading/queue/concurrent, else the innermost
);

CREATE TABLE py_stack_frames (
  stack_id  INTEGER NOT NULL REFERENCES py_stacks(id),
  depth     INTEGER NOT NULL,    -- 0 = innermost
  frame_id  INTEGER NOT NULL REFERENCES py_frames(id),
  PRIMARY KEY (stack_id, depth)
) WITHOUT ROWID;

-- The Python side of a wait: the waiting thread's frames; for a GIL wait, the
-- thread that held the GIL when the wait began and the function it ran then.
CREATE TABLE py_waits (
  thread_id   INTEGER NOT NULL REFERENCES threads(id),
  start_ns    INTEGER NOT NULL,  -- the wait's start_ns (its row in lock_waits, cond_waits or
                                 -- blocking_calls)
  py_stack_id INTEGER REFERENCES py_stacks(id), -- NULL: no Python frames at the wait
  holder_tid  INTEGER,           -- GIL waits: the GIL's holder; NULL otherwise or unknown
  holder_frame_id INTEGER REFERENCES py_frames(id), -- its innermost frame then
  PRIMARY KEY (thread_id, start_ns)
) WITHOUT ROWID;
