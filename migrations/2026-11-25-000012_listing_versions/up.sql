-- How many times the rows of a listing have changed: an inbox's messages (keyed by the inbox's id)
-- and an agent's transfer intents (keyed by the agent's id). A server keeps the first page of a
-- listing it rendered and serves it again while the count it was read at is still the count
-- (decision 0041). A listing with no row here has not changed since this table was made.
CREATE TABLE listing_versions (
    owner_id uuid PRIMARY KEY,
    version  bigint NOT NULL
);

CREATE FUNCTION listing_changed(owner uuid) RETURNS void LANGUAGE sql AS $$
    INSERT INTO listing_versions AS listing (owner_id, version) VALUES (owner, 1)
    ON CONFLICT (owner_id) DO UPDATE SET version = listing.version + 1;
$$;

-- Every change counts, whichever statement makes it, including the columns no page shows (a
-- lease, an attempt): a needless new reading of a page costs less than a missed change.
CREATE FUNCTION email_messages_listing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM listing_changed(OLD.inbox_id);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.inbox_id <> OLD.inbox_id) THEN
        PERFORM listing_changed(NEW.inbox_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION transfer_intents_listing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM listing_changed(OLD.agent_id);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.agent_id <> OLD.agent_id) THEN
        PERFORM listing_changed(NEW.agent_id);
    END IF;
    RETURN NULL;
END
$$;

-- Deferred to commit, as the spend totals are (migration 000010): the count's row is locked last,
-- after every other lock the transaction takes, so it never waits for one while holding it. The
-- triggers of one change fire in the order of their names: `transfer_intents_versioned` comes
-- after `transfer_intents_spend_totals`, so the wallet's totals are locked before the listing's
-- count, as admission, which locks the totals while it checks a send, takes them.
CREATE CONSTRAINT TRIGGER email_messages_versioned
    AFTER INSERT OR UPDATE OR DELETE ON email_messages
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION email_messages_listing_changed();
CREATE CONSTRAINT TRIGGER transfer_intents_versioned
    AFTER INSERT OR UPDATE OR DELETE ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION transfer_intents_listing_changed();
