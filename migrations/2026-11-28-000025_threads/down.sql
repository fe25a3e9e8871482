CREATE OR REPLACE FUNCTION email_messages_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.direction = 'inbound' THEN
        PERFORM record_event(NEW.agent_id, 'email.received', jsonb_build_object(
            'message_id', NEW.id, 'thread_id', NEW.thread_id, 'from', NEW.from_address,
            'subject', NEW.subject, 'verification_codes', to_jsonb(NEW.verification_codes)));
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
DROP TRIGGER email_messages_threaded ON email_messages;
DROP FUNCTION email_messages_threaded();
DROP FUNCTION email_thread_participants(text[], text[]);
DROP INDEX email_messages_thread;
DROP TABLE email_threads;
