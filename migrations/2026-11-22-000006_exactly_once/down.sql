DROP TABLE rate_limit_buckets;
DROP INDEX transfer_intents_due_idx;
DROP INDEX transfer_intents_wallet_executed_idx;
DROP INDEX transfer_intents_wallet_open_idx;
CREATE INDEX transfer_intents_wallet_window_idx ON transfer_intents (wallet_id, created_at)
    INCLUDE (amount_atomic)
    WHERE status IN ('pending_confirmation', 'confirmed', 'submitted', 'executed');
ALTER TABLE transfer_intents
    DROP CONSTRAINT transfer_intents_submission_recorded,
    DROP COLUMN nonce_used_seen_at,
    DROP COLUMN checks,
    DROP COLUMN next_check_at,
    DROP COLUMN executed_at,
    ADD COLUMN raw_transaction bytea;
UPDATE transfer_intents AS intent
SET raw_transaction = attempt.raw_transaction
FROM transfer_attempts AS attempt
WHERE attempt.tx_hash = intent.tx_hash;
ALTER TABLE transfer_intents
    ADD CONSTRAINT transfer_intents_submission_recorded CHECK (
        status NOT IN ('submitted', 'executed')
        OR (tx_hash IS NOT NULL AND raw_transaction IS NOT NULL AND nonce IS NOT NULL));
DROP TABLE transfer_attempts;
