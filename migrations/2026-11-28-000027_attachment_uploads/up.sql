-- Attachment bytes kept in an object store are put before the transaction that stores their
-- message; each message with such bytes is recorded here first, committed, and the transaction
-- that stores the message takes its record away. A record left over names bytes no stored
-- message owns (the server died between the two, or the message was a replay or a redelivery):
-- the sweep removes them and then the record. `swept_at` marks a record being swept, so the
-- message's transaction can no longer take it, and so another sweep takes it up again when the
-- first died halfway.
CREATE TABLE email_attachment_uploads (
    message_id uuid PRIMARY KEY,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    swept_at timestamptz
);
CREATE INDEX email_attachment_uploads_due
    ON email_attachment_uploads ((coalesce(swept_at, recorded_at)));

-- What the sandbox provider was handed of each attachment (name, type, size, digest), for
-- `agentctl sandbox outbox`; the bytes stay with the message.
ALTER TABLE sandbox_email_outbox ADD COLUMN attachments jsonb NOT NULL DEFAULT '[]';
