-- The operator console (console.md, decision 0065): operators and their passkeys, enrollment
-- links, server-side sessions, the WebAuthn ceremonies in progress, and the audit log.

CREATE TABLE operators (
    id          uuid PRIMARY KEY,
    -- An `OperatorName`: 1 to 64 characters, no whitespace or control character.
    name        text NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 64),
    role        text NOT NULL CHECK (role IN ('admin', 'approver', 'viewer')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    disabled_at timestamptz
);

-- One-time enrollment links: only the SHA-256 of the token is kept.
CREATE TABLE operator_enrollments (
    token_hash  bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    operator_id uuid NOT NULL REFERENCES operators (id),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE INDEX operator_enrollments_operator ON operator_enrollments (operator_id);

-- Each operator's passkeys: the credential as the WebAuthn library keeps it (public key and
-- signature counter), found by the credential's id at sign-in.
CREATE TABLE operator_passkeys (
    credential_id bytea PRIMARY KEY,
    operator_id   uuid NOT NULL REFERENCES operators (id),
    passkey       jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz
);
CREATE INDEX operator_passkeys_operator ON operator_passkeys (operator_id);

-- Server-side sessions behind the console's cookie, which holds the token this is the hash of.
CREATE TABLE operator_sessions (
    token_hash   bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    operator_id  uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    address      text
);
CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);
CREATE INDEX operator_sessions_last_seen ON operator_sessions (last_seen_at);

-- WebAuthn ceremonies under way: the state the library must find again at their end, kept
-- server-side; each is taken once.
CREATE TABLE operator_ceremonies (
    id          uuid PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('registration', 'authentication')),
    -- A registration's enrollment link, whose operator the passkey will be for.
    enrollment  bytea REFERENCES operator_enrollments (token_hash),
    state       jsonb NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX operator_ceremonies_expires ON operator_ceremonies (expires_at);

-- Every operator action, written in the transaction of the action itself. Append-only: nothing
-- updates or deletes a row (the trigger below, for every role, superusers included; and the
-- grants: the service's role may only insert and read).
CREATE TABLE operator_audit (
    id       uuid PRIMARY KEY,
    at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- The principal as intents record it: `operator:<name>`, `cli:<user>`, `cli`.
    operator text NOT NULL,
    action   text NOT NULL CHECK (action IN ('invite', 'enroll', 'login', 'logout', 'disable',
        'approve', 'reject', 'create', 'deactivate', 'rotate', 'policy_change')),
    target   text,
    before   jsonb,
    after    jsonb,
    reason   text,
    address  text
);
CREATE INDEX operator_audit_at ON operator_audit (at DESC, id DESC);

CREATE FUNCTION operator_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the operator audit log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER operator_audit_append_only
    BEFORE UPDATE OR DELETE ON operator_audit
    FOR EACH ROW EXECUTE FUNCTION operator_audit_append_only();
CREATE TRIGGER operator_audit_never_truncated
    BEFORE TRUNCATE ON operator_audit
    FOR EACH STATEMENT EXECUTE FUNCTION operator_audit_append_only();
REVOKE UPDATE, DELETE, TRUNCATE ON operator_audit FROM PUBLIC;
REVOKE UPDATE, DELETE, TRUNCATE ON operator_audit FROM CURRENT_USER;
