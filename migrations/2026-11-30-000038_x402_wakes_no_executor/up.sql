-- The executor sends only transfers (an x402 payment is signed for the agent and settled by its
-- payee): an x402 intent entering `confirmed` no longer wakes the executors of every instance
-- for a round that finds nothing.
DROP TRIGGER transfer_intents_zz_woken_insert ON transfer_intents;
DROP TRIGGER transfer_intents_zz_woken_update ON transfer_intents;
CREATE CONSTRAINT TRIGGER transfer_intents_zz_woken_insert
    AFTER INSERT ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status = 'confirmed' AND NEW.kind = 'transfer')
    EXECUTE FUNCTION notify_confirmed_intent();
CREATE CONSTRAINT TRIGGER transfer_intents_zz_woken_update
    AFTER UPDATE OF status ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status = 'confirmed' AND OLD.status IS DISTINCT FROM 'confirmed'
                       AND NEW.kind = 'transfer')
    EXECUTE FUNCTION notify_confirmed_intent();
