DROP TABLE transfer_intents;
