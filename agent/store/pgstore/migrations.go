package pgstore

// migrations are the schema's versions in order: migrations[i] brings a
// database from version i to i+1. Never edit one that was released; add
// the next.
var migrations = []string{
	schemaV1,
	schemaV2,
	schemaV3,
	schemaV4,
	schemaV5,
	schemaV6,
}

// CurrentSchema is the schema version this h9 writes.
var CurrentSchema = len(migrations)

// schemaV1: the storage the agent and the bot share with the bbolt backend.
const schemaV1 = `
CREATE TABLE h9_agent_sessions (
	id       text COLLATE "C" PRIMARY KEY,
	messages integer NOT NULL DEFAULT 0,
	todos    bytea,
	state    bytea
);
CREATE TABLE h9_agent_messages (
	session_id text COLLATE "C" NOT NULL,
	idx        integer NOT NULL,
	body       bytea NOT NULL,
	PRIMARY KEY (session_id, idx)
);
CREATE TABLE h9_sessions (
	id      text COLLATE "C" PRIMARY KEY,
	team    text COLLATE "C" NOT NULL,
	channel text COLLATE "C" NOT NULL,
	thread  text COLLATE "C" NOT NULL,
	owner   text COLLATE "C" NOT NULL,
	active  boolean NOT NULL,
	updated timestamptz NOT NULL,
	data    bytea NOT NULL,
	CONSTRAINT h9_sessions_one_per_thread UNIQUE (channel, thread)
);
CREATE INDEX h9_sessions_by_owner ON h9_sessions (owner, updated DESC, thread DESC);
CREATE INDEX h9_sessions_active ON h9_sessions (id) WHERE active;
CREATE TABLE h9_dedup (
	key     text COLLATE "C" PRIMARY KEY,
	claimed timestamptz NOT NULL
);
CREATE INDEX h9_dedup_by_claim ON h9_dedup (claimed);
CREATE TABLE h9_channel_settings (
	channel text COLLATE "C" NOT NULL,
	key     text COLLATE "C" NOT NULL,
	value   text NOT NULL,
	PRIMARY KEY (channel, key)
);
-- h9_append_step stores one step of an agent session in one statement:
-- it locks the session's row, refuses a step that does not start at the
-- end of its history (SQLSTATE H9C01, undoing its transaction), appends
-- the messages and sets the todos and state when given (NULL: unchanged).
CREATE FUNCTION h9_append_step(session text, first integer, bodies bytea[], new_todos bytea, new_state bytea)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE n integer;
BEGIN
	IF first = 0 THEN
		INSERT INTO h9_agent_sessions (id) VALUES (session) ON CONFLICT DO NOTHING;
	END IF;
	SELECT messages INTO n FROM h9_agent_sessions WHERE id = session FOR UPDATE;
	IF coalesce(n, -1) <> first THEN
		RAISE EXCEPTION 'step starts at message %, the history holds %', first, coalesce(n, 0)
			USING ERRCODE = 'H9C01';
	END IF;
	INSERT INTO h9_agent_messages (session_id, idx, body)
		SELECT session, first + m.i - 1, m.body FROM unnest(bodies) WITH ORDINALITY AS m(body, i);
	UPDATE h9_agent_sessions SET messages = first + coalesce(cardinality(bodies), 0),
		todos = coalesce(new_todos, todos), state = coalesce(new_state, state)
		WHERE id = session;
END $$;
`

// schemaV2: leases, with which replicas share sessions (lease.go, fence.go).
const schemaV2 = `
CREATE SEQUENCE h9_lease_tokens;
CREATE TABLE h9_leases (
	channel text COLLATE "C" NOT NULL,
	thread  text COLLATE "C" NOT NULL,
	owner   text COLLATE "C" NOT NULL,
	token   bigint NOT NULL,
	expires timestamptz NOT NULL,
	PRIMARY KEY (channel, thread)
);
CREATE INDEX h9_leases_by_owner ON h9_leases (owner);
-- h9_fence locks a lease row for the rest of the transaction (so a
-- takeover waits for the write) and raises H9F01 unless the lease is
-- still the caller's hold, unexpired by the database's clock.
CREATE FUNCTION h9_fence(c text, t text, o text, tok bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM h9_leases
		WHERE channel = c AND thread = t AND owner = o AND token = tok AND expires > now()
		FOR SHARE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'the lease on %/% is no longer held by % with token %', c, t, o, tok
			USING ERRCODE = 'H9F01';
	END IF;
END $$;
`

// schemaV3: the threads' inboxes, through which replicas hand each other
// what Slack sent to the wrong one (inbox.go).
const schemaV3 = `
CREATE TABLE h9_inbox (
	id      bigserial PRIMARY KEY,
	channel text COLLATE "C" NOT NULL,
	thread  text COLLATE "C" NOT NULL,
	item    bytea NOT NULL,
	posted  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX h9_inbox_by_thread ON h9_inbox (channel, thread, id);
`

// schemaV4: a session write and its fence in one statement (fence.go):
// the hot writes, a step and a record, each send one statement rather
// than h9_fence then the write. A NULL owner means a store without
// replicas: no fence.
const schemaV4 = `
CREATE FUNCTION h9_fenced_step(c text, t text, o text, tok bigint,
	session text, first integer, bodies bytea[], new_todos bytea, new_state bytea)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF o IS NOT NULL THEN
		PERFORM h9_fence(c, t, o, tok);
	END IF;
	PERFORM h9_append_step(session, first, bodies, new_todos, new_state);
END $$;
CREATE FUNCTION h9_put_session(o text, tok bigint, sid text, tm text, c text, t text,
	own text, act boolean, upd timestamptz, d bytea)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF o IS NOT NULL THEN
		PERFORM h9_fence(c, t, o, tok);
	END IF;
	INSERT INTO h9_sessions (id, team, channel, thread, owner, active, updated, data)
		VALUES (sid, tm, c, t, own, act, upd, d)
		ON CONFLICT (id) DO UPDATE SET team = EXCLUDED.team, channel = EXCLUDED.channel,
		thread = EXCLUDED.thread, owner = EXCLUDED.owner, active = EXCLUDED.active,
		updated = EXCLUDED.updated, data = EXCLUDED.data;
END $$;
`

// schemaV5: new sessions' commands between the command and the first
// commit of their record (starts.go).
const schemaV5 = `
CREATE TABLE h9_starts (
	id      text COLLATE "C" PRIMARY KEY,
	channel text COLLATE "C" NOT NULL,
	at      timestamptz NOT NULL,
	data    bytea NOT NULL
);
`

// schemaV6: automations' occurrences and states (automations.go).
const schemaV6 = `
CREATE TABLE h9_automation_occurrences (
	automation text COLLATE "C" NOT NULL,
	key        text COLLATE "C" NOT NULL,
	state      text COLLATE "C" NOT NULL,
	dedupe     text NOT NULL,
	channel    text NOT NULL,
	thread     text NOT NULL,
	cause      text NOT NULL,
	data       bytea,
	recorded   timestamptz NOT NULL,
	owner      text NOT NULL,
	claimed    timestamptz NOT NULL,
	version    bigint NOT NULL,
	PRIMARY KEY (automation, key)
);
CREATE INDEX h9_automation_occurrences_pending ON h9_automation_occurrences (state, claimed)
	WHERE state IN ('recorded', 'queued');
CREATE INDEX h9_automation_occurrences_by_recorded ON h9_automation_occurrences (recorded);
CREATE TABLE h9_automation_states (
	name    text COLLATE "C" PRIMARY KEY,
	version bigint NOT NULL,
	day     text NOT NULL,
	spent   bigint NOT NULL,
	data    bytea NOT NULL
);
`
