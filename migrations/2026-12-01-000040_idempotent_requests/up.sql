-- The answers of the creating routes that have no row of their own to hold an idempotency key
-- (decision 0094): a webhook endpoint made, its secret rotated, its deliveries replayed.
-- Written in the transaction of the effect, so a commit lost in a failover leaves both or
-- neither; a retry with the same key finds the first answer here for 24 hours.
CREATE TABLE idempotent_requests (
    agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    -- The agent key the request came with: keys are remembered per key.
    key_id uuid NOT NULL,
    operation text NOT NULL CHECK (operation IN
        ('webhook_create', 'webhook_rotate_secret', 'webhook_replay')),
    idempotency_key text NOT NULL,
    -- SHA-256 of the request's fields: the same key with another request is refused.
    fingerprint bytea NOT NULL,
    -- The first answer, as the store encodes it (a webhook secret in clear, as in
    -- webhook_secrets, which signs with it).
    answer jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, key_id, operation, idempotency_key)
);

CREATE INDEX idempotent_requests_by_age ON idempotent_requests (agent_id, created_at);
