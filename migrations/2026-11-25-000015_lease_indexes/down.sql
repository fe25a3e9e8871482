DROP INDEX email_messages_lease;
DROP INDEX transfer_intents_lease;
