-- How many times the rows of a listing have changed: an inbox's messages (keyed by the inbox's id)
-- and an agent's transfer intents (keyed by the agent's id). A server keeps the first page of a
-- listing it rendered and serves it again while the count it was read at is still the count
-- (decision 0041). A listing with no row here has not changed since this table was made.
CREATE TABLE listing_versions (
    owner_id uuid PRIMARY KEY,
    version  bigint NOT NULL
);

-- Counts one change of the listings a row was in and is in: OLD is NULL on insert and NEW on
-- delete, so their owners are NULL and count nothing; a row that stays in its listing counts once.
CREATE FUNCTION listing_changed(old_owner uuid, new_owner uuid) RETURNS void LANGUAGE sql AS $$
    INSERT INTO listing_versions AS listing (owner_id, version)
    SELECT DISTINCT owner, 1 FROM (VALUES (old_owner), (new_owner)) AS owners (owner)
    WHERE owner IS NOT NULL
    ON CONFLICT (owner_id) DO UPDATE SET version = listing.version + 1;
$$;

-- Every change counts, whichever statement makes it, including the columns no page shows (a
-- lease, an attempt): a needless new reading of a page costs less than a missed change.
CREATE FUNCTION email_messages_listing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.inbox_id, NEW.inbox_id);
    RETURN NULL;
END
$$;

CREATE FUNCTION transfer_intents_listing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.agent_id, NEW.agent_id);
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
