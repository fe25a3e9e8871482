-- Transfer intents: a send is only an intent until an operator confirms it and the worker
-- executes it on chain.
CREATE TABLE transfer_intents (
    id                uuid PRIMARY KEY,
    agent_id          uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    wallet_id         uuid NOT NULL REFERENCES wallets (id) ON DELETE CASCADE,
    status            text NOT NULL,
    asset             text NOT NULL,
    chain             text NOT NULL,
    token_address     text,
    -- Lower-case hex; shown EIP-55 checksummed.
    recipient_address text NOT NULL,
    amount_atomic     numeric(78, 0) NOT NULL,
    -- Client-chosen, scoped to the agent; kept to answer retries with the original intent.
    idempotency_key   text,
    tx_hash           text,
    failure_reason    text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    confirmed_at      timestamptz,
    CONSTRAINT transfer_intents_status_known CHECK (status IN (
        'pending_confirmation', 'confirmed', 'submitted', 'executed', 'failed', 'rejected', 'expired')),
    CONSTRAINT transfer_intents_amount_positive CHECK (amount_atomic > 0),
    CONSTRAINT transfer_intents_recipient_lower_hex CHECK (recipient_address ~ '^0x[0-9a-f]{40}$'),
    CONSTRAINT transfer_intents_idempotency_key_length CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
    CONSTRAINT transfer_intents_agent_idempotency_key UNIQUE (agent_id, idempotency_key)
);

-- Newest-first keyset pages of one agent's intents.
CREATE INDEX transfer_intents_agent_page_idx ON transfer_intents (agent_id, created_at DESC, id DESC);

-- The rolling 24-hour sum of one wallet: only intents that still hold their amount.
CREATE INDEX transfer_intents_wallet_window_idx ON transfer_intents (wallet_id, created_at)
    INCLUDE (amount_atomic)
    WHERE status IN ('pending_confirmation', 'confirmed', 'submitted', 'executed');

-- Work of the control plane and the executor.
CREATE INDEX transfer_intents_open_idx ON transfer_intents (status, created_at)
    WHERE status IN ('pending_confirmation', 'confirmed', 'submitted');
