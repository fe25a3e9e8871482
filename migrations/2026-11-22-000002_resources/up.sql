-- The optional resources of an agent: at most one of each.
CREATE TABLE phone_numbers (
    id           uuid PRIMARY KEY,
    agent_id     uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    number       text NOT NULL,
    country_iso2 text,
    provider     text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT phone_numbers_agent_id_key UNIQUE (agent_id),
    CONSTRAINT phone_numbers_number_key UNIQUE (number),
    CONSTRAINT phone_numbers_number_e164 CHECK (number ~ '^\+[1-9][0-9]{7,14}$')
);

CREATE TABLE email_inboxes (
    id         uuid PRIMARY KEY,
    agent_id   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    address    text NOT NULL,
    provider   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT email_inboxes_agent_id_key UNIQUE (agent_id)
);

-- Addresses that differ only by case are the same mailbox for every provider we use.
CREATE UNIQUE INDEX email_inboxes_address_key ON email_inboxes (lower(address));

CREATE TABLE wallets (
    id         uuid PRIMARY KEY,
    agent_id   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    provider   text NOT NULL,
    chain      text NOT NULL,
    -- Lower-case hex; shown EIP-55 checksummed.
    address    text NOT NULL,
    custody    text NOT NULL,
    status     text NOT NULL DEFAULT 'active',
    delegated  boolean NOT NULL DEFAULT false,
    -- The private key sealed with an AEAD under WALLET_MASTER_KEY; never stored in clear.
    sealed_key bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT wallets_agent_id_key UNIQUE (agent_id),
    CONSTRAINT wallets_address_key UNIQUE (address),
    CONSTRAINT wallets_address_lower_hex CHECK (address ~ '^0x[0-9a-f]{40}$')
);

CREATE TABLE spend_policies (
    id                    uuid PRIMARY KEY,
    wallet_id             uuid NOT NULL REFERENCES wallets (id) ON DELETE CASCADE,
    asset                 text NOT NULL,
    chain                 text NOT NULL,
    decimals              smallint NOT NULL,
    token_address         text,
    max_per_tx_atomic     numeric(78, 0),
    max_daily_atomic      numeric(78, 0),
    -- NULL: no allowlist configured; an empty array allows no recipient.
    allowlisted_addresses text[],
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT spend_policies_wallet_id_key UNIQUE (wallet_id),
    CONSTRAINT spend_policies_decimals_range CHECK (decimals BETWEEN 0 AND 77),
    CONSTRAINT spend_policies_max_per_tx_positive CHECK (max_per_tx_atomic > 0),
    CONSTRAINT spend_policies_max_daily_positive CHECK (max_daily_atomic > 0)
);
