-- Workers give a claim back by the lease they named, also when the claim's answer was lost and
-- they do not know which row it took (decision 0052). Only leased rows are indexed: few at a time.
CREATE INDEX transfer_intents_lease ON transfer_intents (lease_id) WHERE lease_id IS NOT NULL;
CREATE INDEX email_messages_lease ON email_messages (lease_id) WHERE lease_id IS NOT NULL;
