-- Every change to what an agent profile holds publishes the `agent-profiles` topic on the
-- notification hub's channel when its transaction commits, whichever statement makes it: the
-- in-process caches of authenticated keys on every instance empty on it (decision 0030).
CREATE FUNCTION agent_profiles_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agent_runtime_events', 'agent-profiles');
    RETURN NULL;
END
$$;

-- A new agent changes no cached profile: only keys that authenticated are cached.
CREATE TRIGGER agents_profile_changed AFTER UPDATE OR DELETE ON agents
    FOR EACH STATEMENT EXECUTE FUNCTION agent_profiles_changed();
CREATE TRIGGER phone_numbers_profile_changed AFTER INSERT OR UPDATE OR DELETE ON phone_numbers
    FOR EACH STATEMENT EXECUTE FUNCTION agent_profiles_changed();
CREATE TRIGGER email_inboxes_profile_changed AFTER INSERT OR UPDATE OR DELETE ON email_inboxes
    FOR EACH STATEMENT EXECUTE FUNCTION agent_profiles_changed();
-- Not the nonce, the sealed key or the running totals: a profile does not show them, and the
-- nonce moves with every transfer.
CREATE TRIGGER wallets_profile_changed
    AFTER INSERT OR DELETE OR UPDATE OF agent_id, provider, chain, address, custody, status, delegated
    ON wallets
    FOR EACH STATEMENT EXECUTE FUNCTION agent_profiles_changed();
CREATE TRIGGER spend_policies_profile_changed AFTER INSERT OR UPDATE OR DELETE ON spend_policies
    FOR EACH STATEMENT EXECUTE FUNCTION agent_profiles_changed();
