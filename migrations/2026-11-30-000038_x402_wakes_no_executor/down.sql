DROP TRIGGER transfer_intents_zz_woken_insert ON transfer_intents;
DROP TRIGGER transfer_intents_zz_woken_update ON transfer_intents;
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
