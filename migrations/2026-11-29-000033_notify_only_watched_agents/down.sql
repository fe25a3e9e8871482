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
DROP TABLE every_agent_watch;
ALTER TABLE agent_event_counters DROP COLUMN watched_until;
