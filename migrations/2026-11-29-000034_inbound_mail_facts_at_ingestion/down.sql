DROP INDEX email_messages_inbound_facts_unread;
ALTER TABLE email_messages
    DROP CONSTRAINT email_messages_authenticated_domain_when_passed,
    DROP COLUMN sender_authentication,
    DROP COLUMN authenticated_domain,
    DROP COLUMN service_name;
