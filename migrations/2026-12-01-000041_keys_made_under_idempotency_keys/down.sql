DELETE FROM idempotent_requests WHERE operation = 'key_create';
ALTER TABLE idempotent_requests DROP CONSTRAINT idempotent_requests_operation_check;
ALTER TABLE idempotent_requests ADD CONSTRAINT idempotent_requests_operation_check
    CHECK (operation IN ('webhook_create', 'webhook_rotate_secret', 'webhook_replay'));
