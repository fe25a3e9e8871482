//! Diesel table definitions, kept in step with `migrations/` by hand (and checked by the store
//! tests, which run every query against the migrated schema).
//!
//! The key each `table!` names is the one its rows are found by. In the database the key of a
//! table of agent data also includes `agent_id` (decision 0091), which these keys already
//! determine.

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
        is_active -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    agent_keys (id) {
        id -> Uuid,
        agent_id -> Uuid,
        key_hash -> Bytea,
        label -> Nullable<Text>,
        scopes -> Array<Text>,
        expires_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
        parent_id -> Nullable<Uuid>,
        depth -> Int2,
        is_first -> Bool,
        revoked_at -> Nullable<Timestamptz>,
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
    wallet_addresses (address) {
        address -> Text,
        agent_id -> Uuid,
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
        max_weekly_atomic -> Nullable<Numeric>,
        max_monthly_atomic -> Nullable<Numeric>,
        recipient_limits -> Nullable<Jsonb>,
        auto_confirm_max_atomic -> Nullable<Numeric>,
        auto_confirm_daily_atomic -> Nullable<Numeric>,
        approvals_required -> Nullable<SmallInt>,
        approvals_required_above_atomic -> Nullable<Numeric>,
        x402_enabled -> Bool,
        agent_id -> Uuid,
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
        decided_by -> Nullable<Text>,
        confirmed_by -> Nullable<Text>,
        approvals_required -> SmallInt,
        approvals_received -> SmallInt,
        key_id -> Nullable<Uuid>,
        kind -> Text,
        block_number -> Nullable<BigInt>,
    }
}

diesel::table! {
    chain_heads (chain_id) {
        chain_id -> BigInt,
        block_number -> BigInt,
        block_time -> Timestamptz,
        seen_at -> Timestamptz,
    }
}

diesel::table! {
    x402_payments (intent_id) {
        intent_id -> Uuid,
        wallet_id -> Uuid,
        offer -> Jsonb,
        resource_url -> Nullable<Text>,
        network -> Text,
        nonce -> Nullable<Bytea>,
        valid_after -> Nullable<BigInt>,
        valid_before -> Nullable<Timestamptz>,
        payment -> Nullable<Text>,
        payment_response -> Nullable<Jsonb>,
        watch_from_block -> Nullable<BigInt>,
        watch_held_until -> Nullable<Timestamptz>,
        agent_id -> Uuid,
    }
}

diesel::table! {
    wallet_spend_totals (wallet_id) {
        wallet_id -> Uuid,
        open_atomic -> Numeric,
        daily_executed_atomic -> Numeric,
        daily_expired_through -> Timestamptz,
        weekly_executed_atomic -> Numeric,
        weekly_expired_through -> Timestamptz,
        monthly_executed_atomic -> Numeric,
        monthly_expired_through -> Timestamptz,
        auto_open_atomic -> Numeric,
        auto_daily_executed_atomic -> Numeric,
        auto_daily_expired_through -> Timestamptz,
        agent_id -> Uuid,
    }
}

diesel::table! {
    recipient_spend_totals (wallet_id, recipient_address) {
        wallet_id -> Uuid,
        recipient_address -> Text,
        open_atomic -> Numeric,
        daily_executed_atomic -> Numeric,
        daily_expired_through -> Timestamptz,
        agent_id -> Uuid,
    }
}

diesel::table! {
    intent_approvals (intent_id, operator) {
        intent_id -> Uuid,
        operator -> Text,
        approved_at -> Timestamptz,
        agent_id -> Uuid,
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
        agent_id -> Uuid,
    }
}

diesel::table! {
    rate_limit_buckets (subject_id, action) {
        subject_id -> Uuid,
        action -> Text,
        tokens -> Double,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    listing_versions (owner_id) {
        owner_id -> Uuid,
        version -> BigInt,
        agent_id -> Uuid,
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
    sandbox_queued_transactions (hash) {
        hash -> Text,
        sender -> Text,
        nonce -> BigInt,
        token_address -> Text,
        recipient -> Text,
        amount_atomic -> Numeric,
        max_fee_per_gas -> Numeric,
        max_priority_fee_per_gas -> Numeric,
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

diesel::table! {
    email_domains (name) {
        name -> Text,
        verified_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    email_messages (id) {
        id -> Uuid,
        agent_id -> Uuid,
        inbox_id -> Uuid,
        direction -> Text,
        status -> Text,
        thread_id -> Uuid,
        provider_message_id -> Nullable<Text>,
        internet_message_id -> Nullable<Text>,
        in_reply_to -> Nullable<Text>,
        reference_ids -> Array<Text>,
        subject -> Nullable<Text>,
        from_address -> Nullable<Text>,
        to_addresses -> Array<Text>,
        cc_addresses -> Array<Text>,
        bcc_addresses -> Array<Text>,
        reply_to_addresses -> Array<Text>,
        body_text -> Nullable<Text>,
        body_html -> Nullable<Text>,
        attachments -> Jsonb,
        headers -> Jsonb,
        verification_codes -> Array<Text>,
        idempotency_key -> Nullable<Text>,
        request_fingerprint -> Nullable<Bytea>,
        attempts -> Integer,
        next_attempt_at -> Nullable<Timestamptz>,
        lease_id -> Nullable<Uuid>,
        lease_until -> Nullable<Timestamptz>,
        last_error -> Nullable<Text>,
        created_at -> Timestamptz,
        received_at -> Nullable<Timestamptz>,
        sent_at -> Nullable<Timestamptz>,
        code_seen_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    /// More columns of `email_messages`: one `table!` declares at most 32 unless diesel builds
    /// with its 64-column feature, which every build would pay for. What intake reads once of an
    /// inbound mail (migration 000034); `MessageRow` selects them by name.
    #[sql_name = "email_messages"]
    email_message_facts (id) {
        id -> Uuid,
        sender_authentication -> Nullable<Text>,
        authenticated_domain -> Nullable<Text>,
        service_name -> Nullable<Text>,
        key_id -> Nullable<Uuid>,
    }
}

diesel::table! {
    email_attachment_uploads (message_id) {
        message_id -> Uuid,
        recorded_at -> Timestamptz,
        swept_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    email_attachment_pieces (message_id, attachment, piece) {
        message_id -> Uuid,
        attachment -> Integer,
        piece -> Integer,
        bytes -> Bytea,
        agent_id -> Uuid,
    }
}

diesel::table! {
    email_threads (inbox_id, thread_id) {
        inbox_id -> Uuid,
        thread_id -> Uuid,
        subject -> Nullable<Text>,
        participants -> Array<Text>,
        message_count -> BigInt,
        last_message_at -> Timestamptz,
        last_message_id -> Uuid,
        agent_id -> Uuid,
    }
}

diesel::table! {
    email_sender_rules (agent_id) {
        agent_id -> Uuid,
        allow_list -> Array<Text>,
        block_list -> Array<Text>,
        kept_out_count -> BigInt,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    sandbox_email_outbox (provider_message_id) {
        provider_message_id -> Uuid,
        message_id -> Uuid,
        internet_message_id -> Text,
        from_address -> Text,
        to_addresses -> Array<Text>,
        cc_addresses -> Array<Text>,
        bcc_addresses -> Array<Text>,
        subject -> Text,
        body_text -> Text,
        in_reply_to -> Nullable<Text>,
        reference_ids -> Array<Text>,
        headers -> Jsonb,
        created_at -> Timestamptz,
        attachments -> Jsonb,
    }
}

diesel::table! {
    sms_messages (id) {
        id -> Uuid,
        agent_id -> Uuid,
        phone_number_id -> Uuid,
        direction -> Text,
        provider -> Text,
        provider_message_id -> Text,
        source -> Text,
        from_number -> Text,
        to_number -> Text,
        body -> Text,
        parsed_code -> Nullable<Text>,
        service_name -> Nullable<Text>,
        provider_received_at -> Nullable<Timestamptz>,
        seen_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    code_waits (agent_id, request_id) {
        agent_id -> Uuid,
        request_id -> Text,
        channel -> Text,
        message_id -> Uuid,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    sandbox_sms (sid) {
        sid -> Text,
        from_number -> Text,
        to_number -> Text,
        body -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    agent_event_counters (agent_id) {
        agent_id -> Uuid,
        last_seq -> BigInt,
        pruned_through -> BigInt,
        watched_until -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    events (agent_id, seq) {
        agent_id -> Uuid,
        seq -> BigInt,
        id -> Uuid,
        #[sql_name = "type"]
        event_type -> Text,
        data -> Jsonb,
        created_at -> Timestamptz,
        key_id -> Nullable<Uuid>,
    }
}

diesel::table! {
    webhook_endpoints (id) {
        id -> Uuid,
        agent_id -> Uuid,
        url -> Text,
        types -> Nullable<Array<Text>>,
        description -> Nullable<Text>,
        enabled -> Bool,
        disabled_reason -> Nullable<Text>,
        failing_since -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        agent_key_hash -> Nullable<Bytea>,
    }
}

diesel::table! {
    webhook_secrets (endpoint_id, created_at) {
        endpoint_id -> Uuid,
        secret -> Text,
        created_at -> Timestamptz,
        signs_until -> Nullable<Timestamptz>,
        agent_id -> Uuid,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> Uuid,
        endpoint_id -> Uuid,
        agent_id -> Uuid,
        event_seq -> BigInt,
        status -> Text,
        attempts -> Integer,
        first_attempted_at -> Nullable<Timestamptz>,
        next_attempt_at -> Timestamptz,
        lease_id -> Nullable<Uuid>,
        lease_until -> Nullable<Timestamptz>,
        last_error -> Nullable<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    webhook_attempts (id) {
        id -> Uuid,
        delivery_id -> Uuid,
        endpoint_id -> Uuid,
        event_id -> Uuid,
        event_type -> Text,
        attempt -> Integer,
        status_code -> Nullable<Integer>,
        error -> Nullable<Text>,
        duration_ms -> Integer,
        attempted_at -> Timestamptz,
        agent_id -> Uuid,
    }
}

diesel::joinable!(agents -> sponsors (sponsor_id));
diesel::joinable!(sms_messages -> phone_numbers (phone_number_id));
diesel::joinable!(email_messages -> email_inboxes (inbox_id));
diesel::joinable!(transfer_intents -> agents (agent_id));
diesel::joinable!(transfer_intents -> wallets (wallet_id));
diesel::joinable!(phone_numbers -> agents (agent_id));
diesel::joinable!(agent_keys -> agents (agent_id));
diesel::joinable!(email_inboxes -> agents (agent_id));
diesel::joinable!(wallets -> agents (agent_id));
diesel::table! {
    operators (id) {
        id -> Uuid,
        name -> Text,
        role -> Text,
        created_at -> Timestamptz,
        disabled_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    operator_enrollments (token_hash) {
        token_hash -> Bytea,
        operator_id -> Uuid,
        expires_at -> Timestamptz,
        used_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    operator_passkeys (credential_id) {
        credential_id -> Bytea,
        operator_id -> Uuid,
        passkey -> Jsonb,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    operator_sessions (token_hash) {
        token_hash -> Bytea,
        operator_id -> Uuid,
        csrf_token -> Text,
        created_at -> Timestamptz,
        last_seen_at -> Timestamptz,
        address -> Nullable<Text>,
    }
}

diesel::table! {
    operator_ceremonies (id) {
        id -> Uuid,
        enrollment -> Bytea,
        state -> Jsonb,
        expires_at -> Timestamptz,
    }
}

diesel::table! {
    console_challenge_key (only_one) {
        only_one -> Bool,
        key -> Bytea,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    console_used_challenges (id) {
        id -> Uuid,
        kept_until -> Timestamptz,
    }
}

diesel::table! {
    operator_tokens (token_hash) {
        token_hash -> Bytea,
        operator_id -> Uuid,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    operator_audit (id) {
        id -> Uuid,
        at -> Timestamptz,
        operator -> Text,
        action -> Text,
        target -> Nullable<Text>,
        before -> Nullable<Jsonb>,
        after -> Nullable<Jsonb>,
        reason -> Nullable<Text>,
        address -> Nullable<Text>,
    }
}

diesel::joinable!(spend_policies -> wallets (wallet_id));
diesel::joinable!(wallet_spend_totals -> wallets (wallet_id));
diesel::joinable!(recipient_spend_totals -> wallets (wallet_id));
diesel::joinable!(intent_approvals -> transfer_intents (intent_id));
diesel::joinable!(transfer_attempts -> transfer_intents (intent_id));
diesel::joinable!(x402_payments -> transfer_intents (intent_id));
diesel::joinable!(webhook_secrets -> webhook_endpoints (endpoint_id));
diesel::joinable!(webhook_deliveries -> webhook_endpoints (endpoint_id));
diesel::joinable!(operator_enrollments -> operators (operator_id));
diesel::joinable!(operator_passkeys -> operators (operator_id));
diesel::joinable!(operator_sessions -> operators (operator_id));
diesel::joinable!(operator_tokens -> operators (operator_id));

diesel::allow_tables_to_appear_in_same_query!(
    chain_heads,
    sponsors,
    agents,
    phone_numbers,
    sms_messages,
    code_waits,
    email_inboxes,
    email_messages,
    email_attachment_pieces,
    email_attachment_uploads,
    email_sender_rules,
    email_threads,
    wallets,
    wallet_addresses,
    spend_policies,
    transfer_intents,
    wallet_spend_totals,
    recipient_spend_totals,
    intent_approvals,
    transfer_attempts,
    agent_event_counters,
    events,
    webhook_endpoints,
    webhook_secrets,
    webhook_deliveries,
    webhook_attempts,
    operators,
    operator_enrollments,
    operator_passkeys,
    operator_sessions,
    operator_ceremonies,
    console_challenge_key,
    console_used_challenges,
    operator_tokens,
    operator_audit,
    agent_keys,
    x402_payments,
);
