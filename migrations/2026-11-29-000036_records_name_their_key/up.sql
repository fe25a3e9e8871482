-- Intents, sent mail and events record the agent key that caused them (the keys contract,
-- decision 0083): the key that made the intent or the mail, and their events after it. `NULL`
-- for what no key caused (inbound mail, SMS) and what was made before keys were recorded. No
-- foreign key: a send would take a share lock on its key's row, which every send of that key
-- shares.
ALTER TABLE transfer_intents ADD COLUMN key_id uuid;
ALTER TABLE email_messages ADD COLUMN key_id uuid;
ALTER TABLE events ADD COLUMN key_id uuid;

DROP FUNCTION record_event(uuid, text, jsonb);
CREATE FUNCTION record_event(agent uuid, event_type text, stored jsonb, key uuid DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    next_seq bigint;
    at timestamptz;
    queued integer;
    watched timestamptz;
BEGIN
    INSERT INTO agent_event_counters AS counter (agent_id, last_seq) VALUES (agent, 1)
    ON CONFLICT (agent_id) DO UPDATE SET last_seq = counter.last_seq + 1
    RETURNING last_seq, watched_until INTO next_seq, watched;
    at := clock_timestamp();
    INSERT INTO events (agent_id, seq, id, type, data, created_at, key_id)
    VALUES (agent, next_seq, gen_random_uuid(), event_type, stored, at, key);
    INSERT INTO webhook_deliveries (id, endpoint_id, agent_id, event_seq, next_attempt_at, created_at)
    SELECT gen_random_uuid(), endpoint.id, agent, next_seq, at, at
    FROM webhook_endpoints AS endpoint
    JOIN agents AS owner ON owner.id = endpoint.agent_id
    WHERE endpoint.agent_id = agent AND endpoint.enabled
      AND owner.is_active AND agent_key_live(agent, endpoint.agent_key_hash)
      AND (endpoint.types IS NULL OR event_type = ANY (endpoint.types));
    GET DIAGNOSTICS queued = ROW_COUNT;
    IF queued > 0 THEN
        PERFORM webhook_turn_comes(agent, at);
    END IF;
    -- `now()`, the transaction's start, is never later than the clock: a lease judged by it
    -- lapses late, never early.
    IF watched > now()
        OR (SELECT every.watched_until > now() FROM every_agent_watch AS every) THEN
        PERFORM pg_notify('agent_runtime_events', 'events:' || agent::text);
    END IF;
    IF queued > 0 THEN
        PERFORM pg_notify('agent_runtime_events', 'webhook-deliveries');
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION transfer_intents_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    intent jsonb := jsonb_build_object(
        'id', NEW.id, 'agent_id', NEW.agent_id, 'wallet_id', NEW.wallet_id,
        'status', NEW.status, 'asset', NEW.asset, 'chain', NEW.chain,
        'token_address', NEW.token_address, 'recipient_address', NEW.recipient_address,
        'amount_atomic', NEW.amount_atomic::text, 'idempotency_key', NEW.idempotency_key,
        'tx_hash', NEW.tx_hash, 'failure_reason', NEW.failure_reason,
        'created_at', NEW.created_at, 'updated_at', NEW.updated_at,
        'confirmed_at', NEW.confirmed_at, 'decided_by', NEW.decided_by,
        'confirmed_by', NEW.confirmed_by, 'approvals_required', NEW.approvals_required,
        'approvals_received', NEW.approvals_received);
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM record_event(NEW.agent_id, 'transfer_intent.created', intent, NEW.key_id);
        -- One the policy confirmed at its creation has entered `confirmed` too.
        IF NEW.status <> 'pending_confirmation' THEN
            PERFORM record_event(NEW.agent_id, 'transfer_intent.' || NEW.status, intent, NEW.key_id);
        END IF;
    ELSE
        PERFORM record_event(NEW.agent_id, 'transfer_intent.' || NEW.status, intent, NEW.key_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION email_messages_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.direction = 'inbound' THEN
        PERFORM record_event(NEW.agent_id, 'email.received', jsonb_build_object(
            'message_id', NEW.id, 'thread_id', NEW.thread_id,
            'from', left(NEW.from_address, 320), 'subject', left(NEW.subject, 256),
            'verification_codes', to_jsonb(coalesce(NEW.verification_codes[1:10], '{}')),
            'attachment_count', jsonb_array_length(NEW.attachments)));
    ELSIF NEW.status = 'sent' THEN
        PERFORM record_event(NEW.agent_id, 'email.sent', jsonb_build_object(
            'message_id', NEW.id, 'provider_message_id', NEW.provider_message_id), NEW.key_id);
    ELSIF NEW.status = 'failed' THEN
        PERFORM record_event(NEW.agent_id, 'email.failed', jsonb_build_object(
            'message_id', NEW.id, 'reason', left(NEW.last_error, 512)), NEW.key_id);
    END IF;
    RETURN NULL;
END
$$;
