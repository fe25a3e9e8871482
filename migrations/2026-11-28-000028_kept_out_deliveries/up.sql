-- The deliveries each agent's sender rules kept out, by the key a redelivery of the same mail
-- brings again (its provider's id, else the delivery's), so a provider's retry of a kept-out mail
-- is not counted twice. Kept a week, longer than providers retry; the count keeps the total.
CREATE TABLE email_kept_out_deliveries (
    agent_id     uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    delivery_key text NOT NULL,
    kept_out_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent_id, delivery_key)
);
CREATE INDEX email_kept_out_deliveries_age ON email_kept_out_deliveries (agent_id, kept_out_at);
