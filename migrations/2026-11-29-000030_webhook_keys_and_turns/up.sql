-- Webhooks hardened: an endpoint is the agent key's that made it (decision 0072), deliveries
-- are claimed round-robin by agent (decision 0073), and the deliveries log says why an attempt
-- failed in fixed words.

-- The SHA-256 of the agent key that created the endpoint, or enabled it again: it is delivered
-- to only while that key is the agent's and the agent is active.
ALTER TABLE webhook_endpoints ADD COLUMN agent_key_hash bytea
    CONSTRAINT webhook_endpoints_agent_key_hash_is_sha256 CHECK (octet_length(agent_key_hash) = 32);

-- Endpoints made before the key was recorded: one created after its agent's row last changed
-- (`agents.updated_at` moves only when the agent is deactivated or its key rotated) was made by
-- the key in force, which it keeps. Any other may be a rotated key's: it is disabled, and the
-- agent's key enables it again if the agent wants it.
UPDATE webhook_endpoints AS endpoint SET agent_key_hash = agent.key_hash
FROM agents AS agent
WHERE agent.id = endpoint.agent_id AND agent.is_active AND endpoint.created_at > agent.updated_at;

UPDATE webhook_endpoints AS endpoint SET enabled = false, disabled_reason = CASE
        WHEN agent.is_active THEN 'created before endpoints recorded their agent key, and the key may have been rotated since; enable it again to keep it'
        ELSE 'the agent was deactivated'
    END
FROM agents AS agent
WHERE agent.id = endpoint.agent_id AND endpoint.agent_key_hash IS NULL AND endpoint.enabled;

UPDATE webhook_deliveries AS delivery
SET status = 'failed', last_error = 'the endpoint was disabled: ' || endpoint.disabled_reason,
    lease_id = NULL, lease_until = NULL
FROM webhook_endpoints AS endpoint
WHERE endpoint.id = delivery.endpoint_id AND delivery.status = 'pending' AND NOT endpoint.enabled;

-- The deliveries log shows the agent fixed words; what the poster wrote before went there too
-- (the addresses a host resolved to, connection errors, receivers' error pages).
UPDATE webhook_attempts SET error = CASE
        WHEN error LIKE 'target refused:%' THEN 'refused: not publicly routable'
        WHEN error LIKE 'plain http refused:%' THEN 'refused: a public address needs https'
        WHEN error LIKE 'timed out%' THEN 'timed out'
        WHEN error ~ '^HTTP [0-9]{3}' THEN substring(error FROM '^HTTP [0-9]{3}')
        WHEN error LIKE 'no secret of the endpoint can sign%' THEN 'refused: no secret of the endpoint can sign'
        ELSE 'connection failed'
    END
WHERE error IS NOT NULL;

-- Each agent's turn at the deliverers: when its next delivery may be claimed ('infinity' while
-- it has none queued). A claim serves the agent whose turn is oldest, then moves its turn behind
-- every agent waiting, so one agent's backlog delays another's delivery by one claim at most.
CREATE TABLE webhook_turns (
    agent_id uuid PRIMARY KEY REFERENCES agents (id),
    turn_at  timestamptz NOT NULL
);
CREATE INDEX webhook_turns_due ON webhook_turns (turn_at, agent_id);

INSERT INTO webhook_turns (agent_id, turn_at)
SELECT agent_id, min(next_attempt_at) FROM webhook_deliveries
WHERE status = 'pending' GROUP BY agent_id;

-- An agent's own deliveries by due time: a claim reads its oldest, a turn its next.
CREATE INDEX webhook_deliveries_agent_due ON webhook_deliveries (agent_id, next_attempt_at, id)
    WHERE status = 'pending';

-- Brings the agent's turn forward to `due` (a delivery queued, given back or put off to then);
-- a later time leaves it as it is. Every writer of a pending delivery calls it after the write,
-- so a claim that moved the turn later under the turn's lock never hides a delivery.
CREATE FUNCTION webhook_turn_comes(agent uuid, due timestamptz) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO webhook_turns AS turn (agent_id, turn_at) VALUES (agent, due)
    ON CONFLICT (agent_id) DO UPDATE SET turn_at = excluded.turn_at
    WHERE excluded.turn_at < turn.turn_at
$$;

-- When the agent's turn comes again once none of its deliveries can be claimed now: when its
-- earliest queued one falls due or its earliest lease lapses (a deliverer that died); never
-- while it has none queued.
CREATE FUNCTION webhook_next_turn(agent uuid) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT coalesce(least(
        (SELECT min(delivery.next_attempt_at) FROM webhook_deliveries AS delivery
         WHERE delivery.agent_id = agent AND delivery.status = 'pending'
           AND delivery.next_attempt_at > now()),
        (SELECT min(delivery.lease_until) FROM webhook_deliveries AS delivery
         WHERE delivery.agent_id = agent AND delivery.status = 'pending'
           AND delivery.next_attempt_at <= now() AND delivery.lease_until >= now())),
        'infinity')
$$;

-- Leases the next delivery: of the agents whose turn has come, the oldest turn but those in
-- `full_agents` (holding every place they may on the caller's instance), and of its deliveries
-- the oldest due to an enabled endpoint of its key while it is active. The agent's turn then
-- moves behind every agent waiting now; an agent with nothing to claim waits for its next.
-- Turns are taken with SKIP LOCKED, so concurrent claims serve different agents, and each agent
-- is looked at once per claim. Returns what the attempt needs (the endpoint's URL and live
-- secrets, newest first, and the event), read after the lease: each statement here sees what
-- committed before it began, so a delivery leased here is read with its event by a statement
-- that sees both, never by the caller's, which may have begun before either committed.
CREATE FUNCTION claim_webhook_delivery(lease uuid, lease_for interval, full_agents uuid[])
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

-- The fan-out of migration 000017, now only to endpoints of the agent's key in force while the
-- agent is active, bringing the agent's turn forward when it queued a delivery.
CREATE OR REPLACE FUNCTION record_event(agent uuid, event_type text, stored jsonb) RETURNS void
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
    JOIN agents AS owner ON owner.id = endpoint.agent_id
    WHERE endpoint.agent_id = agent AND endpoint.enabled
      AND owner.is_active AND owner.key_hash = endpoint.agent_key_hash
      AND (endpoint.types IS NULL OR event_type = ANY (endpoint.types));
    GET DIAGNOSTICS queued = ROW_COUNT;
    IF queued > 0 THEN
        PERFORM webhook_turn_comes(agent, at);
    END IF;
    PERFORM pg_notify('agent_runtime_events', 'events:' || agent::text);
    IF queued > 0 THEN
        PERFORM pg_notify('agent_runtime_events', 'webhook-deliveries');
    END IF;
END
$$;
