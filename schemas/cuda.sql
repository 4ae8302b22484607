-- CUDA tables (source: collector/cupti, importer: import/sources/lp_import_cuda.c).
-- Documented in docs/schema.md ("CUDA"). Times are CLOCK_MONOTONIC ns: CUPTI
-- is given the recording core's clock, so GPU and CPU events share one
-- timeline. Enum columns hold CUPTI's numbers; the *_name columns and the
-- cuda_* views spell them out. correlation_id joins an API call
-- (cuda_api) to the GPU work it launched, within one process.

CREATE TABLE gpu_devices (
  id            INTEGER PRIMARY KEY,
  process_id    INTEGER NOT NULL REFERENCES processes(id),
  device        INTEGER NOT NULL,      -- CUDA device ordinal
  name          TEXT,
  sm_count      INTEGER,
  cc_major      INTEGER,
  cc_minor      INTEGER,
  memory_bytes  INTEGER,
  core_clock_khz INTEGER,
  mem_bandwidth_kbs INTEGER,
  driver_version TEXT,                 -- NULL when unknown
  uuid          TEXT,                  -- 'GPU-xxxxxxxx-...' ('MIG-...' for a MIG instance); NULL unknown
  pci_bus_id    TEXT                   -- '0000:17:00.0'; NULL unknown
);

CREATE TABLE kernels (
  id             INTEGER PRIMARY KEY,
  process_id     INTEGER NOT NULL REFERENCES processes(id),
  device         INTEGER NOT NULL,
  context        INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  dur_ns         INTEGER GENERATED ALWAYS AS (end_ns - start_ns) VIRTUAL,
  name_id        INTEGER REFERENCES strings(id),   -- demangled
  mangled_id     INTEGER REFERENCES strings(id),   -- as CUPTI reported it
  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER,
  static_smem    INTEGER,
  dynamic_smem   INTEGER,
  registers      INTEGER,
  graph_id       INTEGER NOT NULL DEFAULT 0,        -- 0 = not launched by a CUDA graph
  graph_node_id  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE memcpys (
  id             INTEGER PRIMARY KEY,
  process_id     INTEGER NOT NULL REFERENCES processes(id),
  device         INTEGER NOT NULL,
  context        INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  dur_ns         INTEGER GENERATED ALWAYS AS (end_ns - start_ns) VIRTUAL,
  bytes          INTEGER NOT NULL,
  copy_kind      TEXT NOT NULL,   -- HtoD, DtoH, DtoD, HtoH, PtoP, HtoA, AtoH, AtoA, AtoD, DtoA, unknown
  src_kind       TEXT NOT NULL,   -- pageable, pinned, device, array, managed, device_static, managed_static, unknown
  dst_kind       TEXT NOT NULL,
  async          INTEGER NOT NULL, -- 1 = issued by an async API (cudaMemcpyAsync)
  runtime_correlation_id INTEGER,  -- the runtime API call's id, when CUPTI gives one
  src_device     INTEGER,
  dst_device     INTEGER,
  graph_id       INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE memsets (
  id             INTEGER PRIMARY KEY,
  process_id     INTEGER NOT NULL REFERENCES processes(id),
  device         INTEGER NOT NULL,
  context        INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  correlation_id INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  dur_ns         INTEGER GENERATED ALWAYS AS (end_ns - start_ns) VIRTUAL,
  bytes          INTEGER NOT NULL,
  value          INTEGER NOT NULL,
  memory_kind    TEXT NOT NULL,
  async          INTEGER NOT NULL,
  graph_id       INTEGER NOT NULL DEFAULT 0
);

-- Host-side synchronization: the time the host thread was blocked.
CREATE TABLE syncs (
  id             INTEGER PRIMARY KEY,
  process_id     INTEGER NOT NULL REFERENCES processes(id),
  type           TEXT NOT NULL,   -- event_synchronize, stream_wait_event, stream_synchronize, context_synchronize, unknown
  context        INTEGER NOT NULL,
  stream         INTEGER,         -- NULL for context synchronization
  event          INTEGER,
  correlation_id INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  dur_ns         INTEGER GENERATED ALWAYS AS (end_ns - start_ns) VIRTUAL,
  return_value   INTEGER NOT NULL DEFAULT 0
);

-- Runtime (cuda*) and driver (cu*) API calls.
CREATE TABLE cuda_api (
  id             INTEGER PRIMARY KEY,
  process_id     INTEGER NOT NULL REFERENCES processes(id),
  thread_id      INTEGER NOT NULL REFERENCES threads(id),
  domain         TEXT NOT NULL,   -- runtime, driver
  cbid           INTEGER NOT NULL,
  name_id        INTEGER REFERENCES strings(id),
  correlation_id INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  dur_ns         INTEGER GENERATED ALWAYS AS (end_ns - start_ns) VIRTUAL,
  return_value   INTEGER NOT NULL
);

CREATE TABLE gpu_overhead (
  id             INTEGER PRIMARY KEY,
  process_id     INTEGER NOT NULL REFERENCES processes(id),
  kind           TEXT NOT NULL,   -- driver_compiler, buffer_flush, instrumentation, resource, module_loading, lazy_function_loading, command_buffer_full, buffer_request, uvm_init, unknown
  object_kind    TEXT NOT NULL,   -- process, thread, device, context, stream, unknown
  object_id      INTEGER,
  correlation_id INTEGER NOT NULL DEFAULT 0,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  dur_ns         INTEGER GENERATED ALWAYS AS (end_ns - start_ns) VIRTUAL
);

-- Device memory allocations and releases (CUPTI MEMORY2).
CREATE TABLE gpu_allocs (
  id             INTEGER PRIMARY KEY,
  process_id     INTEGER NOT NULL REFERENCES processes(id),
  op             TEXT NOT NULL,   -- alloc, free
  ts_ns          INTEGER NOT NULL,
  address        INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  memory_kind    TEXT NOT NULL,
  device         INTEGER NOT NULL,
  context        INTEGER NOT NULL,
  stream         INTEGER,
  correlation_id INTEGER NOT NULL DEFAULT 0,
  async          INTEGER NOT NULL DEFAULT 0
);

-- Per process: did CUPTI start, why not, what it dropped.
CREATE TABLE cuda_capture (
  process_id     INTEGER PRIMARY KEY REFERENCES processes(id),
  started        INTEGER NOT NULL,   -- 1 = CUPTI activity capture ran
  code           INTEGER,            -- CUptiResult of the failure, 0 when started
  message        TEXT,
  records        INTEGER NOT NULL DEFAULT 0,  -- activity records translated
  dropped        INTEGER NOT NULL DEFAULT 0,  -- CUPTI dropped (buffer limit, full device buffer)
  unknown_kinds  INTEGER NOT NULL DEFAULT 0,  -- skipped: kinds latprof does not translate
  log_drops      INTEGER NOT NULL DEFAULT 0,  -- refused by the event log
  buffers        INTEGER NOT NULL DEFAULT 0,
  buffer_denied  INTEGER NOT NULL DEFAULT 0,
  kinds_failed   TEXT,               -- activity kinds that could not be enabled
  bad_timestamps INTEGER NOT NULL DEFAULT 0,  -- dropped: start/end 0 or end < start (work still running at a forced flush)
  foreign_timestamps INTEGER NOT NULL DEFAULT 0, -- dropped: stamped by another CUPTI client's clock
  filtered_api   INTEGER NOT NULL DEFAULT 0,  -- API calls kept as counts only (cuda_api_counts)
  conflicts      TEXT                -- what limited the capture: subscriber, callbacks, clock, flush_timeout, buffers, stopped
);

-- Query APIs called by the thousand (cudaGetDevice, cuCtxGetCurrent...):
-- counted per process, not recorded call by call.
CREATE TABLE cuda_api_counts (
  process_id     INTEGER NOT NULL REFERENCES processes(id),
  domain         TEXT NOT NULL,   -- runtime, driver
  cbid           INTEGER NOT NULL,
  name_id        INTEGER REFERENCES strings(id),
  calls          INTEGER NOT NULL,
  total_ns       INTEGER NOT NULL,
  PRIMARY KEY (process_id, domain, cbid)
);

-- All GPU operations of a process on one timeline.
CREATE VIEW gpu_ops AS
  SELECT 'kernel' AS op, k.process_id, k.device, k.stream, k.correlation_id, k.start_ns, k.end_ns,
         s.value AS name, NULL AS bytes FROM kernels k LEFT JOIN strings s ON s.id = k.name_id
  UNION ALL
  SELECT 'memcpy', process_id, device, stream, correlation_id, start_ns, end_ns,
         'memcpy ' || copy_kind || ' ' || src_kind || '->' || dst_kind, bytes FROM memcpys
  UNION ALL
  SELECT 'memset', process_id, device, stream, correlation_id, start_ns, end_ns, 'memset', bytes
    FROM memsets;

-- Each GPU operation with the API call that launched it (the runtime call
-- when there is one, else the driver call: both carry the same id).
CREATE VIEW gpu_launches AS
  SELECT g.*, a.id AS api_id, a.thread_id, a.start_ns AS api_start_ns, a.end_ns AS api_end_ns,
         g.start_ns - a.end_ns AS launch_delay_ns, n.value AS api_name
  FROM gpu_ops g JOIN cuda_api a ON a.id =
    (SELECT c.id FROM cuda_api c WHERE c.process_id = g.process_id
       AND c.correlation_id = g.correlation_id ORDER BY c.domain = 'runtime' DESC, c.id LIMIT 1)
  LEFT JOIN strings n ON n.id = a.name_id;
