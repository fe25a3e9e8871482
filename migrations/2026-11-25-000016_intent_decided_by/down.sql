ALTER TABLE transfer_intents DROP COLUMN decided_by;
