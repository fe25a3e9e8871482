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

-- What thin events left out of those kept is not brought back: they count their attachments.
UPDATE events SET data = (data - 'attachment_count') || jsonb_build_object('attachments',
    (SELECT attachments FROM email_messages WHERE id = (events.data ->> 'message_id')::uuid))
WHERE type = 'email.received';
