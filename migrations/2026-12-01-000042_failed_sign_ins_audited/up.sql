-- A sign-in refused with an operator's passkey (a bad signature, a signature counter gone
-- backwards) is audited as `login_failed`, beside the failure counted against that passkey.
ALTER TABLE operator_audit DROP CONSTRAINT operator_audit_action_check;
ALTER TABLE operator_audit ADD CONSTRAINT operator_audit_action_check
    CHECK (action IN ('invite', 'enroll', 'login', 'login_failed', 'logout', 'disable', 'approve',
        'reject', 'create', 'deactivate', 'rotate', 'policy_change', 'token_issue', 'token_revoke',
        'token_use', 'key_create', 'key_revoke'));
