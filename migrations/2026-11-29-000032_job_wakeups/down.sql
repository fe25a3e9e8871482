DROP TRIGGER email_messages_zz_woken ON email_messages;
DROP FUNCTION notify_queued_mail();
DROP TRIGGER transfer_intents_zz_woken_update ON transfer_intents;
DROP TRIGGER transfer_intents_zz_woken_insert ON transfer_intents;
DROP FUNCTION notify_confirmed_intent();
