-- An agent holds several keys (the keys contract, decision 0083): each a row with its scopes,
-- optional expiry, the key that made it and its depth below the first key; the hash moves here
-- from `agents`. The key made with the agent and a rotated one are `is_first`: every scope, no
-- expiry, one live per agent. A key the operator makes has no parent and depth 0 too.
CREATE TABLE agent_keys (
    id           uuid PRIMARY KEY,
    agent_id     uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    key_hash     bytea NOT NULL,
    label        text,
    scopes       text[] NOT NULL,
    expires_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    parent_id    uuid REFERENCES agent_keys (id),
    depth        smallint NOT NULL,
    is_first     boolean NOT NULL DEFAULT false,
    revoked_at   timestamptz,
    CONSTRAINT agent_keys_key_hash_key UNIQUE (key_hash),
    CONSTRAINT agent_keys_key_hash_is_sha256 CHECK (octet_length(key_hash) = 32),
    CONSTRAINT agent_keys_depth_in_range CHECK (depth BETWEEN 0 AND 4),
    CONSTRAINT agent_keys_made_by_a_key_below_it CHECK ((parent_id IS NULL) = (depth = 0)),
    CONSTRAINT agent_keys_first_holds_all CHECK (NOT is_first OR (parent_id IS NULL AND expires_at IS NULL))
);
CREATE INDEX agent_keys_live_by_agent ON agent_keys (agent_id, created_at) WHERE revoked_at IS NULL;
CREATE INDEX agent_keys_by_parent ON agent_keys (parent_id) WHERE parent_id IS NOT NULL;
CREATE UNIQUE INDEX agent_keys_one_live_first ON agent_keys (agent_id)
    WHERE is_first AND revoked_at IS NULL;

INSERT INTO agent_keys (id, agent_id, key_hash, scopes, created_at, depth, is_first)
SELECT gen_random_uuid(), agent.id, agent.key_hash,
       ARRAY['agent:read', 'email:read', 'email:send', 'sms:read', 'codes:read', 'wallet:read',
             'wallet:pay', 'events:read', 'webhooks:manage', 'keys:manage'],
       agent.updated_at, 0, true
FROM agents AS agent;

-- Whether `hash` is a live key of `agent`: not revoked, not expired by the transaction's clock.
CREATE FUNCTION agent_key_live(agent uuid, hash bytea) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM agent_keys AS key
        WHERE key.key_hash = hash AND key.agent_id = agent AND key.revoked_at IS NULL
          AND (key.expires_at IS NULL OR key.expires_at > now()))
$$;

-- A webhook endpoint is delivered to while the key that made it is live (decision 0072).
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
            AND agent_key_live(agent.id, hook.agent_key_hash)
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

-- A revoked key ends the agent's waits and streams on every instance (migration 000013), and
-- empties the caches of authenticated keys (migration 000011).
CREATE FUNCTION agent_keys_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agent_runtime_events', 'revoked:' || NEW.agent_id::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER agent_keys_revoked AFTER UPDATE OF revoked_at ON agent_keys
    FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
    EXECUTE FUNCTION agent_keys_revoked();
-- Not `last_used_at`, which moves once a minute for a key in use; a new key was never cached.
CREATE TRIGGER agent_keys_profile_changed
    AFTER DELETE OR UPDATE OF revoked_at, scopes, expires_at, label, key_hash ON agent_keys
    FOR EACH STATEMENT EXECUTE FUNCTION agent_profiles_changed();

DROP TRIGGER agents_key_revoked ON agents;
CREATE TRIGGER agents_deactivated AFTER UPDATE OF is_active ON agents
    FOR EACH ROW WHEN (OLD.is_active AND NOT NEW.is_active)
    EXECUTE FUNCTION agent_key_revoked();
ALTER TABLE agents DROP COLUMN key_hash;

-- Every key made or revoked is audited; a key's own action names it `key:<id>`.
ALTER TABLE operator_audit DROP CONSTRAINT operator_audit_action_check;
ALTER TABLE operator_audit ADD CONSTRAINT operator_audit_action_check
    CHECK (action IN ('invite', 'enroll', 'login', 'logout', 'disable', 'approve', 'reject',
        'create', 'deactivate', 'rotate', 'policy_change', 'token_issue', 'token_revoke',
        'token_use', 'key_create', 'key_revoke'));
