-- A wallet's spend policy counts its changes in `listing_versions` under the wallet's id, as
-- listings count theirs (migration 000012). A server keeps the policy read with its usage and
-- answers it again while neither this count nor the agent's intents' has moved and no execution
-- has left a window since (decision 0063).
CREATE FUNCTION spend_policies_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.wallet_id, NEW.wallet_id);
    RETURN NULL;
END
$$;

-- Deferred to commit as the other counts are, so the count's row is locked last.
CREATE CONSTRAINT TRIGGER spend_policies_versioned
    AFTER INSERT OR UPDATE OR DELETE ON spend_policies
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION spend_policies_changed();
