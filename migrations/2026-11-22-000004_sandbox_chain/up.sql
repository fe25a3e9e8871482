-- The sandbox chain used when no EVM RPC endpoint is configured: balances per holder and asset.
CREATE TABLE sandbox_balances (
    -- Lower-case hex of the holder.
    holder        text NOT NULL,
    -- Lower-case hex of the token contract; '' for the native asset.
    token_address text NOT NULL,
    amount_atomic numeric(78, 0) NOT NULL DEFAULT 0,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (holder, token_address),
    CONSTRAINT sandbox_balances_holder_lower_hex CHECK (holder ~ '^0x[0-9a-f]{40}$'),
    CONSTRAINT sandbox_balances_token_lower_hex CHECK (token_address = '' OR token_address ~ '^0x[0-9a-f]{40}$'),
    CONSTRAINT sandbox_balances_amount_non_negative CHECK (amount_atomic >= 0)
);
