-- Who took the latest operator decision on an intent (confirm, reject, resolve), in the stored
-- form of `domain::Operator` (`cli`, `cli:<user>`; decision 0056). Intents decided before it was
-- recorded, and those no operator decided on, have none.
ALTER TABLE transfer_intents ADD COLUMN decided_by text;
