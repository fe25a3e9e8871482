-- Each inbox's threads (mail-plus.md), kept by a trigger as messages are stored, so a page of
-- threads reads one row per thread whatever the inbox holds: the subject of its first message,
-- its participants (the first 50 addresses of From, To and Cc, lowercased, in the order they
-- first appeared), how many messages it has, and its newest message.
CREATE TABLE email_threads (
    inbox_id        uuid NOT NULL REFERENCES email_inboxes (id) ON DELETE CASCADE,
    thread_id       uuid NOT NULL,
    subject         text,
    participants    text[] NOT NULL DEFAULT '{}',
    message_count   bigint NOT NULL CHECK (message_count > 0),
    last_message_at timestamptz NOT NULL,
    last_message_id uuid NOT NULL,
    PRIMARY KEY (inbox_id, thread_id)
);
CREATE INDEX email_threads_page ON email_threads (inbox_id, last_message_at DESC, thread_id DESC);
-- One thread's messages, oldest first.
CREATE INDEX email_messages_thread ON email_messages (inbox_id, thread_id, created_at, id);

-- `known` and then `added`, each address once (compared lowercased), at most 50, first come
-- first kept.
CREATE FUNCTION email_thread_participants(known text[], added text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(address ORDER BY first_seen), '{}')
    FROM (
        SELECT lower(listed.address) AS address, min(listed.position) AS first_seen
        FROM unnest(known || added) WITH ORDINALITY AS listed(address, position)
        WHERE listed.address IS NOT NULL AND listed.address <> ''
        GROUP BY lower(listed.address)
        ORDER BY first_seen
        LIMIT 50
    ) AS firsts
$$;

CREATE FUNCTION email_messages_threaded() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER email_messages_threaded
    AFTER INSERT ON email_messages
    FOR EACH ROW EXECUTE FUNCTION email_messages_threaded();

-- The threads of the messages already stored.
INSERT INTO email_threads (inbox_id, thread_id, subject, participants, message_count,
    last_message_at, last_message_id)
SELECT message.inbox_id, message.thread_id,
    (array_agg(message.subject ORDER BY message.created_at, message.id))[1],
    (SELECT email_thread_participants('{}',
        coalesce(array_agg(listed.address ORDER BY other.created_at, other.id, listed.position),
            '{}'))
     FROM email_messages AS other,
         unnest(ARRAY[other.from_address] || other.to_addresses || other.cc_addresses)
             WITH ORDINALITY AS listed(address, position)
     WHERE other.inbox_id = message.inbox_id AND other.thread_id = message.thread_id),
    count(*),
    max(message.created_at),
    (array_agg(message.id ORDER BY message.created_at DESC, message.id DESC))[1]
FROM email_messages AS message
GROUP BY message.inbox_id, message.thread_id;

-- An inbound mail's event names its attachments (id, name, type, size, whether stored), so an
-- agent can download them without reading the message first.
CREATE OR REPLACE FUNCTION email_messages_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.direction = 'inbound' THEN
        PERFORM record_event(NEW.agent_id, 'email.received', jsonb_build_object(
            'message_id', NEW.id, 'thread_id', NEW.thread_id, 'from', NEW.from_address,
            'subject', NEW.subject, 'verification_codes', to_jsonb(NEW.verification_codes),
            'attachments', NEW.attachments));
    ELSIF NEW.status = 'sent' THEN
        PERFORM record_event(NEW.agent_id, 'email.sent', jsonb_build_object(
            'message_id', NEW.id, 'provider_message_id', NEW.provider_message_id));
    ELSIF NEW.status = 'failed' THEN
        PERFORM record_event(NEW.agent_id, 'email.failed', jsonb_build_object(
            'message_id', NEW.id, 'reason', NEW.last_error));
    END IF;
    RETURN NULL;
END
$$;
