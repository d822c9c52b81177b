-- Line custody, revision 1 (docs/line.md, "Data model"). Times are UNIX milliseconds.

-- The installation: its stable id (the key of the host capacity scope) and the digest of the
-- operator's credential. At most one row, written only by host commands.
CREATE TABLE line_host (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    installation_id TEXT NOT NULL,
    operator_credential_sha256 BLOB CHECK (
        operator_credential_sha256 IS NULL OR length(operator_credential_sha256) = 32),
    created_at_ms INTEGER NOT NULL,
    credential_set_at_ms INTEGER
) STRICT;

-- Durable policy generations, append-only, written only by `line host establish-policy`.
CREATE TABLE line_policy (
    generation INTEGER PRIMARY KEY CHECK (generation >= 1),
    digest TEXT NOT NULL,
    record_json TEXT NOT NULL,
    established_at_ms INTEGER NOT NULL
) STRICT;

-- One row per stable capacity scope, created when a policy naming it is established.
CREATE TABLE line_capacity (
    scope_kind TEXT NOT NULL CHECK (scope_kind IN ('host', 'purpose', 'peer', 'task')),
    scope_key TEXT NOT NULL,
    ceil_uses INTEGER NOT NULL CHECK (ceil_uses >= 0),
    ceil_app INTEGER NOT NULL CHECK (ceil_app >= 0),
    ceil_net INTEGER NOT NULL CHECK (ceil_net >= 0),
    used_uses INTEGER NOT NULL DEFAULT 0 CHECK (used_uses BETWEEN 0 AND ceil_uses),
    used_app INTEGER NOT NULL DEFAULT 0 CHECK (used_app BETWEEN 0 AND ceil_app),
    reserved_net INTEGER NOT NULL DEFAULT 0 CHECK (reserved_net BETWEEN 0 AND ceil_net),
    accepted_net INTEGER NOT NULL DEFAULT 0 CHECK (accepted_net BETWEEN 0 AND reserved_net),
    created_generation INTEGER NOT NULL REFERENCES line_policy (generation),
    PRIMARY KEY (scope_kind, scope_key)
) STRICT;

-- One row per enrollment (a peer under one purpose, schema, category and endpoint).
CREATE TABLE line_peer (
    enrollment_id TEXT PRIMARY KEY,
    peer_id TEXT NOT NULL,
    purpose TEXT NOT NULL,
    task_schema TEXT NOT NULL,
    category TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    address TEXT NOT NULL,
    hostname TEXT NOT NULL,
    port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
    path TEXT NOT NULL,
    ca_file TEXT NOT NULL,
    ca_sha256 TEXT NOT NULL,
    workload_id TEXT NOT NULL,
    workload_key_sha256 TEXT NOT NULL,
    generation INTEGER NOT NULL REFERENCES line_policy (generation),
    state TEXT NOT NULL CHECK (state IN ('active', 'revoked')),
    pending_mutation TEXT CHECK (pending_mutation IN ('enroll', 'rotate', 'revoke')),
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    UNIQUE (peer_id, purpose, task_schema, category, endpoint)
) STRICT;

-- Versions of a peer's verification key; one active version per peer.
CREATE TABLE line_peer_key (
    peer_id TEXT NOT NULL,
    version INTEGER NOT NULL CHECK (version >= 1),
    key_id TEXT NOT NULL,
    public_key_raw BLOB NOT NULL CHECK (length(public_key_raw) = 32),
    issuer TEXT NOT NULL,
    audience TEXT NOT NULL,
    protocol TEXT NOT NULL,
    assurance TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    valid_from_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL CHECK (expires_at_ms > valid_from_ms),
    state TEXT NOT NULL CHECK (state IN ('active', 'retired', 'revoked')),
    PRIMARY KEY (peer_id, version),
    UNIQUE (peer_id, key_id)
) STRICT;
CREATE UNIQUE INDEX line_peer_key_one_active ON line_peer_key (peer_id) WHERE state = 'active';

-- A task the operator (or the native lab) asked a peer to do: its immutable request and its
-- local state. The foreign id is set once, from an authenticated response only.
CREATE TABLE line_task (
    task_id TEXT PRIMARY KEY,
    owner_kind TEXT NOT NULL CHECK (owner_kind IN ('operator', 'native')),
    startup_id TEXT NOT NULL,
    enrollment_id TEXT NOT NULL REFERENCES line_peer (enrollment_id),
    peer_id TEXT NOT NULL,
    purpose TEXT NOT NULL,
    task_schema TEXT NOT NULL,
    category TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    message_id TEXT NOT NULL UNIQUE,
    body BLOB NOT NULL,
    body_sha256 TEXT NOT NULL,
    source_assertion_json TEXT NOT NULL,
    generation INTEGER NOT NULL REFERENCES line_policy (generation),
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    foreign_task_id TEXT,
    status TEXT NOT NULL,
    adoption_open INTEGER NOT NULL CHECK (adoption_open IN (0, 1)),
    local_disposition TEXT NOT NULL CHECK (
        local_disposition IN ('open', 'adoption_closed', 'adopted'))
) STRICT;

-- One row per physical exchange, inserted in the transaction that charges capacity, before any
-- byte is sent. The charged scope keys are kept so that the ledger equals the sum of exchanges.
CREATE TABLE line_exchange (
    exchange_id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES line_task (task_id),
    seq INTEGER NOT NULL CHECK (seq >= 1),
    operation TEXT NOT NULL CHECK (operation IN ('submit', 'poll', 'cancel')),
    generation INTEGER NOT NULL REFERENCES line_policy (generation),
    host_key TEXT NOT NULL,
    purpose_key TEXT NOT NULL,
    peer_key TEXT NOT NULL,
    task_key TEXT NOT NULL,
    charged_uses INTEGER NOT NULL CHECK (charged_uses = 1),
    charged_app INTEGER NOT NULL CHECK (charged_app >= 0),
    charged_net INTEGER NOT NULL CHECK (charged_net = 524288),
    request_nonce TEXT,
    request_sig_sha256 TEXT,
    outcome TEXT CHECK (
        outcome IN ('authenticated', 'peer_refused', 'undelivered', 'unknown')),
    accepted_net INTEGER CHECK (accepted_net BETWEEN 0 AND charged_net),
    response_key_version INTEGER,
    -- The authenticated response's nonce: a response is accepted at most once.
    response_nonce TEXT UNIQUE,
    charged_at_ms INTEGER NOT NULL,
    settled_at_ms INTEGER,
    UNIQUE (task_id, seq)
) STRICT;

-- Authenticated foreign observations, append-only.
CREATE TABLE line_observation (
    observation_id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES line_task (task_id),
    exchange_id TEXT NOT NULL UNIQUE REFERENCES line_exchange (exchange_id),
    foreign_task_id TEXT NOT NULL,
    foreign_state TEXT NOT NULL,
    key_version INTEGER NOT NULL,
    response_sha256 TEXT NOT NULL,
    adopted INTEGER NOT NULL CHECK (adopted IN (0, 1)),
    result_json TEXT,
    omitted_parts_json TEXT,
    observed_at_ms INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX line_observation_one_adopted ON line_observation (task_id) WHERE adopted = 1;

-- Custody is never deleted (a downgrade drops tables only when they are empty).
CREATE TRIGGER line_host_keep BEFORE DELETE ON line_host
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER line_policy_keep BEFORE DELETE ON line_policy
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER line_capacity_keep BEFORE DELETE ON line_capacity
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER line_peer_keep BEFORE DELETE ON line_peer
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER line_peer_key_keep BEFORE DELETE ON line_peer_key
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER line_task_keep BEFORE DELETE ON line_task
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER line_exchange_keep BEFORE DELETE ON line_exchange
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;
CREATE TRIGGER line_observation_keep BEFORE DELETE ON line_observation
    BEGIN SELECT RAISE(ABORT, 'line custody rows are never deleted'); END;

-- A policy generation never changes once established.
CREATE TRIGGER line_policy_fixed BEFORE UPDATE ON line_policy
    BEGIN SELECT RAISE(ABORT, 'an established policy never changes'); END;

-- Ceilings are fixed; counters never go down (nothing is refunded, nothing reset).
CREATE TRIGGER line_capacity_monotonic BEFORE UPDATE ON line_capacity
    WHEN NEW.scope_kind IS NOT OLD.scope_kind OR NEW.scope_key IS NOT OLD.scope_key
      OR NEW.ceil_uses IS NOT OLD.ceil_uses OR NEW.ceil_app IS NOT OLD.ceil_app
      OR NEW.ceil_net IS NOT OLD.ceil_net
      OR NEW.used_uses < OLD.used_uses OR NEW.used_app < OLD.used_app
      OR NEW.reserved_net < OLD.reserved_net OR NEW.accepted_net < OLD.accepted_net
      OR NEW.created_generation IS NOT OLD.created_generation
    BEGIN SELECT RAISE(ABORT, 'capacity ceilings are fixed and counters never decrease'); END;

-- An exchange's charge is fixed; its outcome and accepted bytes are written once.
CREATE TRIGGER line_exchange_fixed BEFORE UPDATE ON line_exchange
    WHEN NEW.exchange_id IS NOT OLD.exchange_id OR NEW.task_id IS NOT OLD.task_id
      OR NEW.seq IS NOT OLD.seq OR NEW.operation IS NOT OLD.operation
      OR NEW.generation IS NOT OLD.generation OR NEW.host_key IS NOT OLD.host_key
      OR NEW.purpose_key IS NOT OLD.purpose_key OR NEW.peer_key IS NOT OLD.peer_key
      OR NEW.task_key IS NOT OLD.task_key OR NEW.charged_uses IS NOT OLD.charged_uses
      OR NEW.charged_app IS NOT OLD.charged_app OR NEW.charged_net IS NOT OLD.charged_net
      OR NEW.charged_at_ms IS NOT OLD.charged_at_ms
      OR (OLD.outcome IS NOT NULL AND NEW.outcome IS NOT OLD.outcome)
      OR (OLD.accepted_net IS NOT NULL AND NEW.accepted_net IS NOT OLD.accepted_net)
      OR (OLD.response_nonce IS NOT NULL AND NEW.response_nonce IS NOT OLD.response_nonce)
      OR (OLD.request_nonce IS NOT NULL AND NEW.request_nonce IS NOT OLD.request_nonce)
    BEGIN SELECT RAISE(ABORT, 'an exchange charge is fixed and settles once'); END;

-- Observations are append-only.
CREATE TRIGGER line_observation_fixed BEFORE UPDATE ON line_observation
    BEGIN SELECT RAISE(ABORT, 'an observation never changes'); END;
