-- `listing_changed` in PL/pgSQL: PostgreSQL plans the body of an SQL function afresh at every
-- call, which every write of an intent or a message makes (its statements' plans were as many as
-- their calls); a PL/pgSQL function keeps them planned for the session. The owners are counted in
-- one order, the lesser first, as the one statement before did.
CREATE OR REPLACE FUNCTION listing_changed(old_owner uuid, new_owner uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    first_owner uuid := least(old_owner, new_owner);
    second_owner uuid := greatest(old_owner, new_owner);
BEGIN
    IF first_owner IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO listing_versions AS listing (owner_id, version) VALUES (first_owner, 1)
    ON CONFLICT (owner_id) DO UPDATE SET version = listing.version + 1;
    IF second_owner <> first_owner THEN
        INSERT INTO listing_versions AS listing (owner_id, version) VALUES (second_owner, 1)
        ON CONFLICT (owner_id) DO UPDATE SET version = listing.version + 1;
    END IF;
END
$$;
