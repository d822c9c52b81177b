-- Revision 2 (the design's "0023"): the native run lab (docs/line.md, "The native run lab").
-- A run binds one peer task (a `line_task` row whose owner_kind is 'native') to its session,
-- station, request, pinned workflow and step occurrence; checkpoints make a correlated terminal
-- resume the workflow exactly once.

CREATE TABLE run_session (
    session_id TEXT PRIMARY KEY,
    startup_id TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE run_record (
    run_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES run_session (session_id),
    request_id TEXT NOT NULL UNIQUE,
    request_digest TEXT NOT NULL,
    station TEXT NOT NULL,
    workflow_id TEXT NOT NULL,
    workflow_digest TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('awaiting_peer', 'completed', 'failed', 'unknown',
        'expired', 'remote_noncompletion', 'cancelled')),
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE run_peer_task (
    run_id TEXT NOT NULL REFERENCES run_record (run_id),
    task_id TEXT NOT NULL UNIQUE REFERENCES line_task (task_id),
    step_id TEXT NOT NULL,
    occurrence INTEGER NOT NULL CHECK (occurrence >= 1),
    binding_digest TEXT NOT NULL,
    UNIQUE (run_id, step_id, occurrence)
) STRICT;

CREATE TABLE run_checkpoint (
    run_id TEXT NOT NULL REFERENCES run_record (run_id),
    seq INTEGER NOT NULL CHECK (seq >= 1),
    step_id TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('admitted', 'adopted', 'resumed')),
    state_json TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT;
-- Each step occurrence is adopted once and resumed once: the resume is exactly once.
CREATE UNIQUE INDEX run_checkpoint_once ON run_checkpoint (run_id, step_id, occurrence, kind);

CREATE TABLE run_closure (
    run_id TEXT PRIMARY KEY REFERENCES run_record (run_id),
    reason TEXT NOT NULL,
    remote_uncertain INTEGER NOT NULL CHECK (remote_uncertain IN (0, 1)),
    closed_at_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE run_reauthorization (
    run_id TEXT NOT NULL REFERENCES run_record (run_id),
    startup_id TEXT NOT NULL,
    task_id TEXT NOT NULL REFERENCES line_task (task_id),
    binding_digest TEXT NOT NULL,
    actions_json TEXT NOT NULL,
    generation INTEGER NOT NULL REFERENCES line_policy (generation),
    reaffirmed_public_source INTEGER NOT NULL CHECK (reaffirmed_public_source IN (0, 1)),
    created_at_ms INTEGER NOT NULL
) STRICT;

CREATE TRIGGER run_session_keep BEFORE DELETE ON run_session
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER run_record_keep BEFORE DELETE ON run_record
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER run_peer_task_keep BEFORE DELETE ON run_peer_task
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER run_checkpoint_keep BEFORE DELETE ON run_checkpoint
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER run_closure_keep BEFORE DELETE ON run_closure
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER run_reauthorization_keep BEFORE DELETE ON run_reauthorization
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;

-- Bindings, checkpoints, closures and reauthorizations never change; a run's identity never
-- changes and a settled run stays settled.
CREATE TRIGGER run_peer_task_fixed BEFORE UPDATE ON run_peer_task
    BEGIN SELECT RAISE(ABORT, 'a run binding never changes'); END;
CREATE TRIGGER run_checkpoint_fixed BEFORE UPDATE ON run_checkpoint
    BEGIN SELECT RAISE(ABORT, 'a checkpoint never changes'); END;
CREATE TRIGGER run_closure_fixed BEFORE UPDATE ON run_closure
    BEGIN SELECT RAISE(ABORT, 'a closure never changes'); END;
CREATE TRIGGER run_reauthorization_fixed BEFORE UPDATE ON run_reauthorization
    BEGIN SELECT RAISE(ABORT, 'a reauthorization never changes'); END;
CREATE TRIGGER run_record_settles_once BEFORE UPDATE ON run_record
    WHEN NEW.run_id IS NOT OLD.run_id OR NEW.session_id IS NOT OLD.session_id
      OR NEW.request_id IS NOT OLD.request_id OR NEW.request_digest IS NOT OLD.request_digest
      OR NEW.station IS NOT OLD.station OR NEW.workflow_id IS NOT OLD.workflow_id
      OR NEW.workflow_digest IS NOT OLD.workflow_digest
      OR (OLD.status IS NOT 'awaiting_peer' AND NEW.status IS NOT OLD.status)
    BEGIN SELECT RAISE(ABORT, 'a run keeps its identity and settles once'); END;
