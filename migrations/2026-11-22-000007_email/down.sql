DROP TABLE sandbox_email_outbox;
DELETE FROM rate_limit_buckets WHERE subject_id NOT IN (SELECT id FROM agents);
ALTER TABLE rate_limit_buckets RENAME COLUMN subject_id TO agent_id;
ALTER TABLE rate_limit_buckets
    ADD CONSTRAINT rate_limit_buckets_agent_id_fkey
    FOREIGN KEY (agent_id) REFERENCES agents (id) ON DELETE CASCADE;
DROP TABLE email_messages;
DROP TABLE email_domains;
