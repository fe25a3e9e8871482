-- What an inbound mail's `Authentication-Results` say of its sender, and the service its text
-- names, are read once when it comes in and kept here (decision 0081), as an SMS's service name
-- is, instead of on every read of the row and every look of a code wait.
--
-- Rows kept before are filled by the server when it migrates (a function of their headers and
-- text, written in Rust): until then NULL, read as unreported. The partial index finds those
-- left; it is empty once they are filled, and every new inbound row is written filled.
ALTER TABLE email_messages
    ADD COLUMN sender_authentication text
        CHECK (sender_authentication IN ('unreported', 'failed', 'passed')),
    ADD COLUMN authenticated_domain text,
    ADD COLUMN service_name text,
    ADD CONSTRAINT email_messages_authenticated_domain_when_passed
        CHECK ((sender_authentication = 'passed') = (authenticated_domain IS NOT NULL));

CREATE INDEX email_messages_inbound_facts_unread ON email_messages (id)
    WHERE direction = 'inbound' AND sender_authentication IS NULL;
