DROP TABLE sandbox_sms;
DROP TABLE sms_code_waits;
DROP TABLE sms_messages;
