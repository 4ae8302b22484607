-- CPU counter tables (source: collector/lp_counters.c, importer:
-- import/sources/lp_import_counters.c). Documented in docs/schema.md, section
-- "Counters". Times are CLOCK_MONOTONIC ns. An event the machine cannot
-- count has available = 0 and a reason, and no values anywhere: absent,
-- never zero.

-- Per process: how counting went.
CREATE TABLE counter_config (
  process_id INTEGER PRIMARY KEY REFERENCES processes(id),
  paranoid   INTEGER,            -- kernel.perf_event_paranoid, NULL if unreadable
  user_only  INTEGER NOT NULL,   -- 1: the setting forced user-mode-only counting
  denied     INTEGER NOT NULL,   -- 1: perf_event_open refused every event
  no_libpfm  INTEGER NOT NULL,   -- 1: latprof was built without libpfm4
  note       TEXT                -- one line explaining a restriction, or NULL
);

CREATE TABLE counter_events (
  id          INTEGER PRIMARY KEY,
  process_id  INTEGER NOT NULL REFERENCES processes(id),
  idx         INTEGER NOT NULL,  -- position in the process's event list
  name        TEXT NOT NULL,     -- as given: perf/libpfm4 spelling (context-switches, cycles)
  available   INTEGER NOT NULL,  -- 1 counted, 0 not countable here
  error       INTEGER,           -- errno (> 0) or libpfm4 code (< 0) when unavailable
  reason      TEXT,              -- why it is unavailable
  multiplexed INTEGER NOT NULL DEFAULT 0 -- 1: some samples were scaled (kernel multiplexing)
);

-- One row per read of a thread's counter group at an NVTX boundary (at
-- most one per LATPROF_COUNTERS_INTERVAL_NS and thread); ts_ns is that
-- boundary's own timestamp (= ranges.start_ns / end_ns).
CREATE TABLE counter_samples (
  id         INTEGER PRIMARY KEY,
  thread_id  INTEGER NOT NULL REFERENCES threads(id),
  ts_ns      INTEGER NOT NULL,
  enabled_ns INTEGER NOT NULL,   -- group time enabled since it was opened
  running_ns INTEGER NOT NULL    -- group time on the PMU (< enabled_ns: multiplexed)
);

-- Raw running totals since the thread's group opened (unscaled).
CREATE TABLE counter_values (
  sample_id INTEGER NOT NULL REFERENCES counter_samples(id),
  event_id  INTEGER NOT NULL REFERENCES counter_events(id),
  value     INTEGER NOT NULL,
  PRIMARY KEY (sample_id, event_id)
) WITHOUT ROWID;

-- Whole-thread totals: from the thread's exit record, or its last sample
-- when it never got to write one (killed, _exit, still running at exit).
CREATE TABLE thread_counters (
  thread_id  INTEGER NOT NULL REFERENCES threads(id),
  event_id   INTEGER NOT NULL REFERENCES counter_events(id),
  value      INTEGER NOT NULL,   -- scaled when multiplexed
  raw        INTEGER NOT NULL,
  scaled     INTEGER NOT NULL,   -- 1: value = raw * enabled / running
  start_ns   INTEGER,            -- when the group opened (NULL for last-sample totals)
  end_ns     INTEGER NOT NULL,
  source     TEXT NOT NULL,      -- 'exit' or 'last_sample'
  PRIMARY KEY (thread_id, event_id)
) WITHOUT ROWID;

-- Per range: counter deltas over the range, between the thread's latest
-- samples at or before its begin and its end; kept when those samples
-- misplace at most 10% of the range (docs/schema.md). Only ranges that
-- begin and end on one thread (counters are per thread).
CREATE TABLE range_counters (
  range_id INTEGER NOT NULL,      -- ranges.id (schemas/nvtx.sql)
  event_id INTEGER NOT NULL REFERENCES counter_events(id),
  delta    INTEGER NOT NULL,      -- scaled when multiplexed
  scaled   INTEGER NOT NULL,      -- 1: multiplexed during the range, delta is an estimate
  PRIMARY KEY (range_id, event_id)
) WITHOUT ROWID;

CREATE VIEW counter_samples_named AS
  SELECT s.thread_id, s.ts_ns, e.name AS event, v.value, s.enabled_ns, s.running_ns
  FROM counter_values v JOIN counter_samples s ON s.id = v.sample_id
  JOIN counter_events e ON e.id = v.event_id;
