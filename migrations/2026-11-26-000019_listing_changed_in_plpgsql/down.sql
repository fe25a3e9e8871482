CREATE OR REPLACE FUNCTION listing_changed(old_owner uuid, new_owner uuid) RETURNS void LANGUAGE sql AS $$
    INSERT INTO listing_versions AS listing (owner_id, version)
    SELECT DISTINCT owner, 1 FROM (VALUES (old_owner), (new_owner)) AS owners (owner)
    WHERE owner IS NOT NULL
    ON CONFLICT (owner_id) DO UPDATE SET version = listing.version + 1;
$$;
