-- The sandbox chain keeps a transaction whose nonce is ahead of its sender's next one waiting, as
-- a node's mempool does, and mines it once every nonce before it is used. One waits per nonce; a
-- transaction paying more on both fee caps takes its place.
CREATE TABLE sandbox_queued_transactions (
    hash                     text PRIMARY KEY,
    sender                   text NOT NULL,
    nonce                    bigint NOT NULL,
    token_address            text NOT NULL,
    recipient                text NOT NULL,
    amount_atomic            numeric(78, 0) NOT NULL,
    max_fee_per_gas          numeric(39, 0) NOT NULL,
    max_priority_fee_per_gas numeric(39, 0) NOT NULL,
    created_at               timestamptz NOT NULL DEFAULT now(),
    UNIQUE (sender, nonce)
);
