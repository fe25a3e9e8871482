DROP TABLE sandbox_transactions;
ALTER TABLE wallets DROP COLUMN next_nonce;
ALTER TABLE transfer_intents
    DROP CONSTRAINT transfer_intents_submission_recorded,
    DROP COLUMN lease_until,
    DROP COLUMN lease_id,
    DROP COLUMN submitted_at,
    DROP COLUMN raw_transaction,
    DROP COLUMN nonce;
