-- Sending domains: mail goes out only from a verified one. Domains of inboxes that already exist
-- were provisioned by the service itself, so they start verified.
CREATE TABLE email_domains (
    name        text PRIMARY KEY,
    verified_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT email_domains_name_lower CHECK (name = lower(name))
);
INSERT INTO email_domains (name, verified_at)
SELECT DISTINCT lower(split_part(address, '@', 2)), now() FROM email_inboxes;

-- Every message of every inbox, inbound and outbound. Outbound ones are the outbox too: accepted
-- `queued`, handed to the provider by whichever instance leases them first.
CREATE TABLE email_messages (
    id                  uuid PRIMARY KEY,
    agent_id            uuid NOT NULL REFERENCES agents (id),
    inbox_id            uuid NOT NULL REFERENCES email_inboxes (id) ON DELETE CASCADE,
    direction           text NOT NULL,
    status              text NOT NULL,
    thread_id           uuid NOT NULL,
    provider_message_id text,
    internet_message_id text,
    in_reply_to         text,
    reference_ids       text[] NOT NULL DEFAULT '{}',
    subject             text,
    from_address        text,
    to_addresses        text[] NOT NULL DEFAULT '{}',
    cc_addresses        text[] NOT NULL DEFAULT '{}',
    bcc_addresses       text[] NOT NULL DEFAULT '{}',
    reply_to_addresses  text[] NOT NULL DEFAULT '{}',
    body_text           text,
    body_html           text,
    -- [{filename, content_type, size, content_id}]
    attachments         jsonb NOT NULL DEFAULT '[]',
    -- [[name, value], ...] in the order they came; a name may repeat.
    headers             jsonb NOT NULL DEFAULT '[]',
    verification_codes  text[] NOT NULL DEFAULT '{}',
    idempotency_key     text,
    request_fingerprint bytea,
    attempts            integer NOT NULL DEFAULT 0,
    next_attempt_at     timestamptz,
    lease_id            uuid,
    lease_until         timestamptz,
    -- The provider's last transient error while queued; the reason of a `failed` message.
    last_error          text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    received_at         timestamptz,
    sent_at             timestamptz,
    CONSTRAINT email_messages_direction_known CHECK (direction IN ('inbound', 'outbound')),
    CONSTRAINT email_messages_status_known CHECK (status IN ('queued', 'sent', 'failed', 'received')),
    CONSTRAINT email_messages_status_fits_direction CHECK (
        (direction = 'inbound' AND status = 'received' AND received_at IS NOT NULL
            AND provider_message_id IS NOT NULL)
        OR (direction = 'outbound' AND status <> 'received' AND sent_at IS NOT NULL)
    ),
    CONSTRAINT email_messages_queued_is_due CHECK (status <> 'queued' OR next_attempt_at IS NOT NULL),
    CONSTRAINT email_messages_key_has_fingerprint CHECK (
        (idempotency_key IS NULL) = (request_fingerprint IS NULL)
    )
);

-- Keyset pages of an inbox, newest first, with and without the direction filter.
CREATE INDEX email_messages_inbox_page_idx ON email_messages (inbox_id, created_at DESC, id DESC);
CREATE INDEX email_messages_inbox_direction_page_idx
    ON email_messages (inbox_id, direction, created_at DESC, id DESC);
-- A redelivered webhook finds the message it already stored.
CREATE UNIQUE INDEX email_messages_inbound_provider_id_key
    ON email_messages (inbox_id, provider_message_id) WHERE direction = 'inbound';
CREATE UNIQUE INDEX email_messages_idempotency_key
    ON email_messages (agent_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Threading finds the message a new one answers.
CREATE INDEX email_messages_internet_id_idx
    ON email_messages (inbox_id, internet_message_id) WHERE internet_message_id IS NOT NULL;
CREATE INDEX email_messages_due_idx ON email_messages (next_attempt_at) WHERE status = 'queued';

-- Buckets of sponsors too, not only of agents.
ALTER TABLE rate_limit_buckets DROP CONSTRAINT rate_limit_buckets_agent_id_fkey;
ALTER TABLE rate_limit_buckets RENAME COLUMN agent_id TO subject_id;

-- The sandbox email provider's side: every hand-off it received, as `agentctl sandbox outbox`
-- shows them. Nothing is deduplicated, so a message handed over twice shows twice.
CREATE TABLE sandbox_email_outbox (
    provider_message_id uuid PRIMARY KEY,
    message_id          uuid NOT NULL,
    internet_message_id text NOT NULL,
    from_address        text NOT NULL,
    to_addresses        text[] NOT NULL,
    cc_addresses        text[] NOT NULL,
    bcc_addresses       text[] NOT NULL,
    subject             text NOT NULL,
    body_text           text NOT NULL,
    in_reply_to         text,
    reference_ids       text[] NOT NULL,
    headers             jsonb NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_email_outbox_created_at_idx ON sandbox_email_outbox (created_at);
