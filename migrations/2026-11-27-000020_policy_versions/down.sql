DROP TRIGGER spend_policies_versioned ON spend_policies;
DROP FUNCTION spend_policies_changed();
DELETE FROM listing_versions WHERE owner_id IN (SELECT id FROM wallets);
