DROP TRIGGER transfer_intents_versioned ON transfer_intents;
DROP TRIGGER email_messages_versioned ON email_messages;
DROP FUNCTION transfer_intents_listing_changed();
DROP FUNCTION email_messages_listing_changed();
DROP FUNCTION listing_changed(uuid, uuid);
DROP TABLE listing_versions;
