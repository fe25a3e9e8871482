-- Exactly-once execution. Every transaction sent for an intent is recorded before it is
-- broadcast: the first one and each replacement, all with the intent's one nonce, so at most one
-- of them can be mined. Submitted intents are looked at when due, oldest due first, so no wallet
-- can stall the others. The daily window counts an executed intent from when its money moved.
CREATE TABLE transfer_attempts (
    tx_hash                  text PRIMARY KEY,
    intent_id                uuid NOT NULL REFERENCES transfer_intents (id) ON DELETE CASCADE,
    nonce                    bigint NOT NULL,
    raw_transaction          bytea NOT NULL,
    max_fee_per_gas          numeric(39, 0) NOT NULL,
    max_priority_fee_per_gas numeric(39, 0) NOT NULL,
    created_at               timestamptz NOT NULL DEFAULT now(),
    broadcasts               integer NOT NULL DEFAULT 0,
    last_broadcast_at        timestamptz,
    -- What the node said the last time a broadcast of this transaction failed.
    last_error               text
);
CREATE INDEX transfer_attempts_intent_idx ON transfer_attempts (intent_id, created_at DESC);

INSERT INTO transfer_attempts
    (tx_hash, intent_id, nonce, raw_transaction, max_fee_per_gas, max_priority_fee_per_gas,
     created_at, broadcasts, last_broadcast_at)
SELECT tx_hash, id, nonce, raw_transaction, 0, 0, coalesce(submitted_at, updated_at), 1, submitted_at
FROM transfer_intents
WHERE raw_transaction IS NOT NULL;

ALTER TABLE transfer_intents
    DROP CONSTRAINT transfer_intents_submission_recorded,
    DROP COLUMN raw_transaction,
    -- When the receipt that executed it was seen (the database's clock).
    ADD COLUMN executed_at        timestamptz,
    -- When the executor looks at a submitted intent next, and how often it has so far.
    ADD COLUMN next_check_at      timestamptz,
    ADD COLUMN checks             integer NOT NULL DEFAULT 0,
    -- When the intent's nonce was first seen used on chain while none of its transactions had a
    -- receipt.
    ADD COLUMN nonce_used_seen_at timestamptz,
    ADD CONSTRAINT transfer_intents_submission_recorded CHECK (
        status NOT IN ('submitted', 'executed') OR (tx_hash IS NOT NULL AND nonce IS NOT NULL));

UPDATE transfer_intents SET executed_at = updated_at WHERE status = 'executed';
UPDATE transfer_intents SET next_check_at = now() WHERE status = 'submitted';

-- The rolling window of a wallet: intents whose money may still move, and executed ones by when
-- it moved.
DROP INDEX transfer_intents_wallet_window_idx;
CREATE INDEX transfer_intents_wallet_open_idx ON transfer_intents (wallet_id)
    INCLUDE (amount_atomic)
    WHERE status IN ('pending_confirmation', 'confirmed', 'submitted');
CREATE INDEX transfer_intents_wallet_executed_idx ON transfer_intents (wallet_id, executed_at)
    INCLUDE (amount_atomic)
    WHERE status = 'executed';

-- Submitted intents by when they are due.
CREATE INDEX transfer_intents_due_idx ON transfer_intents (next_check_at)
    WHERE status = 'submitted';

-- Per-agent rate limits shared by every instance: a token bucket per agent and action.
CREATE TABLE rate_limit_buckets (
    agent_id   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    action     text NOT NULL,
    tokens     double precision NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, action)
);
