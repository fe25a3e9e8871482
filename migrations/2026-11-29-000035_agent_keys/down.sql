-- The audit rows of keys stay: the log is append-only, so the wider check stays with them.
ALTER TABLE agents ADD COLUMN key_hash bytea;
UPDATE agents AS agent SET key_hash = key.key_hash
FROM agent_keys AS key
WHERE key.agent_id = agent.id AND key.is_first AND key.revoked_at IS NULL;
UPDATE agents SET key_hash = sha256(id::text::bytea) WHERE key_hash IS NULL;
ALTER TABLE agents ALTER COLUMN key_hash SET NOT NULL,
    ADD CONSTRAINT agents_key_hash_key UNIQUE (key_hash),
    ADD CONSTRAINT agents_key_hash_is_sha256 CHECK (octet_length(key_hash) = 32);
DROP TRIGGER agents_deactivated ON agents;
CREATE TRIGGER agents_key_revoked AFTER UPDATE OF is_active, key_hash ON agents
    FOR EACH ROW
    WHEN (NOT NEW.is_active AND OLD.is_active OR NEW.key_hash IS DISTINCT FROM OLD.key_hash)
    EXECUTE FUNCTION agent_key_revoked();

CREATE OR REPLACE FUNCTION claim_webhook_delivery(lease uuid, lease_for interval, full_agents uuid[])
RETURNS TABLE (delivery_id uuid, owner uuid, endpoint uuid, attempts integer,
               age double precision, url text, secrets text[], seq bigint, event_id uuid,
               event_type text, data jsonb, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    looked_at uuid[] := full_agents;
    turn_agent uuid;
    chosen uuid;
BEGIN
    LOOP
        SELECT turn.agent_id INTO turn_agent FROM webhook_turns AS turn
        WHERE turn.turn_at <= now() AND turn.agent_id <> ALL (looked_at)
        ORDER BY turn.turn_at, turn.agent_id
        LIMIT 1
        FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        looked_at := looked_at || turn_agent;
        SELECT delivery.id INTO chosen
        FROM webhook_deliveries AS delivery
        JOIN webhook_endpoints AS hook ON hook.id = delivery.endpoint_id AND hook.enabled
        JOIN agents AS agent ON agent.id = delivery.agent_id AND agent.is_active
            AND agent.key_hash = hook.agent_key_hash
        WHERE delivery.agent_id = turn_agent AND delivery.status = 'pending'
          AND delivery.next_attempt_at <= now()
          AND (delivery.lease_until IS NULL OR delivery.lease_until < now())
        ORDER BY delivery.next_attempt_at, delivery.id
        LIMIT 1
        FOR UPDATE OF delivery SKIP LOCKED;
        IF chosen IS NOT NULL THEN
            UPDATE webhook_turns SET turn_at = now() WHERE agent_id = turn_agent;
            UPDATE webhook_deliveries AS delivery
            SET lease_id = lease, lease_until = now() + lease_for,
                attempts = delivery.attempts + 1,
                first_attempted_at = coalesce(delivery.first_attempted_at, now())
            WHERE delivery.id = chosen;
            RETURN QUERY
            SELECT delivery.id, delivery.agent_id, delivery.endpoint_id, delivery.attempts,
                extract(epoch FROM now() - delivery.first_attempted_at)::float8, hook.url,
                ARRAY(SELECT secret.secret FROM webhook_secrets AS secret
                      WHERE secret.endpoint_id = delivery.endpoint_id
                        AND (secret.signs_until IS NULL OR secret.signs_until > now())
                      ORDER BY secret.created_at DESC),
                event.seq, event.id, event.type, event.data, event.created_at
            FROM webhook_deliveries AS delivery
            JOIN webhook_endpoints AS hook ON hook.id = delivery.endpoint_id
            JOIN events AS event
                ON event.agent_id = delivery.agent_id AND event.seq = delivery.event_seq
            WHERE delivery.id = chosen;
            RETURN;
        END IF;
        UPDATE webhook_turns SET turn_at = webhook_next_turn(turn_agent)
        WHERE agent_id = turn_agent;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION record_event(agent uuid, event_type text, stored jsonb) RETURNS void
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
    INSERT INTO events (agent_id, seq, id, type, data, created_at)
    VALUES (agent, next_seq, gen_random_uuid(), event_type, stored, at);
    INSERT INTO webhook_deliveries (id, endpoint_id, agent_id, event_seq, next_attempt_at, created_at)
    SELECT gen_random_uuid(), endpoint.id, agent, next_seq, at, at
    FROM webhook_endpoints AS endpoint
    JOIN agents AS owner ON owner.id = endpoint.agent_id
    WHERE endpoint.agent_id = agent AND endpoint.enabled
      AND owner.is_active AND owner.key_hash = endpoint.agent_key_hash
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

DROP TABLE agent_keys;
DROP FUNCTION agent_keys_revoked();
DROP FUNCTION agent_key_live(uuid, bytea);
