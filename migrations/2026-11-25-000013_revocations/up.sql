-- An agent's key stops authenticating it when the agent is deactivated or its key rotated: the
-- `revoked:<agent>` topic is published on the notification hub's channel when that commits,
-- whichever statement makes it, and the agent's waits for a code on every instance end with 401.
-- Row by row, beside the statement trigger that empties the caches of authenticated keys
-- (migration 000011): only the agent whose key changed is named.
CREATE FUNCTION agent_key_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agent_runtime_events', 'revoked:' || NEW.id::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER agents_key_revoked AFTER UPDATE OF is_active, key_hash ON agents
    FOR EACH ROW
    WHEN (NOT NEW.is_active AND OLD.is_active OR NEW.key_hash IS DISTINCT FROM OLD.key_hash)
    EXECUTE FUNCTION agent_key_revoked();
