DELETE FROM transfer_intents WHERE id IN (SELECT intent_id FROM x402_payments);
DROP TABLE x402_payments;
DROP TABLE chain_heads;

CREATE OR REPLACE FUNCTION transfer_intents_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    intent jsonb := jsonb_build_object(
        'id', NEW.id, 'agent_id', NEW.agent_id, 'wallet_id', NEW.wallet_id,
        'status', NEW.status, 'asset', NEW.asset, 'chain', NEW.chain,
        'token_address', NEW.token_address, 'recipient_address', NEW.recipient_address,
        'amount_atomic', NEW.amount_atomic::text, 'idempotency_key', NEW.idempotency_key,
        'tx_hash', NEW.tx_hash, 'failure_reason', NEW.failure_reason,
        'created_at', NEW.created_at, 'updated_at', NEW.updated_at,
        'confirmed_at', NEW.confirmed_at, 'decided_by', NEW.decided_by,
        'confirmed_by', NEW.confirmed_by, 'approvals_required', NEW.approvals_required,
        'approvals_received', NEW.approvals_received);
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM record_event(NEW.agent_id, 'transfer_intent.created', intent, NEW.key_id);
        -- One the policy confirmed at its creation has entered `confirmed` too.
        IF NEW.status <> 'pending_confirmation' THEN
            PERFORM record_event(NEW.agent_id, 'transfer_intent.' || NEW.status, intent, NEW.key_id);
        END IF;
    ELSE
        PERFORM record_event(NEW.agent_id, 'transfer_intent.' || NEW.status, intent, NEW.key_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION transfer_intents_spend_totals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    open_statuses constant text[] := ARRAY['pending_confirmation', 'confirmed', 'submitted'];
    intent_wallet uuid := coalesce(NEW.wallet_id, OLD.wallet_id);
    recipient text := coalesce(NEW.recipient_address, OLD.recipient_address);
    amount numeric := coalesce(NEW.amount_atomic, OLD.amount_atomic);
    new_open numeric := CASE WHEN NEW.status = ANY (open_statuses) THEN amount ELSE 0 END;
    old_open numeric := CASE WHEN OLD.status = ANY (open_statuses) THEN amount ELSE 0 END;
    new_executed timestamptz := CASE WHEN NEW.status = 'executed' THEN NEW.executed_at END;
    old_executed timestamptz := CASE WHEN OLD.status = 'executed' THEN OLD.executed_at END;
    new_auto boolean := coalesce(NEW.confirmed_by = 'policy', false);
    old_auto boolean := coalesce(OLD.confirmed_by = 'policy', false);
BEGIN
    -- An intent whose contribution stays what it was (confirmed to submitted) moves nothing and
    -- takes no lock.
    IF new_open = old_open AND new_executed IS NOT DISTINCT FROM old_executed
        AND new_auto = old_auto THEN
        RETURN NULL;
    END IF;
    UPDATE wallet_spend_totals AS totals
    SET open_atomic = totals.open_atomic + new_open - old_open,
        daily_executed_atomic = totals.daily_executed_atomic
            + CASE WHEN new_executed > totals.daily_expired_through THEN amount ELSE 0 END
            - CASE WHEN old_executed > totals.daily_expired_through THEN amount ELSE 0 END,
        weekly_executed_atomic = totals.weekly_executed_atomic
            + CASE WHEN new_executed > totals.weekly_expired_through THEN amount ELSE 0 END
            - CASE WHEN old_executed > totals.weekly_expired_through THEN amount ELSE 0 END,
        monthly_executed_atomic = totals.monthly_executed_atomic
            + CASE WHEN new_executed > totals.monthly_expired_through THEN amount ELSE 0 END
            - CASE WHEN old_executed > totals.monthly_expired_through THEN amount ELSE 0 END,
        auto_open_atomic = totals.auto_open_atomic
            + CASE WHEN new_auto THEN new_open ELSE 0 END
            - CASE WHEN old_auto THEN old_open ELSE 0 END,
        auto_daily_executed_atomic = totals.auto_daily_executed_atomic
            + CASE WHEN new_auto AND new_executed > totals.auto_daily_expired_through
                   THEN amount ELSE 0 END
            - CASE WHEN old_auto AND old_executed > totals.auto_daily_expired_through
                   THEN amount ELSE 0 END
    WHERE totals.wallet_id = intent_wallet;
    -- After the wallet's totals, as every writer of both takes them.
    UPDATE recipient_spend_totals AS totals
    SET open_atomic = totals.open_atomic + new_open - old_open,
        daily_executed_atomic = totals.daily_executed_atomic
            + CASE WHEN new_executed > totals.daily_expired_through THEN amount ELSE 0 END
            - CASE WHEN old_executed > totals.daily_expired_through THEN amount ELSE 0 END
    WHERE totals.wallet_id = intent_wallet AND totals.recipient_address = recipient;
    RETURN NULL;
END
$$;

DROP INDEX transfer_intents_recipient_open_idx;
CREATE INDEX transfer_intents_recipient_open_idx
    ON transfer_intents (wallet_id, recipient_address)
    INCLUDE (amount_atomic) WHERE status IN ('pending_confirmation', 'confirmed', 'submitted');
DROP INDEX transfer_intents_wallet_open_idx;
CREATE INDEX transfer_intents_wallet_open_idx ON transfer_intents (wallet_id)
    INCLUDE (amount_atomic)
    WHERE status IN ('pending_confirmation', 'confirmed', 'submitted');
DROP INDEX transfer_intents_open_idx;
CREATE INDEX transfer_intents_open_idx ON transfer_intents (status, created_at)
    WHERE status IN ('pending_confirmation', 'confirmed', 'submitted');

ALTER TABLE transfer_intents DROP CONSTRAINT transfer_intents_submission_recorded;
ALTER TABLE transfer_intents ADD CONSTRAINT transfer_intents_submission_recorded CHECK (
    status NOT IN ('submitted', 'executed') OR (tx_hash IS NOT NULL AND nonce IS NOT NULL));
ALTER TABLE transfer_intents DROP COLUMN kind;
ALTER TABLE transfer_intents DROP COLUMN block_number;
ALTER TABLE spend_policies DROP COLUMN x402_enabled;
ALTER TABLE transfer_intents DROP CONSTRAINT transfer_intents_status_known;
ALTER TABLE transfer_intents ADD CONSTRAINT transfer_intents_status_known CHECK (status IN (
    'pending_confirmation', 'confirmed', 'submitted', 'executed', 'failed', 'rejected', 'expired'));

