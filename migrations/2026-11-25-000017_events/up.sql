-- The event log (decision 0058): every change an agent may hear of is written here by a trigger in
-- the transaction that makes it, whichever path makes it (the server, agentctl, a job).

-- Where each agent's log stands: the last `seq` given, and the last one retention removed (a
-- reader asking for an older position is told to start again from the oldest kept).
CREATE TABLE agent_event_counters (
    agent_id       uuid PRIMARY KEY REFERENCES agents (id),
    last_seq       bigint NOT NULL,
    pruned_through bigint NOT NULL DEFAULT 0
);

CREATE TABLE events (
    agent_id   uuid NOT NULL REFERENCES agents (id),
    seq        bigint NOT NULL,
    id         uuid NOT NULL UNIQUE,
    type       text NOT NULL,
    -- The change as stored (an intent's row, a message's few fields); rendered by the server.
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (agent_id, seq)
);
CREATE INDEX events_created_at ON events (created_at);

-- An agent's webhook endpoints (at most 10, checked by the store).
CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY,
    agent_id        uuid NOT NULL REFERENCES agents (id),
    url             text NOT NULL,
    -- NULL: every type.
    types           text[],
    description     text,
    enabled         boolean NOT NULL DEFAULT true,
    disabled_reason text,
    -- Since when every attempt to it has failed; NULL once one succeeds.
    failing_since   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_agent ON webhook_endpoints (agent_id, created_at, id);

-- Every secret that signs for an endpoint: the newest, and after a rotation the one before it
-- until `signs_until`.
CREATE TABLE webhook_secrets (
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    secret      text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    signs_until timestamptz,
    PRIMARY KEY (endpoint_id, created_at)
);

-- The delivery queue: one row per event and endpoint, a leased queue's table (decision 0052).
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY,
    endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    agent_id        uuid NOT NULL,
    event_seq       bigint NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    -- The schedule's attempt times count from the first attempt, whenever it came.
    first_attempted_at timestamptz,
    next_attempt_at timestamptz NOT NULL,
    lease_id        uuid,
    lease_until     timestamptz,
    last_error      text,
    created_at      timestamptz NOT NULL,
    FOREIGN KEY (agent_id, event_seq) REFERENCES events (agent_id, seq) ON DELETE CASCADE
) WITH (fillfactor = 70);
-- No index on the lease: a claim then changes no indexed column and is a heap-only update (room
-- left on each page for it), so the due index does not fill with entries of leased rows that
-- every claim after would step over. A release by lease, rare, reads the pending rows instead.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (agent_id, event_seq);

-- What each attempt came to, newest first per endpoint.
CREATE TABLE webhook_attempts (
    id           uuid PRIMARY KEY,
    delivery_id  uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    endpoint_id  uuid NOT NULL,
    event_id     uuid NOT NULL,
    event_type   text NOT NULL,
    attempt      integer NOT NULL,
    status_code  integer,
    error        text,
    duration_ms  integer NOT NULL,
    attempted_at timestamptz NOT NULL
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, attempted_at DESC, id DESC);

-- Writes one event of `agent`: the next `seq` under the agent's counter row, held to commit, so
-- a reader following `seq` never sees a later number before an earlier one commits; a delivery
-- for every enabled endpoint that wants the type; and a wake-up for streams and deliverers.
CREATE FUNCTION record_event(agent uuid, event_type text, stored jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    next_seq bigint;
    at timestamptz;
    queued integer;
BEGIN
    INSERT INTO agent_event_counters AS counter (agent_id, last_seq) VALUES (agent, 1)
    ON CONFLICT (agent_id) DO UPDATE SET last_seq = counter.last_seq + 1
    RETURNING last_seq INTO next_seq;
    at := clock_timestamp();
    INSERT INTO events (agent_id, seq, id, type, data, created_at)
    VALUES (agent, next_seq, gen_random_uuid(), event_type, stored, at);
    INSERT INTO webhook_deliveries (id, endpoint_id, agent_id, event_seq, next_attempt_at, created_at)
    SELECT gen_random_uuid(), endpoint.id, agent, next_seq, at, at
    FROM webhook_endpoints AS endpoint
    WHERE endpoint.agent_id = agent AND endpoint.enabled
      AND (endpoint.types IS NULL OR event_type = ANY (endpoint.types));
    GET DIAGNOSTICS queued = ROW_COUNT;
    PERFORM pg_notify('agent_runtime_events', 'events:' || agent::text);
    IF queued > 0 THEN
        PERFORM pg_notify('agent_runtime_events', 'webhook-deliveries');
    END IF;
END
$$;

-- An intent as stored: its row's columns under their names, the amount as text so that no
-- digit is lost.
CREATE FUNCTION transfer_intents_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM record_event(NEW.agent_id,
        'transfer_intent.' || CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE NEW.status END,
        jsonb_build_object(
            'id', NEW.id, 'agent_id', NEW.agent_id, 'wallet_id', NEW.wallet_id,
            'status', NEW.status, 'asset', NEW.asset, 'chain', NEW.chain,
            'token_address', NEW.token_address, 'recipient_address', NEW.recipient_address,
            'amount_atomic', NEW.amount_atomic::text, 'idempotency_key', NEW.idempotency_key,
            'tx_hash', NEW.tx_hash, 'failure_reason', NEW.failure_reason,
            'created_at', NEW.created_at, 'updated_at', NEW.updated_at,
            'confirmed_at', NEW.confirmed_at, 'decided_by', NEW.decided_by));
    RETURN NULL;
END
$$;

CREATE FUNCTION email_messages_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.direction = 'inbound' THEN
        PERFORM record_event(NEW.agent_id, 'email.received', jsonb_build_object(
            'message_id', NEW.id, 'thread_id', NEW.thread_id, 'from', NEW.from_address,
            'subject', NEW.subject, 'verification_codes', to_jsonb(NEW.verification_codes)));
    ELSIF NEW.status = 'sent' THEN
        PERFORM record_event(NEW.agent_id, 'email.sent', jsonb_build_object(
            'message_id', NEW.id, 'provider_message_id', NEW.provider_message_id));
    ELSIF NEW.status = 'failed' THEN
        PERFORM record_event(NEW.agent_id, 'email.failed', jsonb_build_object(
            'message_id', NEW.id, 'reason', NEW.last_error));
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION sms_messages_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM record_event(NEW.agent_id, 'sms.received', jsonb_build_object(
        'message_id', NEW.id, 'from_number', NEW.from_number, 'to_number', NEW.to_number,
        'code', NEW.parsed_code));
    RETURN NULL;
END
$$;

-- Deferred to commit, as the listing counts are (migration 000012): the agent's counter row is
-- locked after every other lock its transaction takes, so it is held only while committing and
-- never while waiting for another lock. Names order the triggers of one change: `…_versioned`
-- (the listing count) fires before `…_zz_evented`.
CREATE CONSTRAINT TRIGGER transfer_intents_zz_evented_insert
    AFTER INSERT ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION transfer_intents_event();
CREATE CONSTRAINT TRIGGER transfer_intents_zz_evented_update
    AFTER UPDATE OF status ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status)
    EXECUTE FUNCTION transfer_intents_event();
CREATE CONSTRAINT TRIGGER email_messages_zz_evented_insert
    AFTER INSERT ON email_messages
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.direction = 'inbound')
    EXECUTE FUNCTION email_messages_event();
CREATE CONSTRAINT TRIGGER email_messages_zz_evented_update
    AFTER UPDATE OF status ON email_messages
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status AND NEW.status IN ('sent', 'failed'))
    EXECUTE FUNCTION email_messages_event();
CREATE CONSTRAINT TRIGGER sms_messages_zz_evented
    AFTER INSERT ON sms_messages
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.direction = 'inbound')
    EXECUTE FUNCTION sms_messages_event();
