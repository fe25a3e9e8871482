-- An event notifies `events:<agent>` only while something watches the agent (a stream, a wait, a
-- decision wait) or every agent (the console's live list), decision 0080: unwatched, its
-- `pg_notify` is most of what the event costs beyond its rows. An instance registers a watch
-- before its watcher looks and renews it while the watcher lives; a lease, so a stopped instance
-- leaves nothing watched for long.
--
-- No wake-up is lost. A watch of one agent is written on the agent's counter row, which every
-- event of the agent locks until it commits and reads back from its upsert: a registration waits
-- for the events in flight (its watcher then reads them), and every later event reads it. A
-- watch of every agent is one row, which events read without a row lock; its registration takes
-- the table's ACCESS EXCLUSIVE lock, so it waits for every transaction that read it before (each
-- holds its ACCESS SHARE lock until it commits), and every later one reads it.
ALTER TABLE agent_event_counters ADD COLUMN watched_until timestamptz;

CREATE TABLE every_agent_watch (
    only_row      boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    watched_until timestamptz
);
INSERT INTO every_agent_watch (only_row) VALUES (true);

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
