CREATE OR REPLACE FUNCTION listing_changed(old_owner uuid, new_owner uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    first_owner uuid := least(old_owner, new_owner);
    second_owner uuid := greatest(old_owner, new_owner);
BEGIN
    IF first_owner IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO listing_versions AS listing (owner_id, version) VALUES (first_owner, 1)
    ON CONFLICT (owner_id) DO UPDATE SET version = listing.version + 1;
    IF second_owner <> first_owner THEN
        INSERT INTO listing_versions AS listing (owner_id, version) VALUES (second_owner, 1)
        ON CONFLICT (owner_id) DO UPDATE SET version = listing.version + 1;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION email_messages_listing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.inbox_id, NEW.inbox_id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION transfer_intents_listing_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.agent_id, NEW.agent_id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION spend_policies_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.wallet_id, NEW.wallet_id);
    RETURN NULL;
END
$$;

DROP FUNCTION listing_changed(uuid, uuid, uuid, uuid);

CREATE OR REPLACE FUNCTION email_messages_threaded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO email_threads AS thread (inbox_id, thread_id, subject, participants,
        message_count, last_message_at, last_message_id)
    VALUES (NEW.inbox_id, NEW.thread_id, NEW.subject,
        email_thread_participants('{}', ARRAY[NEW.from_address] || NEW.to_addresses
            || NEW.cc_addresses),
        1, NEW.created_at, NEW.id)
    ON CONFLICT (inbox_id, thread_id) DO UPDATE SET
        participants = email_thread_participants(thread.participants,
            ARRAY[NEW.from_address] || NEW.to_addresses || NEW.cc_addresses),
        message_count = thread.message_count + 1,
        last_message_at = greatest(thread.last_message_at, NEW.created_at),
        last_message_id = CASE
            WHEN (NEW.created_at, NEW.id) > (thread.last_message_at, thread.last_message_id)
            THEN NEW.id ELSE thread.last_message_id END;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION wallet_spend_totals_create() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO wallet_spend_totals (wallet_id) VALUES (NEW.id);
    RETURN NULL;
END
$$;

ALTER TABLE spend_policies DROP CONSTRAINT spend_policies_wallet_id_fkey;
ALTER TABLE wallet_spend_totals DROP CONSTRAINT wallet_spend_totals_wallet_id_fkey;
ALTER TABLE recipient_spend_totals DROP CONSTRAINT recipient_spend_totals_wallet_id_fkey;
ALTER TABLE transfer_intents DROP CONSTRAINT transfer_intents_wallet_id_fkey;
ALTER TABLE x402_payments DROP CONSTRAINT x402_payments_intent_id_fkey,
    DROP CONSTRAINT x402_payments_wallet_id_fkey;
ALTER TABLE intent_approvals DROP CONSTRAINT intent_approvals_intent_id_fkey;
ALTER TABLE transfer_attempts DROP CONSTRAINT transfer_attempts_intent_id_fkey;
ALTER TABLE email_attachment_pieces DROP CONSTRAINT email_attachment_pieces_message_id_fkey;
ALTER TABLE webhook_secrets DROP CONSTRAINT webhook_secrets_endpoint_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey;

ALTER TABLE wallets DROP CONSTRAINT wallets_pkey,
    ADD CONSTRAINT wallets_pkey PRIMARY KEY (id);
ALTER TABLE spend_policies DROP CONSTRAINT spend_policies_pkey,
    ADD CONSTRAINT spend_policies_pkey PRIMARY KEY (id),
    DROP CONSTRAINT spend_policies_wallet_id_key,
    ADD CONSTRAINT spend_policies_wallet_id_key UNIQUE (wallet_id);
ALTER TABLE wallet_spend_totals DROP CONSTRAINT wallet_spend_totals_pkey,
    ADD CONSTRAINT wallet_spend_totals_pkey PRIMARY KEY (wallet_id);
ALTER TABLE recipient_spend_totals DROP CONSTRAINT recipient_spend_totals_pkey,
    ADD CONSTRAINT recipient_spend_totals_pkey PRIMARY KEY (wallet_id, recipient_address);
ALTER TABLE transfer_intents DROP CONSTRAINT transfer_intents_pkey,
    ADD CONSTRAINT transfer_intents_pkey PRIMARY KEY (id);
ALTER TABLE x402_payments DROP CONSTRAINT x402_payments_pkey,
    ADD CONSTRAINT x402_payments_pkey PRIMARY KEY (intent_id),
    DROP CONSTRAINT x402_payments_nonce_once,
    ADD CONSTRAINT x402_payments_nonce_once UNIQUE (wallet_id, nonce);
ALTER TABLE intent_approvals DROP CONSTRAINT intent_approvals_pkey,
    ADD CONSTRAINT intent_approvals_pkey PRIMARY KEY (intent_id, operator);
ALTER TABLE transfer_attempts DROP CONSTRAINT transfer_attempts_pkey,
    ADD CONSTRAINT transfer_attempts_pkey PRIMARY KEY (tx_hash);
ALTER TABLE email_messages DROP CONSTRAINT email_messages_pkey,
    ADD CONSTRAINT email_messages_pkey PRIMARY KEY (id);
DROP INDEX email_messages_inbound_provider_id_key;
CREATE UNIQUE INDEX email_messages_inbound_provider_id_key
    ON email_messages (inbox_id, provider_message_id) WHERE direction = 'inbound';
ALTER TABLE email_attachment_pieces DROP CONSTRAINT email_attachment_pieces_pkey,
    ADD CONSTRAINT email_attachment_pieces_pkey PRIMARY KEY (message_id, attachment, piece);
ALTER TABLE email_threads DROP CONSTRAINT email_threads_pkey,
    ADD CONSTRAINT email_threads_pkey PRIMARY KEY (inbox_id, thread_id);
ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_pkey,
    ADD CONSTRAINT sms_messages_pkey PRIMARY KEY (id),
    DROP CONSTRAINT sms_messages_provider_id_key,
    ADD CONSTRAINT sms_messages_provider_id_key UNIQUE (phone_number_id, provider_message_id);
ALTER TABLE events DROP CONSTRAINT events_id_key,
    ADD CONSTRAINT events_id_key UNIQUE (id);
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_pkey,
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);
ALTER TABLE webhook_secrets DROP CONSTRAINT webhook_secrets_pkey,
    ADD CONSTRAINT webhook_secrets_pkey PRIMARY KEY (endpoint_id, created_at);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey,
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey,
    ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id);
ALTER TABLE listing_versions DROP CONSTRAINT listing_versions_pkey,
    ADD CONSTRAINT listing_versions_pkey PRIMARY KEY (owner_id);

ALTER TABLE spend_policies ADD CONSTRAINT spend_policies_wallet_id_fkey
    FOREIGN KEY (wallet_id) REFERENCES wallets (id) ON DELETE CASCADE;
ALTER TABLE wallet_spend_totals ADD CONSTRAINT wallet_spend_totals_wallet_id_fkey
    FOREIGN KEY (wallet_id) REFERENCES wallets (id) ON DELETE CASCADE;
ALTER TABLE recipient_spend_totals ADD CONSTRAINT recipient_spend_totals_wallet_id_fkey
    FOREIGN KEY (wallet_id) REFERENCES wallets (id) ON DELETE CASCADE;
ALTER TABLE transfer_intents ADD CONSTRAINT transfer_intents_wallet_id_fkey
    FOREIGN KEY (wallet_id) REFERENCES wallets (id) ON DELETE CASCADE;
ALTER TABLE x402_payments ADD CONSTRAINT x402_payments_intent_id_fkey
    FOREIGN KEY (intent_id) REFERENCES transfer_intents (id) ON DELETE CASCADE,
    ADD CONSTRAINT x402_payments_wallet_id_fkey
    FOREIGN KEY (wallet_id) REFERENCES wallets (id) ON DELETE CASCADE;
ALTER TABLE intent_approvals ADD CONSTRAINT intent_approvals_intent_id_fkey
    FOREIGN KEY (intent_id) REFERENCES transfer_intents (id) ON DELETE CASCADE;
ALTER TABLE transfer_attempts ADD CONSTRAINT transfer_attempts_intent_id_fkey
    FOREIGN KEY (intent_id) REFERENCES transfer_intents (id) ON DELETE CASCADE;
ALTER TABLE email_attachment_pieces ADD CONSTRAINT email_attachment_pieces_message_id_fkey
    FOREIGN KEY (message_id) REFERENCES email_messages (id) ON DELETE CASCADE;
ALTER TABLE webhook_secrets ADD CONSTRAINT webhook_secrets_endpoint_id_fkey
    FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey
    FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE;
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey
    FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE;

ALTER TABLE spend_policies DROP COLUMN agent_id;
ALTER TABLE wallet_spend_totals DROP COLUMN agent_id;
ALTER TABLE recipient_spend_totals DROP COLUMN agent_id;
ALTER TABLE x402_payments DROP COLUMN agent_id;
ALTER TABLE intent_approvals DROP COLUMN agent_id;
ALTER TABLE transfer_attempts DROP COLUMN agent_id;
ALTER TABLE email_attachment_pieces DROP COLUMN agent_id;
ALTER TABLE email_threads DROP COLUMN agent_id;
ALTER TABLE webhook_secrets DROP COLUMN agent_id;
ALTER TABLE webhook_attempts DROP COLUMN agent_id;
ALTER TABLE listing_versions DROP COLUMN agent_id;

ALTER TABLE wallets DROP CONSTRAINT wallets_address_registered;
DROP TABLE wallet_addresses;
ALTER TABLE wallets ADD CONSTRAINT wallets_address_key UNIQUE (address);
