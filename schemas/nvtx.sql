-- NVTX tables (source: collector/nvtx, importer: import/sources/lp_import_nvtx.c).
-- Documented in docs/schema.md. Times are CLOCK_MONOTONIC ns.

CREATE TABLE domains (
  id         INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  name       TEXT NOT NULL          -- '' for NVTX's default domain
);

CREATE TABLE categories (
  domain_id  INTEGER REFERENCES domains(id),
  category   INTEGER NOT NULL,
  name       TEXT NOT NULL
);

-- One row per range instance: push/pop (nested per thread and domain) or
-- start/end (may end on another thread).
CREATE TABLE ranges (
  id              INTEGER PRIMARY KEY,
  process_id      INTEGER NOT NULL REFERENCES processes(id),
  domain_id       INTEGER REFERENCES domains(id),
  name_id         INTEGER REFERENCES strings(id),
  category        INTEGER NOT NULL DEFAULT 0,
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  start_thread_id INTEGER NOT NULL REFERENCES threads(id),
  end_thread_id   INTEGER REFERENCES threads(id),
  parent_id       INTEGER REFERENCES ranges(id),
  depth           INTEGER NOT NULL DEFAULT 0, -- 0 = outermost on its thread and domain
  payload,                             -- numeric payload of the event attributes, or NULL
  color           INTEGER,
  flags           INTEGER NOT NULL DEFAULT 0 -- see LP_RANGEF_* in docs/schema.md
);

CREATE TABLE marks (
  id         INTEGER PRIMARY KEY,
  process_id INTEGER NOT NULL REFERENCES processes(id),
  domain_id  INTEGER REFERENCES domains(id),
  name_id    INTEGER REFERENCES strings(id),
  category   INTEGER NOT NULL DEFAULT 0,
  ts_ns      INTEGER NOT NULL,
  thread_id  INTEGER NOT NULL REFERENCES threads(id),
  payload
);

CREATE VIEW ranges_named AS
  SELECT r.*, s.value AS name, d.name AS domain
  FROM ranges r LEFT JOIN strings s ON s.id = r.name_id LEFT JOIN domains d ON d.id = r.domain_id;
