DROP TABLE email_sender_rules;
