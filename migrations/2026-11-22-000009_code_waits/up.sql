-- What a wait for a code with a request id returned, for SMS and mail alike, so its retries
-- return the same on either route.
CREATE TABLE code_waits (
    agent_id   uuid NOT NULL REFERENCES agents (id),
    request_id text NOT NULL,
    channel    text NOT NULL,
    message_id uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, request_id),
    CONSTRAINT code_waits_channel_known CHECK (channel IN ('sms', 'email'))
);
INSERT INTO code_waits (agent_id, request_id, channel, message_id, created_at)
SELECT agent_id, request_id, 'sms', message_id, created_at FROM sms_code_waits;
DROP TABLE sms_code_waits;

-- Inbound mail with verification codes is "unseen" until a wait for a code returns it.
ALTER TABLE email_messages ADD COLUMN code_seen_at timestamptz;
CREATE INDEX email_messages_unseen_codes_idx ON email_messages (inbox_id, created_at DESC, id DESC)
    WHERE direction = 'inbound' AND code_seen_at IS NULL AND verification_codes <> '{}';
