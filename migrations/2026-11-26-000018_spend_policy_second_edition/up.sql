-- The spend policy's second edition (decision 0061): weekly and monthly caps, caps per recipient,
-- an auto-confirm tier and quorum approvals, each window kept as a running total (decision 0028).
-- Writes to the intents and their totals wait until the new totals are built and kept.
LOCK TABLE wallets, transfer_intents, wallet_spend_totals IN SHARE ROW EXCLUSIVE MODE;

-- Every new rule is optional: NULL means not configured.
ALTER TABLE spend_policies
    ADD COLUMN max_weekly_atomic numeric,
    ADD COLUMN max_monthly_atomic numeric,
    -- [{"address": lower-case hex, "max_per_tx_atomic": text?, "max_daily_atomic": text?}]
    ADD COLUMN recipient_limits jsonb,
    ADD COLUMN auto_confirm_max_atomic numeric,
    ADD COLUMN auto_confirm_daily_atomic numeric,
    ADD COLUMN approvals_required smallint CHECK (approvals_required BETWEEN 1 AND 5),
    ADD COLUMN approvals_required_above_atomic numeric;

-- Who confirmed an intent, and the operators' approvals it needs and has (the policy in force
-- sets `approvals_required` at creation and again at each approval and policy change while the
-- intent is pending).
ALTER TABLE transfer_intents
    ADD COLUMN confirmed_by text CHECK (confirmed_by IN ('operator', 'policy')),
    ADD COLUMN approvals_required smallint NOT NULL DEFAULT 1,
    ADD COLUMN approvals_received smallint NOT NULL DEFAULT 0;
UPDATE transfer_intents SET confirmed_by = 'operator', approvals_received = 1
WHERE confirmed_at IS NOT NULL;

-- One row per operator who approved an intent: distinct operators make a quorum.
CREATE TABLE intent_approvals (
    intent_id   uuid NOT NULL REFERENCES transfer_intents (id) ON DELETE CASCADE,
    operator    text NOT NULL,
    approved_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (intent_id, operator)
);

-- A transfer's terms never change once it is asked for; the totals count on it.
CREATE FUNCTION transfer_intents_terms_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the wallet, recipient and amount of transfer intent % never change', OLD.id
        USING ERRCODE = 'check_violation';
END
$$;
CREATE TRIGGER transfer_intents_terms_unchanged
    BEFORE UPDATE OF wallet_id, recipient_address, amount_atomic ON transfer_intents
    FOR EACH ROW
    WHEN ((NEW.wallet_id, NEW.recipient_address, NEW.amount_atomic)
          IS DISTINCT FROM (OLD.wallet_id, OLD.recipient_address, OLD.amount_atomic))
    EXECUTE FUNCTION transfer_intents_terms_unchanged();

-- The wallet's totals: the open sum (all windows share it), and per window the executed sum
-- after that window's expiry point, which admission moves to the window's start. The
-- auto-confirm window counts only the intents the policy confirmed.
ALTER TABLE wallet_spend_totals RENAME COLUMN executed_atomic TO daily_executed_atomic;
ALTER TABLE wallet_spend_totals RENAME COLUMN executed_expired_through TO daily_expired_through;
ALTER TABLE wallet_spend_totals
    ADD COLUMN weekly_executed_atomic numeric NOT NULL DEFAULT 0,
    ADD COLUMN weekly_expired_through timestamptz NOT NULL DEFAULT '-infinity',
    ADD COLUMN monthly_executed_atomic numeric NOT NULL DEFAULT 0,
    ADD COLUMN monthly_expired_through timestamptz NOT NULL DEFAULT '-infinity',
    ADD COLUMN auto_open_atomic numeric NOT NULL DEFAULT 0,
    ADD COLUMN auto_daily_executed_atomic numeric NOT NULL DEFAULT 0,
    ADD COLUMN auto_daily_expired_through timestamptz NOT NULL DEFAULT '-infinity';

-- The totals of one recipient of a wallet, made by the first send to it under a daily cap of its
-- own (from a scan of its intents, under the wallet totals' lock) and kept from then on.
CREATE TABLE recipient_spend_totals (
    wallet_id             uuid NOT NULL REFERENCES wallets (id) ON DELETE CASCADE,
    recipient_address     text NOT NULL,
    open_atomic           numeric NOT NULL DEFAULT 0,
    daily_executed_atomic numeric NOT NULL DEFAULT 0,
    daily_expired_through timestamptz NOT NULL,
    PRIMARY KEY (wallet_id, recipient_address)
);

-- What moving a recipient's and the auto-confirm window's expiry points reads.
CREATE INDEX transfer_intents_recipient_executed_idx
    ON transfer_intents (wallet_id, recipient_address, executed_at)
    INCLUDE (amount_atomic) WHERE status = 'executed';
CREATE INDEX transfer_intents_recipient_open_idx
    ON transfer_intents (wallet_id, recipient_address)
    INCLUDE (amount_atomic) WHERE status IN ('pending_confirmation', 'confirmed', 'submitted');
CREATE INDEX transfer_intents_auto_executed_idx ON transfer_intents (wallet_id, executed_at)
    INCLUDE (amount_atomic) WHERE status = 'executed' AND confirmed_by = 'policy';

-- Moves an intent's amount between the totals as it is inserted, changes state or goes, whichever
-- statement does it. OLD is NULL on insert and NEW on delete, so their terms count nothing; the
-- terms themselves never change (above).
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

DROP TRIGGER transfer_intents_spend_totals ON transfer_intents;
CREATE CONSTRAINT TRIGGER transfer_intents_spend_totals
    AFTER INSERT OR UPDATE OF status, executed_at, confirmed_by OR DELETE
    ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION transfer_intents_spend_totals();

-- The new windows of the existing wallets, their starts put where each window starts now.
UPDATE wallet_spend_totals AS totals
SET weekly_executed_atomic = sums.weekly,
    weekly_expired_through = now() - interval '7 days',
    monthly_executed_atomic = sums.monthly,
    monthly_expired_through = now() - interval '30 days',
    auto_daily_expired_through = now() - interval '24 hours'
FROM (
    SELECT wallets.id AS wallet_id,
           coalesce(sum(intent.amount_atomic) FILTER (
               WHERE intent.executed_at > now() - interval '7 days'), 0) AS weekly,
           coalesce(sum(intent.amount_atomic) FILTER (
               WHERE intent.executed_at > now() - interval '30 days'), 0) AS monthly
    FROM wallets
    LEFT JOIN transfer_intents AS intent
        ON intent.wallet_id = wallets.id AND intent.status = 'executed'
    GROUP BY wallets.id
) AS sums
WHERE totals.wallet_id = sums.wallet_id;

-- An intent's events carry who confirmed it and its approvals, as its routes show them.
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
        PERFORM record_event(NEW.agent_id, 'transfer_intent.created', intent);
        -- One the policy confirmed at its creation has entered `confirmed` too.
        IF NEW.status <> 'pending_confirmation' THEN
            PERFORM record_event(NEW.agent_id, 'transfer_intent.' || NEW.status, intent);
        END IF;
    ELSE
        PERFORM record_event(NEW.agent_id, 'transfer_intent.' || NEW.status, intent);
    END IF;
    RETURN NULL;
END
$$;
