-- Each agent's sender rules (mail-plus.md): entries are addresses or `@domain`, lowercased, at
-- most 1,000 in each list; and how many inbound mails they kept out of the inbox (counted, never
-- stored). An agent without a row has no rules and has kept nothing out.
CREATE TABLE email_sender_rules (
    agent_id       uuid PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
    allow_list     text[] NOT NULL DEFAULT '{}',
    block_list     text[] NOT NULL DEFAULT '{}',
    kept_out_count bigint NOT NULL DEFAULT 0 CHECK (kept_out_count >= 0),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT email_sender_rules_bounded CHECK (
        cardinality(allow_list) <= 1000 AND cardinality(block_list) <= 1000
    )
);
