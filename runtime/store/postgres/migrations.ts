// Numbered PostgreSQL migrations, applied under an advisory lock so several Spool processes
// starting at once migrate exactly once. Times are bigint epoch ms (the same values the Clock
// gives), payloads bytea, headers json (migration 4) and trace jsonb.

export interface Migration {
  version: number;
  sql: string;
}

/** Stripes of the active-depth counter: concurrent transactions update different rows. */
export const DEPTH_SLOTS = 16;

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE messages (
  id text PRIMARY KEY,
  route text NOT NULL,
  target text NOT NULL,
  state text NOT NULL CHECK (state IN ('queued','leased','delivered','dead','canceled')),
  received_at bigint NOT NULL,
  -- queued: when it becomes ready; leased: lease_until; delivered/dead: when it got there.
  next_run_at bigint NOT NULL,
  attempt integer NOT NULL DEFAULT 0,
  lease_id text UNIQUE,
  lease_until bigint,
  dead_reason text,
  payload bytea NOT NULL,
  headers jsonb NOT NULL,
  trace jsonb
);
CREATE INDEX messages_ready ON messages (route, next_run_at, received_at, id) WHERE state = 'queued';
CREATE INDEX messages_ready_target ON messages (route, target, next_run_at, received_at, id) WHERE state = 'queued';
CREATE INDEX messages_lease_expiry ON messages (lease_until) WHERE state = 'leased';
CREATE INDEX messages_received ON messages (received_at, id);
CREATE INDEX messages_state_received ON messages (state, received_at, id);
CREATE INDEX messages_settled ON messages (state, next_run_at) WHERE state IN ('delivered', 'dead');

-- Active depth (queued + leased), striped by backend so acks on different connections do not
-- queue behind one counter row; admission sums the stripes under an advisory lock.
CREATE TABLE queue_depth (slot integer PRIMARY KEY, active bigint NOT NULL DEFAULT 0);
INSERT INTO queue_depth (slot, active) SELECT g, 0 FROM generate_series(0, ${DEPTH_SLOTS - 1}) AS g;

CREATE FUNCTION spool_depth_apply(delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF delta <> 0 THEN
    UPDATE queue_depth SET active = active + delta WHERE slot = pg_backend_pid() % ${DEPTH_SLOTS};
  END IF;
END $$;
CREATE FUNCTION spool_depth_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM spool_depth_apply((SELECT count(*) FROM new_rows WHERE state IN ('queued', 'leased')));
  RETURN NULL;
END $$;
CREATE FUNCTION spool_depth_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM spool_depth_apply(-(SELECT count(*) FROM old_rows WHERE state IN ('queued', 'leased')));
  RETURN NULL;
END $$;
CREATE FUNCTION spool_depth_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM spool_depth_apply(
    (SELECT count(*) FROM new_rows WHERE state IN ('queued', 'leased'))
    - (SELECT count(*) FROM old_rows WHERE state IN ('queued', 'leased')));
  RETURN NULL;
END $$;
CREATE TRIGGER messages_depth_insert AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION spool_depth_after_insert();
CREATE TRIGGER messages_depth_delete AFTER DELETE ON messages
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION spool_depth_after_delete();
CREATE TRIGGER messages_depth_update AFTER UPDATE ON messages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION spool_depth_after_update();

-- Settled leases, shared by every instance, so a repeated ack reaching another instance still
-- succeeds within the 2-minute window (docs/decisions.md D19).
CREATE TABLE settled_leases (
  lease_id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('ack', 'nack')),
  settled_at bigint NOT NULL
);
CREATE INDEX settled_leases_at ON settled_leases (settled_at);

CREATE TABLE attempts (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  message_id text NOT NULL,
  route text NOT NULL,
  target text NOT NULL,
  attempt integer NOT NULL,
  status_code integer,
  error text,
  outcome text NOT NULL CHECK (outcome IN ('acked','retry','dead')),
  dead_reason text,
  created_at bigint NOT NULL
);
CREATE INDEX attempts_created ON attempts (created_at, seq);
CREATE INDEX attempts_message ON attempts (message_id, created_at);
CREATE INDEX attempts_route ON attempts (route, target, created_at);

CREATE TABLE trend_samples (
  captured_at bigint NOT NULL,
  route text NOT NULL,
  target text NOT NULL,
  queued bigint NOT NULL,
  leased bigint NOT NULL,
  dead bigint NOT NULL
);
CREATE INDEX trend_samples_captured ON trend_samples (captured_at);
`,
  },
  {
    // A dead-lettering nack is remembered as its own kind (settled-leases.ts SettleKind), so a
    // repeat succeeds only as the same kind of nack.
    version: 2,
    sql: `
ALTER TABLE settled_leases DROP CONSTRAINT IF EXISTS settled_leases_kind_check;
ALTER TABLE settled_leases ADD CONSTRAINT settled_leases_kind_check CHECK (kind IN ('ack', 'nack', 'dead'));
`,
  },
  {
    // A settled lease remembers its route, so a repeat through another route is lease_not_found
    // like any foreign lease (docs/decisions.md D19); rows from before name none.
    version: 3,
    sql: "ALTER TABLE settled_leases ADD COLUMN IF NOT EXISTS route text;",
  },
  {
    // Captured headers as json, which keeps the text (and so the order the sender's headers came
    // in), instead of jsonb, which orders an object's keys shortest first: a dequeue on PostgreSQL
    // listed them differently from SQLite and memory. Rewrites the table once; rows stored before
    // keep jsonb's order. An older instance still running inserts jsonb, which PostgreSQL casts on
    // assignment.
    version: 4,
    sql: "ALTER TABLE messages ALTER COLUMN headers TYPE json USING headers::json;",
  },
  {
    // Runtime secret versions (docs/secrets.md): AES-256-GCM sealed values, never plaintext,
    // shared by every instance of the schema.
    version: 5,
    sql: `
CREATE TABLE IF NOT EXISTS runtime_secrets (
  pool_name text NOT NULL,
  id text NOT NULL,
  sealed bytea NOT NULL,
  not_before bigint NOT NULL,
  not_after bigint,
  created_at bigint NOT NULL,
  PRIMARY KEY (pool_name, id)
);
`,
  },
  {
    // Only leased messages (and queued ones whose lease ran out) hold a lease id: the unique index
    // on it skips the NULLs, so an enqueue writes one b-tree entry fewer per message (it wrote one
    // for every queued row). The settle statements say `lease_id IS NOT NULL`, so their plans may
    // use it (docs/decisions.md D70).
    version: 6,
    sql: `
ALTER TABLE messages DROP CONSTRAINT IF EXISTS messages_lease_id_key;
CREATE UNIQUE INDEX IF NOT EXISTS messages_lease_id ON messages (lease_id) WHERE lease_id IS NOT NULL;`,
  },
  {
    // A lease writes a new version of its row, and PostgreSQL adds an entry for it to every index
    // whose predicate the new version meets. messages_state_received (state, received_at, id) took
    // one on every lease; it becomes two partial indexes that a lease never enters: the queued rows
    // in received order (enqueue writes this entry instead) and the settled states. A lease now
    // writes four index entries instead of five (docs/decisions.md D79).
    version: 7,
    sql: `
CREATE INDEX IF NOT EXISTS messages_queued_received ON messages (received_at, id) WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS messages_settled_received ON messages (state, received_at, id) WHERE state IN ('delivered', 'dead', 'canceled');
DROP INDEX IF EXISTS messages_state_received;`,
  },
];

export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1].version;
