-- Execution of confirmed intents: the signed transaction is recorded before it is broadcast, so
-- a restart sends the very same bytes again and never a second, different transaction.
ALTER TABLE transfer_intents
    ADD COLUMN nonce           bigint,
    ADD COLUMN raw_transaction bytea,
    ADD COLUMN submitted_at    timestamptz,
    -- An executor's claim on a confirmed intent, so several executors never sign it twice.
    ADD COLUMN lease_id        uuid,
    ADD COLUMN lease_until     timestamptz,
    ADD CONSTRAINT transfer_intents_submission_recorded CHECK (
        status NOT IN ('submitted', 'executed')
        OR (tx_hash IS NOT NULL AND raw_transaction IS NOT NULL AND nonce IS NOT NULL));

-- The nonce after the wallet's last recorded transaction.
ALTER TABLE wallets ADD COLUMN next_nonce bigint;

-- The sandbox chain's transactions, by hash.
CREATE TABLE sandbox_transactions (
    hash          text PRIMARY KEY,
    sender        text NOT NULL,
    token_address text NOT NULL,
    recipient     text NOT NULL,
    amount_atomic numeric(78, 0) NOT NULL,
    nonce         bigint NOT NULL,
    succeeded     boolean NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_transactions_sender_idx ON sandbox_transactions (sender);
