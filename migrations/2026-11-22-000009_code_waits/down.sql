DROP INDEX email_messages_unseen_codes_idx;
ALTER TABLE email_messages DROP COLUMN code_seen_at;
CREATE TABLE sms_code_waits (
    agent_id   uuid NOT NULL REFERENCES agents (id),
    request_id text NOT NULL,
    message_id uuid NOT NULL REFERENCES sms_messages (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, request_id)
);
INSERT INTO sms_code_waits (agent_id, request_id, message_id, created_at)
SELECT agent_id, request_id, message_id, created_at FROM code_waits WHERE channel = 'sms';
DROP TABLE code_waits;
