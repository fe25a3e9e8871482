-- The decisions on one intent, as the console's intent page shows them (console.md): one
-- target's rows of the audit log, newest first.
CREATE INDEX operator_audit_target ON operator_audit (target, at DESC, id DESC)
    WHERE target IS NOT NULL;
