DROP TABLE operator_audit;
DROP FUNCTION operator_audit_append_only();
DROP TABLE operator_ceremonies;
DROP TABLE operator_sessions;
DROP TABLE operator_passkeys;
DROP TABLE operator_enrollments;
DROP TABLE operators;
