-- x402 payments are transfer intents (decision 0085): admitted under the same spend windows,
-- confirmed the same way, then `authorized` (an EIP-3009 authorization signed and handed out)
-- until the token reports it used (`executed`) or its validBefore passes (`expired`).

-- What an x402 intent pays, one row per intent of that kind, written with it: an intent with a
-- row here is an x402 payment.
CREATE TABLE x402_payments (
    intent_id        uuid PRIMARY KEY REFERENCES transfer_intents (id) ON DELETE CASCADE,
    wallet_id        uuid NOT NULL REFERENCES wallets (id) ON DELETE CASCADE,
    -- The challenge's chosen offer as the server wrote it, with its version and resource: what
    -- the authorization pays and echoes, signed once the intent is confirmed.
    offer            jsonb NOT NULL,
    resource_url     text,
    network          text NOT NULL,
    -- Set together, in the transaction that moves the intent to `authorized`.
    nonce            bytea,
    valid_after      bigint,
    valid_before     timestamptz,
    -- The payment header's value, answered again to a retry under the same idempotency key.
    payment          text,
    -- The server's decoded settlement, when a fetch made here received one.
    payment_response jsonb,
    -- The first block not yet searched for the authorization's use (`AuthorizationUsed`): the
    -- chain's head known before it was signed, moved on by the settlement watch.
    watch_from_block bigint,
    -- Until when one settlement watch holds the payment from the others (here, not on the
    -- intent, whose every update is a change of the agent's listing).
    watch_held_until timestamptz,
    CONSTRAINT x402_payments_resource_length CHECK (char_length(resource_url) <= 2048),
    CONSTRAINT x402_payments_nonce_length CHECK (octet_length(nonce) = 32),
    CONSTRAINT x402_payments_authorization_recorded CHECK (
        (nonce IS NULL) = (payment IS NULL)
        AND (nonce IS NULL) = (valid_before IS NULL)
        AND (nonce IS NULL) = (valid_after IS NULL)
        AND (nonce IS NULL) = (watch_from_block IS NULL)),
    -- One authorization per nonce of a wallet: the token would honour only one.
    CONSTRAINT x402_payments_nonce_once UNIQUE (wallet_id, nonce)
);

-- The latest block of each chain the settlement watch saw: an authorization signed after it was
-- recorded cannot be used in an earlier block, so its search starts there.
CREATE TABLE chain_heads (
    chain_id     bigint PRIMARY KEY,
    block_number bigint NOT NULL CHECK (block_number >= 0),
    block_time   timestamptz NOT NULL,
    seen_at      timestamptz NOT NULL DEFAULT now()
);

-- Whether a wallet pays x402 challenges at all (`agentctl policy set --x402 on|off`).
ALTER TABLE spend_policies ADD COLUMN x402_enabled boolean NOT NULL DEFAULT true;

-- What an intent moves money by: a transaction this service sends, or an x402 authorization the
-- payee settles. Only transfers are claimed by the executor.
ALTER TABLE transfer_intents ADD COLUMN kind text NOT NULL DEFAULT 'transfer'
    CONSTRAINT transfer_intents_kind_known CHECK (kind IN ('transfer', 'x402'));
-- An executed payment has the payee's settling transaction but no nonce of this service's.
ALTER TABLE transfer_intents DROP CONSTRAINT transfer_intents_submission_recorded;
ALTER TABLE transfer_intents ADD CONSTRAINT transfer_intents_submission_recorded CHECK (
    status NOT IN ('submitted', 'executed')
    OR (tx_hash IS NOT NULL AND (nonce IS NOT NULL OR (kind = 'x402' AND status = 'executed'))));
-- The block an executed intent's money moved in, where it is known (an x402 payment's
-- `AuthorizationUsed` log names it).
ALTER TABLE transfer_intents ADD COLUMN block_number bigint;

ALTER TABLE transfer_intents DROP CONSTRAINT transfer_intents_status_known;
ALTER TABLE transfer_intents ADD CONSTRAINT transfer_intents_status_known CHECK (status IN (
    'pending_confirmation', 'confirmed', 'authorized', 'submitted', 'executed', 'failed',
    'rejected', 'expired'));

-- An authorized intent still holds its amount: the money may move until validBefore.
DROP INDEX transfer_intents_open_idx;
CREATE INDEX transfer_intents_open_idx ON transfer_intents (status, created_at)
    WHERE status IN ('pending_confirmation', 'confirmed', 'authorized', 'submitted');
DROP INDEX transfer_intents_wallet_open_idx;
CREATE INDEX transfer_intents_wallet_open_idx ON transfer_intents (wallet_id)
    INCLUDE (amount_atomic)
    WHERE status IN ('pending_confirmation', 'confirmed', 'authorized', 'submitted');
DROP INDEX transfer_intents_recipient_open_idx;
CREATE INDEX transfer_intents_recipient_open_idx
    ON transfer_intents (wallet_id, recipient_address)
    INCLUDE (amount_atomic) WHERE status IN ('pending_confirmation', 'confirmed', 'authorized', 'submitted');

CREATE OR REPLACE FUNCTION transfer_intents_spend_totals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    open_statuses constant text[] := ARRAY['pending_confirmation', 'confirmed', 'authorized', 'submitted'];
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
    -- An intent whose contribution stays what it was (confirmed to submitted or authorized)
    -- moves nothing and takes no lock.
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

-- An x402 payment's events carry its resource, network and authorization (its row is written
-- in the intent's transaction; events are recorded at commit).
CREATE OR REPLACE FUNCTION transfer_intents_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    intent jsonb := jsonb_build_object(
        'id', NEW.id, 'agent_id', NEW.agent_id, 'wallet_id', NEW.wallet_id,
        'kind', NEW.kind, 'status', NEW.status, 'asset', NEW.asset, 'chain', NEW.chain,
        'token_address', NEW.token_address, 'recipient_address', NEW.recipient_address,
        'amount_atomic', NEW.amount_atomic::text, 'idempotency_key', NEW.idempotency_key,
        'tx_hash', NEW.tx_hash, 'failure_reason', NEW.failure_reason,
        'created_at', NEW.created_at, 'updated_at', NEW.updated_at,
        'confirmed_at', NEW.confirmed_at, 'decided_by', NEW.decided_by,
        'confirmed_by', NEW.confirmed_by, 'approvals_required', NEW.approvals_required,
        'approvals_received', NEW.approvals_received,
        -- Only a payment has a row to read: a send's event costs no lookup.
        'x402', CASE WHEN NEW.kind = 'x402' THEN (SELECT jsonb_build_object(
            'resource_url', payment.resource_url, 'network', payment.network,
            'nonce', '0x' || encode(payment.nonce, 'hex'),
            'valid_before', payment.valid_before,
            'payment_response', payment.payment_response)
            FROM x402_payments AS payment WHERE payment.intent_id = NEW.id) END);
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
