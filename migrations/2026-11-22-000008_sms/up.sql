-- Every SMS of every number: what the provider's webhook delivered and what a sync brought in,
-- once per provider id. Inbound messages are "unseen" until a wait for a code returns them.
CREATE TABLE sms_messages (
    id                   uuid PRIMARY KEY,
    agent_id             uuid NOT NULL REFERENCES agents (id),
    phone_number_id      uuid NOT NULL REFERENCES phone_numbers (id) ON DELETE CASCADE,
    direction            text NOT NULL,
    provider             text NOT NULL,
    provider_message_id  text NOT NULL,
    -- How it came in: `webhook`, `sync` or `sandbox`.
    source               text NOT NULL,
    from_number          text NOT NULL,
    to_number            text NOT NULL,
    body                 text NOT NULL,
    parsed_code          text,
    service_name         text,
    provider_received_at timestamptz,
    seen_at              timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sms_messages_direction_known CHECK (direction IN ('inbound', 'outbound')),
    CONSTRAINT sms_messages_provider_id_key UNIQUE (phone_number_id, provider_message_id)
);
CREATE INDEX sms_messages_page_idx ON sms_messages (phone_number_id, created_at DESC, id DESC);
CREATE INDEX sms_messages_unseen_idx ON sms_messages (phone_number_id, created_at DESC, id DESC)
    WHERE direction = 'inbound' AND seen_at IS NULL;

-- What a wait for a code with a request id returned, so its retries return the same.
CREATE TABLE sms_code_waits (
    agent_id   uuid NOT NULL REFERENCES agents (id),
    request_id text NOT NULL,
    message_id uuid NOT NULL REFERENCES sms_messages (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, request_id)
);

-- The sandbox SMS provider's side: the messages it holds for its numbers.
CREATE TABLE sandbox_sms (
    sid         text PRIMARY KEY,
    from_number text NOT NULL,
    to_number   text NOT NULL,
    body        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_sms_to_idx ON sandbox_sms (to_number, created_at DESC);
