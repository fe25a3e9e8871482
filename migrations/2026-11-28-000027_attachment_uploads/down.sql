ALTER TABLE sandbox_email_outbox DROP COLUMN attachments;
DROP TABLE email_attachment_uploads;
