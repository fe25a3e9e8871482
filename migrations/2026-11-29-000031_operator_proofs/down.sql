-- The audit rows of tokens stay: the log is append-only, so the wider check stays with them.
DROP TABLE operator_tokens;
DROP TABLE console_used_challenges;
DROP TABLE console_challenge_key;
ALTER TABLE operator_ceremonies ALTER COLUMN enrollment DROP NOT NULL;
ALTER TABLE operator_ceremonies ADD COLUMN kind text NOT NULL DEFAULT 'registration'
    CHECK (kind IN ('registration', 'authentication'));
ALTER TABLE operator_ceremonies ALTER COLUMN kind DROP DEFAULT;
