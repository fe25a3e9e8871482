-- Running totals of what each wallet's intents hold in the spend window, so that admitting a send
-- reads one row instead of summing every intent of the window (decision 0028).
-- Writes to both tables wait until the totals are built and kept, so no change is missed.
LOCK TABLE wallets, transfer_intents IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE wallet_spend_totals (
    wallet_id                uuid PRIMARY KEY REFERENCES wallets (id) ON DELETE CASCADE,
    -- The amounts of the wallet's intents whose money may still move.
    open_atomic              numeric NOT NULL DEFAULT 0,
    -- The amounts of its executed intents with executed_at after executed_expired_through.
    executed_atomic          numeric NOT NULL DEFAULT 0,
    -- Executed intents up to this time have left the window; admission moves it to
    -- now() - window, taking out (or putting back) the intents it passes.
    executed_expired_through timestamptz NOT NULL DEFAULT '-infinity'
);

-- Every wallet has its totals, so admission can lock them.
CREATE FUNCTION wallet_spend_totals_create() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO wallet_spend_totals (wallet_id) VALUES (NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER wallets_spend_totals AFTER INSERT ON wallets
    FOR EACH ROW EXECUTE FUNCTION wallet_spend_totals_create();

-- Moves an intent's amount between the totals as it is inserted, changes or goes, whichever
-- statement does it. OLD is NULL on insert and NEW on delete, so their terms count nothing.
CREATE FUNCTION transfer_intents_spend_totals() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Deferred to commit, so a transaction takes the totals' row lock after every other lock it
-- takes (an intent's, then its wallet's to give a nonce back) and never waits while holding it;
-- admission, which locks the wallet and then the totals, cannot deadlock with it.
CREATE CONSTRAINT TRIGGER transfer_intents_spend_totals
    AFTER INSERT OR UPDATE OF wallet_id, status, amount_atomic, executed_at OR DELETE
    ON transfer_intents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION transfer_intents_spend_totals();

-- The existing wallets, with their window's start put at 24 hours ago (the daily window);
-- admission moves it to whatever window it is given.
INSERT INTO wallet_spend_totals (wallet_id, open_atomic, executed_atomic, executed_expired_through)
SELECT wallets.id,
       coalesce(sum(intent.amount_atomic) FILTER (
           WHERE intent.status IN ('pending_confirmation', 'confirmed', 'submitted')), 0),
       coalesce(sum(intent.amount_atomic) FILTER (
           WHERE intent.status = 'executed' AND intent.executed_at > now() - interval '24 hours'), 0),
       now() - interval '24 hours'
FROM wallets
LEFT JOIN transfer_intents AS intent ON intent.wallet_id = wallets.id
GROUP BY wallets.id;
