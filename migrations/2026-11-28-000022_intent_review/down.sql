DROP INDEX operator_audit_target;
