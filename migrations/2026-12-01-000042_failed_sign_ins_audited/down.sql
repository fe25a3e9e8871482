-- The rows of failed sign-ins stay: the log is append-only, so the wider check stays with them.
SELECT 1;
