-- The executor and the outbox are woken at the commit that gives them work, on every instance,
-- as webhook deliveries are (migration 000017): an intent entering `confirmed` (the policy's
-- confirmation at its creation, an operator's, a submission released back) and an outbound mail
-- queued. Their polls stay only for work that comes due by time (retries, receipts). Deferred to
-- commit like the events' triggers: a notification is sent only by a transaction that commits.
CREATE FUNCTION notify_confirmed_intent() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agent_runtime_events', 'intents-confirmed');
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER transfer_intents_zz_woken_insert
    AFTER INSERT ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status = 'confirmed')
    EXECUTE FUNCTION notify_confirmed_intent();
CREATE CONSTRAINT TRIGGER transfer_intents_zz_woken_update
    AFTER UPDATE OF status ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status = 'confirmed' AND OLD.status IS DISTINCT FROM 'confirmed')
    EXECUTE FUNCTION notify_confirmed_intent();

CREATE FUNCTION notify_queued_mail() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agent_runtime_events', 'mail-queued');
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER email_messages_zz_woken
    AFTER INSERT ON email_messages
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status = 'queued')
    EXECUTE FUNCTION notify_queued_mail();
