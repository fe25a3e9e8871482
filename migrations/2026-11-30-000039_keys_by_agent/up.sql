-- Every table of agent data carries its agent's id, and every key of it includes `agent_id`
-- (decision 0091): no row and no constraint spans two agents, so the schema stays ready to be
-- distributed by agent. The store test `distribution` reads the catalog and holds it so.
-- Rows already stored take the agent of the row they belong to.

-- A wallet's address stays unique across agents in a table of its own (a reference table, once
-- distributed: a wallet's shard could not check it). Its key keeps the name the store knows a
-- second wallet at one address by.
ALTER TABLE wallets DROP CONSTRAINT wallets_address_key;
CREATE TABLE wallet_addresses (
    address  text CONSTRAINT wallets_address_key PRIMARY KEY,
    agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE
);
INSERT INTO wallet_addresses (address, agent_id) SELECT address, agent_id FROM wallets;
ALTER TABLE wallets ADD CONSTRAINT wallets_address_registered
    FOREIGN KEY (address) REFERENCES wallet_addresses (address);

-- The agent of each row of the tables that had none. A policy taking its agent is no change of
-- it: its triggers (a version counted, profiles reread) stay off meanwhile.
ALTER TABLE spend_policies ADD COLUMN agent_id uuid;
ALTER TABLE spend_policies DISABLE TRIGGER USER;
UPDATE spend_policies AS policy SET agent_id = wallet.agent_id
FROM wallets AS wallet WHERE wallet.id = policy.wallet_id;
ALTER TABLE spend_policies ENABLE TRIGGER USER;

ALTER TABLE wallet_spend_totals ADD COLUMN agent_id uuid;
UPDATE wallet_spend_totals AS totals SET agent_id = wallet.agent_id
FROM wallets AS wallet WHERE wallet.id = totals.wallet_id;

ALTER TABLE recipient_spend_totals ADD COLUMN agent_id uuid;
UPDATE recipient_spend_totals AS totals SET agent_id = wallet.agent_id
FROM wallets AS wallet WHERE wallet.id = totals.wallet_id;

ALTER TABLE x402_payments ADD COLUMN agent_id uuid;
UPDATE x402_payments AS payment SET agent_id = intent.agent_id
FROM transfer_intents AS intent WHERE intent.id = payment.intent_id;

ALTER TABLE intent_approvals ADD COLUMN agent_id uuid;
UPDATE intent_approvals AS approval SET agent_id = intent.agent_id
FROM transfer_intents AS intent WHERE intent.id = approval.intent_id;

ALTER TABLE transfer_attempts ADD COLUMN agent_id uuid;
UPDATE transfer_attempts AS attempt SET agent_id = intent.agent_id
FROM transfer_intents AS intent WHERE intent.id = attempt.intent_id;

ALTER TABLE email_attachment_pieces ADD COLUMN agent_id uuid;
UPDATE email_attachment_pieces AS piece SET agent_id = message.agent_id
FROM email_messages AS message WHERE message.id = piece.message_id;

ALTER TABLE email_threads ADD COLUMN agent_id uuid;
UPDATE email_threads AS thread SET agent_id = inbox.agent_id
FROM email_inboxes AS inbox WHERE inbox.id = thread.inbox_id;

ALTER TABLE webhook_secrets ADD COLUMN agent_id uuid;
UPDATE webhook_secrets AS secret SET agent_id = endpoint.agent_id
FROM webhook_endpoints AS endpoint WHERE endpoint.id = secret.endpoint_id;

ALTER TABLE webhook_attempts ADD COLUMN agent_id uuid;
UPDATE webhook_attempts AS attempt SET agent_id = delivery.agent_id
FROM webhook_deliveries AS delivery WHERE delivery.id = attempt.delivery_id;

-- A listing's owner is an agent (its intents), a wallet (its policy) or an inbox (its mail).
-- A count whose owner is gone is read by no one.
ALTER TABLE listing_versions ADD COLUMN agent_id uuid;
UPDATE listing_versions AS listing SET agent_id = coalesce(
    (SELECT agent.id FROM agents AS agent WHERE agent.id = listing.owner_id),
    (SELECT wallet.agent_id FROM wallets AS wallet WHERE wallet.id = listing.owner_id),
    (SELECT inbox.agent_id FROM email_inboxes AS inbox WHERE inbox.id = listing.owner_id));
DELETE FROM listing_versions WHERE agent_id IS NULL;

ALTER TABLE spend_policies ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE wallet_spend_totals ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE recipient_spend_totals ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE x402_payments ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE intent_approvals ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE transfer_attempts ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE email_attachment_pieces ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE email_threads ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE webhook_secrets ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE webhook_attempts ALTER COLUMN agent_id SET NOT NULL;
ALTER TABLE listing_versions ALTER COLUMN agent_id SET NOT NULL;

-- The foreign keys on the keys rebuilt below, made again on them after.
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

-- Each key with `agent_id` last: the rows are still found by their own ids first.
ALTER TABLE wallets DROP CONSTRAINT wallets_pkey,
    ADD CONSTRAINT wallets_pkey PRIMARY KEY (id, agent_id);
ALTER TABLE spend_policies DROP CONSTRAINT spend_policies_pkey,
    ADD CONSTRAINT spend_policies_pkey PRIMARY KEY (id, agent_id),
    DROP CONSTRAINT spend_policies_wallet_id_key,
    ADD CONSTRAINT spend_policies_wallet_id_key UNIQUE (wallet_id, agent_id);
ALTER TABLE wallet_spend_totals DROP CONSTRAINT wallet_spend_totals_pkey,
    ADD CONSTRAINT wallet_spend_totals_pkey PRIMARY KEY (wallet_id, agent_id);
ALTER TABLE recipient_spend_totals DROP CONSTRAINT recipient_spend_totals_pkey,
    ADD CONSTRAINT recipient_spend_totals_pkey
        PRIMARY KEY (wallet_id, recipient_address, agent_id);
ALTER TABLE transfer_intents DROP CONSTRAINT transfer_intents_pkey,
    ADD CONSTRAINT transfer_intents_pkey PRIMARY KEY (id, agent_id);
ALTER TABLE x402_payments DROP CONSTRAINT x402_payments_pkey,
    ADD CONSTRAINT x402_payments_pkey PRIMARY KEY (intent_id, agent_id),
    DROP CONSTRAINT x402_payments_nonce_once,
    ADD CONSTRAINT x402_payments_nonce_once UNIQUE (wallet_id, nonce, agent_id);
ALTER TABLE intent_approvals DROP CONSTRAINT intent_approvals_pkey,
    ADD CONSTRAINT intent_approvals_pkey PRIMARY KEY (intent_id, operator, agent_id);
ALTER TABLE transfer_attempts DROP CONSTRAINT transfer_attempts_pkey,
    ADD CONSTRAINT transfer_attempts_pkey PRIMARY KEY (tx_hash, agent_id);
ALTER TABLE email_messages DROP CONSTRAINT email_messages_pkey,
    ADD CONSTRAINT email_messages_pkey PRIMARY KEY (id, agent_id);
DROP INDEX email_messages_inbound_provider_id_key;
CREATE UNIQUE INDEX email_messages_inbound_provider_id_key
    ON email_messages (inbox_id, provider_message_id, agent_id) WHERE direction = 'inbound';
ALTER TABLE email_attachment_pieces DROP CONSTRAINT email_attachment_pieces_pkey,
    ADD CONSTRAINT email_attachment_pieces_pkey
        PRIMARY KEY (message_id, attachment, piece, agent_id);
ALTER TABLE email_threads DROP CONSTRAINT email_threads_pkey,
    ADD CONSTRAINT email_threads_pkey PRIMARY KEY (inbox_id, thread_id, agent_id);
ALTER TABLE sms_messages DROP CONSTRAINT sms_messages_pkey,
    ADD CONSTRAINT sms_messages_pkey PRIMARY KEY (id, agent_id),
    DROP CONSTRAINT sms_messages_provider_id_key,
    ADD CONSTRAINT sms_messages_provider_id_key
        UNIQUE (phone_number_id, provider_message_id, agent_id);
ALTER TABLE events DROP CONSTRAINT events_id_key,
    ADD CONSTRAINT events_id_key UNIQUE (id, agent_id);
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_pkey,
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id, agent_id);
ALTER TABLE webhook_secrets DROP CONSTRAINT webhook_secrets_pkey,
    ADD CONSTRAINT webhook_secrets_pkey PRIMARY KEY (endpoint_id, created_at, agent_id);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey,
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id, agent_id);
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey,
    ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id, agent_id);
ALTER TABLE listing_versions DROP CONSTRAINT listing_versions_pkey,
    ADD CONSTRAINT listing_versions_pkey PRIMARY KEY (owner_id, agent_id);

-- Each foreign key between two tables of agent data pairs their agents: a row refers only to
-- a row of its own agent.
ALTER TABLE spend_policies ADD CONSTRAINT spend_policies_wallet_id_fkey
    FOREIGN KEY (wallet_id, agent_id) REFERENCES wallets (id, agent_id) ON DELETE CASCADE;
ALTER TABLE wallet_spend_totals ADD CONSTRAINT wallet_spend_totals_wallet_id_fkey
    FOREIGN KEY (wallet_id, agent_id) REFERENCES wallets (id, agent_id) ON DELETE CASCADE;
ALTER TABLE recipient_spend_totals ADD CONSTRAINT recipient_spend_totals_wallet_id_fkey
    FOREIGN KEY (wallet_id, agent_id) REFERENCES wallets (id, agent_id) ON DELETE CASCADE;
ALTER TABLE transfer_intents ADD CONSTRAINT transfer_intents_wallet_id_fkey
    FOREIGN KEY (wallet_id, agent_id) REFERENCES wallets (id, agent_id) ON DELETE CASCADE;
ALTER TABLE x402_payments ADD CONSTRAINT x402_payments_intent_id_fkey
    FOREIGN KEY (intent_id, agent_id) REFERENCES transfer_intents (id, agent_id)
        ON DELETE CASCADE,
    ADD CONSTRAINT x402_payments_wallet_id_fkey
    FOREIGN KEY (wallet_id, agent_id) REFERENCES wallets (id, agent_id) ON DELETE CASCADE;
ALTER TABLE intent_approvals ADD CONSTRAINT intent_approvals_intent_id_fkey
    FOREIGN KEY (intent_id, agent_id) REFERENCES transfer_intents (id, agent_id)
        ON DELETE CASCADE;
ALTER TABLE transfer_attempts ADD CONSTRAINT transfer_attempts_intent_id_fkey
    FOREIGN KEY (intent_id, agent_id) REFERENCES transfer_intents (id, agent_id)
        ON DELETE CASCADE;
ALTER TABLE email_attachment_pieces ADD CONSTRAINT email_attachment_pieces_message_id_fkey
    FOREIGN KEY (message_id, agent_id) REFERENCES email_messages (id, agent_id)
        ON DELETE CASCADE;
ALTER TABLE webhook_secrets ADD CONSTRAINT webhook_secrets_endpoint_id_fkey
    FOREIGN KEY (endpoint_id, agent_id) REFERENCES webhook_endpoints (id, agent_id)
        ON DELETE CASCADE;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey
    FOREIGN KEY (endpoint_id, agent_id) REFERENCES webhook_endpoints (id, agent_id)
        ON DELETE CASCADE;
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey
    FOREIGN KEY (delivery_id, agent_id) REFERENCES webhook_deliveries (id, agent_id)
        ON DELETE CASCADE;

-- The rows the triggers write carry the agent of the row that fired them.
CREATE OR REPLACE FUNCTION wallet_spend_totals_create() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO wallet_spend_totals (wallet_id, agent_id) VALUES (NEW.id, NEW.agent_id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION email_messages_threaded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO email_threads AS thread (inbox_id, thread_id, agent_id, subject, participants,
        message_count, last_message_at, last_message_id)
    VALUES (NEW.inbox_id, NEW.thread_id, NEW.agent_id, NEW.subject,
        email_thread_participants('{}', ARRAY[NEW.from_address] || NEW.to_addresses
            || NEW.cc_addresses),
        1, NEW.created_at, NEW.id)
    ON CONFLICT (inbox_id, thread_id, agent_id) DO UPDATE SET
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

-- Each listing's count with its owner's agent. The owners are still counted in one order, the
-- lesser first (migration 000019).
CREATE FUNCTION listing_changed(old_agent uuid, old_owner uuid, new_agent uuid, new_owner uuid)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    new_first boolean := old_owner IS NULL OR new_owner < old_owner;
    first_agent uuid := CASE WHEN new_first THEN new_agent ELSE old_agent END;
    first_owner uuid := CASE WHEN new_first THEN new_owner ELSE old_owner END;
    second_agent uuid := CASE WHEN new_first THEN old_agent ELSE new_agent END;
    second_owner uuid := CASE WHEN new_first THEN old_owner ELSE new_owner END;
BEGIN
    IF first_owner IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO listing_versions AS listing (owner_id, agent_id, version)
    VALUES (first_owner, first_agent, 1)
    ON CONFLICT (owner_id, agent_id) DO UPDATE SET version = listing.version + 1;
    IF second_owner <> first_owner THEN
        INSERT INTO listing_versions AS listing (owner_id, agent_id, version)
        VALUES (second_owner, second_agent, 1)
        ON CONFLICT (owner_id, agent_id) DO UPDATE SET version = listing.version + 1;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION email_messages_listing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.agent_id, OLD.inbox_id, NEW.agent_id, NEW.inbox_id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION transfer_intents_listing_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.agent_id, OLD.agent_id, NEW.agent_id, NEW.agent_id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION spend_policies_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM listing_changed(OLD.agent_id, OLD.wallet_id, NEW.agent_id, NEW.wallet_id);
    RETURN NULL;
END
$$;

DROP FUNCTION listing_changed(uuid, uuid);
