-- A key made by a key (POST /v1/keys) keeps its first answer here too (decision 0095): the
-- made key's id and the salt its secret is derived with from the key that asked, never the
-- secret itself.
ALTER TABLE idempotent_requests DROP CONSTRAINT idempotent_requests_operation_check;
ALTER TABLE idempotent_requests ADD CONSTRAINT idempotent_requests_operation_check
    CHECK (operation IN ('key_create', 'webhook_create', 'webhook_rotate_secret', 'webhook_replay'));
