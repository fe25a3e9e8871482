-- Events are thin (events.md): every stream, cache and webhook of an agent reads each of its
-- events, so nothing an outside sender writes makes one large. An inbound mail's event counts its
-- attachments (the message names them) and keeps bounded parts of what the sender wrote; the
-- bounds are the domain's `events::thin` (a test of the store holds them equal).
CREATE OR REPLACE FUNCTION email_messages_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.direction = 'inbound' THEN
        PERFORM record_event(NEW.agent_id, 'email.received', jsonb_build_object(
            'message_id', NEW.id, 'thread_id', NEW.thread_id,
            'from', left(NEW.from_address, 320), 'subject', left(NEW.subject, 256),
            'verification_codes', to_jsonb(coalesce(NEW.verification_codes[1:10], '{}')),
            'attachment_count', jsonb_array_length(NEW.attachments)));
    ELSIF NEW.status = 'sent' THEN
        PERFORM record_event(NEW.agent_id, 'email.sent', jsonb_build_object(
            'message_id', NEW.id, 'provider_message_id', NEW.provider_message_id));
    ELSIF NEW.status = 'failed' THEN
        PERFORM record_event(NEW.agent_id, 'email.failed', jsonb_build_object(
            'message_id', NEW.id, 'reason', left(NEW.last_error, 512)));
    END IF;
    RETURN NULL;
END
$$;

-- The events already kept take the same shape.
UPDATE events SET data = (data - 'attachments') || jsonb_build_object(
    'from', left(data ->> 'from', 320), 'subject', left(data ->> 'subject', 256),
    'verification_codes', coalesce(
        (SELECT jsonb_agg(code ORDER BY position) FROM jsonb_array_elements(data -> 'verification_codes')
            WITH ORDINALITY AS listed(code, position) WHERE position <= 10), '[]'::jsonb),
    'attachment_count', CASE jsonb_typeof(data -> 'attachments')
        WHEN 'array' THEN jsonb_array_length(data -> 'attachments') ELSE 0 END)
WHERE type = 'email.received';
UPDATE events SET data = jsonb_set(data, '{reason}', to_jsonb(left(data ->> 'reason', 512)))
WHERE type = 'email.failed' AND jsonb_typeof(data -> 'reason') = 'string';
