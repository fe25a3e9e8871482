DROP TABLE spend_policies;
DROP TABLE wallets;
DROP TABLE email_inboxes;
DROP TABLE phone_numbers;
