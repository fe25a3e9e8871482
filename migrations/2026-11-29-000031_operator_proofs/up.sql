-- What operators prove and how often they may fail to (decisions 0075 and 0076): sign-in challenges sealed
-- by the server instead of kept, each used once; failed sign-ins counted per passkey; personal
-- tokens that prove an operator to agentctl; and their issue, revocation and use audited.

-- A sign-in keeps nothing while the browser answers: only registrations (behind an enrollment
-- link) are ceremonies kept here.
DELETE FROM operator_ceremonies WHERE kind = 'authentication';
ALTER TABLE operator_ceremonies DROP COLUMN kind;
ALTER TABLE operator_ceremonies ALTER COLUMN enrollment SET NOT NULL;

-- The key every instance seals sign-in challenges with: drawn by the first instance that needs
-- it, the same for all of them from then on.
CREATE TABLE console_challenge_key (
    only_one   boolean PRIMARY KEY DEFAULT true CHECK (only_one),
    key        bytea NOT NULL CHECK (octet_length(key) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Challenges that signed someone in, each kept until no instance would take it any more: a
-- second answer to one is refused. A row is written only by a sign-in that succeeded.
CREATE TABLE console_used_challenges (
    id         uuid PRIMARY KEY,
    kept_until timestamptz NOT NULL
);
CREATE INDEX console_used_challenges_kept_until ON console_used_challenges (kept_until);

-- Personal tokens for agentctl, issued by their operator from a console session: only their
-- SHA-256 is kept; one live token per operator.
CREATE TABLE operator_tokens (
    token_hash   bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    operator_id  uuid NOT NULL REFERENCES operators (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE UNIQUE INDEX operator_tokens_live ON operator_tokens (operator_id)
    WHERE revoked_at IS NULL;

ALTER TABLE operator_audit DROP CONSTRAINT operator_audit_action_check;
ALTER TABLE operator_audit ADD CONSTRAINT operator_audit_action_check
    CHECK (action IN ('invite', 'enroll', 'login', 'logout', 'disable', 'approve', 'reject',
        'create', 'deactivate', 'rotate', 'policy_change', 'token_issue', 'token_revoke',
        'token_use'));
