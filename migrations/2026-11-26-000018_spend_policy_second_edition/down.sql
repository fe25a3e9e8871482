LOCK TABLE wallets, transfer_intents, wallet_spend_totals IN SHARE ROW EXCLUSIVE MODE;

DROP INDEX transfer_intents_auto_executed_idx;
DROP INDEX transfer_intents_recipient_open_idx;
DROP INDEX transfer_intents_recipient_executed_idx;
DROP TABLE recipient_spend_totals;
ALTER TABLE wallet_spend_totals
    DROP COLUMN weekly_executed_atomic,
    DROP COLUMN weekly_expired_through,
    DROP COLUMN monthly_executed_atomic,
    DROP COLUMN monthly_expired_through,
    DROP COLUMN auto_open_atomic,
    DROP COLUMN auto_daily_executed_atomic,
    DROP COLUMN auto_daily_expired_through;
ALTER TABLE wallet_spend_totals RENAME COLUMN daily_executed_atomic TO executed_atomic;
ALTER TABLE wallet_spend_totals RENAME COLUMN daily_expired_through TO executed_expired_through;

CREATE OR REPLACE FUNCTION transfer_intents_spend_totals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    open_statuses constant text[] := ARRAY['pending_confirmation', 'confirmed', 'submitted'];
BEGIN
    -- An intent that stays open with its amount (confirmed to submitted) moves nothing: no lock.
    IF TG_OP = 'UPDATE' AND OLD.wallet_id = NEW.wallet_id
        AND OLD.amount_atomic = NEW.amount_atomic
        AND OLD.status = ANY (open_statuses) AND NEW.status = ANY (open_statuses) THEN
        RETURN NULL;
    END IF;
    UPDATE wallet_spend_totals AS totals
    SET open_atomic = totals.open_atomic
            + CASE WHEN totals.wallet_id = NEW.wallet_id AND NEW.status = ANY (open_statuses)
                   THEN NEW.amount_atomic ELSE 0 END
            - CASE WHEN totals.wallet_id = OLD.wallet_id AND OLD.status = ANY (open_statuses)
                   THEN OLD.amount_atomic ELSE 0 END,
        executed_atomic = totals.executed_atomic
            + CASE WHEN totals.wallet_id = NEW.wallet_id AND NEW.status = 'executed'
                        AND NEW.executed_at > totals.executed_expired_through
                   THEN NEW.amount_atomic ELSE 0 END
            - CASE WHEN totals.wallet_id = OLD.wallet_id AND OLD.status = 'executed'
                        AND OLD.executed_at > totals.executed_expired_through
                   THEN OLD.amount_atomic ELSE 0 END
    WHERE totals.wallet_id IN (OLD.wallet_id, NEW.wallet_id);
    RETURN NULL;
END
$$;

DROP TRIGGER transfer_intents_spend_totals ON transfer_intents;
CREATE CONSTRAINT TRIGGER transfer_intents_spend_totals
    AFTER INSERT OR UPDATE OF wallet_id, status, amount_atomic, executed_at OR DELETE
    ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION transfer_intents_spend_totals();

CREATE OR REPLACE FUNCTION transfer_intents_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM record_event(NEW.agent_id,
        'transfer_intent.' || CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE NEW.status END,
        jsonb_build_object(
            'id', NEW.id, 'agent_id', NEW.agent_id, 'wallet_id', NEW.wallet_id,
            'status', NEW.status, 'asset', NEW.asset, 'chain', NEW.chain,
            'token_address', NEW.token_address, 'recipient_address', NEW.recipient_address,
            'amount_atomic', NEW.amount_atomic::text, 'idempotency_key', NEW.idempotency_key,
            'tx_hash', NEW.tx_hash, 'failure_reason', NEW.failure_reason,
            'created_at', NEW.created_at, 'updated_at', NEW.updated_at,
            'confirmed_at', NEW.confirmed_at, 'decided_by', NEW.decided_by));
    RETURN NULL;
END
$$;

DROP TRIGGER transfer_intents_terms_unchanged ON transfer_intents;
DROP FUNCTION transfer_intents_terms_unchanged();
DROP TABLE intent_approvals;
ALTER TABLE transfer_intents
    DROP COLUMN confirmed_by,
    DROP COLUMN approvals_required,
    DROP COLUMN approvals_received;
ALTER TABLE spend_policies
    DROP COLUMN max_weekly_atomic,
    DROP COLUMN max_monthly_atomic,
    DROP COLUMN recipient_limits,
    DROP COLUMN auto_confirm_max_atomic,
    DROP COLUMN auto_confirm_daily_atomic,
    DROP COLUMN approvals_required,
    DROP COLUMN approvals_required_above_atomic;
