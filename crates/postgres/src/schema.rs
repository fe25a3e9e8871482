//! Diesel table definitions, kept in step with `migrations/` by hand (and checked by the store
//! tests, which run every query against the migrated schema).

diesel::table! {
    sponsors (id) {
        id -> Uuid,
        name -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    agents (id) {
        id -> Uuid,
        sponsor_id -> Uuid,
        label -> Nullable<Text>,
        key_hash -> Bytea,
        is_active -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    phone_numbers (id) {
        id -> Uuid,
        agent_id -> Uuid,
        number -> Text,
        country_iso2 -> Nullable<Text>,
        provider -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    email_inboxes (id) {
        id -> Uuid,
        agent_id -> Uuid,
        address -> Text,
        provider -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    wallets (id) {
        id -> Uuid,
        agent_id -> Uuid,
        provider -> Text,
        chain -> Text,
        address -> Text,
        custody -> Text,
        status -> Text,
        delegated -> Bool,
        sealed_key -> Bytea,
        created_at -> Timestamptz,
        next_nonce -> Nullable<BigInt>,
    }
}

diesel::table! {
    spend_policies (id) {
        id -> Uuid,
        wallet_id -> Uuid,
        asset -> Text,
        chain -> Text,
        decimals -> SmallInt,
        token_address -> Nullable<Text>,
        max_per_tx_atomic -> Nullable<Numeric>,
        max_daily_atomic -> Nullable<Numeric>,
        allowlisted_addresses -> Nullable<Array<Text>>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    transfer_intents (id) {
        id -> Uuid,
        agent_id -> Uuid,
        wallet_id -> Uuid,
        status -> Text,
        asset -> Text,
        chain -> Text,
        token_address -> Nullable<Text>,
        recipient_address -> Text,
        amount_atomic -> Numeric,
        idempotency_key -> Nullable<Text>,
        tx_hash -> Nullable<Text>,
        failure_reason -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        confirmed_at -> Nullable<Timestamptz>,
        nonce -> Nullable<BigInt>,
        submitted_at -> Nullable<Timestamptz>,
        lease_id -> Nullable<Uuid>,
        lease_until -> Nullable<Timestamptz>,
        executed_at -> Nullable<Timestamptz>,
        next_check_at -> Nullable<Timestamptz>,
        checks -> Integer,
        nonce_used_seen_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    transfer_attempts (tx_hash) {
        tx_hash -> Text,
        intent_id -> Uuid,
        nonce -> BigInt,
        raw_transaction -> Bytea,
        max_fee_per_gas -> Numeric,
        max_priority_fee_per_gas -> Numeric,
        created_at -> Timestamptz,
        broadcasts -> Integer,
        last_broadcast_at -> Nullable<Timestamptz>,
        last_error -> Nullable<Text>,
    }
}

diesel::table! {
    rate_limit_buckets (agent_id, action) {
        agent_id -> Uuid,
        action -> Text,
        tokens -> Double,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    sandbox_transactions (hash) {
        hash -> Text,
        sender -> Text,
        token_address -> Text,
        recipient -> Text,
        amount_atomic -> Numeric,
        nonce -> BigInt,
        succeeded -> Bool,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    sandbox_balances (holder, token_address) {
        holder -> Text,
        token_address -> Text,
        amount_atomic -> Numeric,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(agents -> sponsors (sponsor_id));
diesel::joinable!(transfer_intents -> agents (agent_id));
diesel::joinable!(transfer_intents -> wallets (wallet_id));
diesel::joinable!(phone_numbers -> agents (agent_id));
diesel::joinable!(email_inboxes -> agents (agent_id));
diesel::joinable!(wallets -> agents (agent_id));
diesel::joinable!(spend_policies -> wallets (wallet_id));
diesel::joinable!(transfer_attempts -> transfer_intents (intent_id));

diesel::allow_tables_to_appear_in_same_query!(
    sponsors,
    agents,
    phone_numbers,
    email_inboxes,
    wallets,
    spend_policies,
    transfer_intents,
    transfer_attempts,
);
