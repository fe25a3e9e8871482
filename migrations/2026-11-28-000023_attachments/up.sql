-- The bytes of kept attachments (mail-plus.md), in pieces of 256 KiB (domain's
-- ATTACHMENT_PIECE_BYTES), written in the transaction that stores their message so a message
-- and its attachments are stored together or not at all, and read a piece at a time so a
-- download holds one piece whatever the attachment weighs. `attachment` is the attachment's
-- position in its message (its id `att_<position>`). The rows go with their message.
CREATE TABLE email_attachment_pieces (
    message_id uuid NOT NULL REFERENCES email_messages (id) ON DELETE CASCADE,
    attachment integer NOT NULL CHECK (attachment > 0),
    piece      integer NOT NULL CHECK (piece >= 0),
    bytes      bytea NOT NULL,
    PRIMARY KEY (message_id, attachment, piece)
);
-- Kept out of line and uncompressed: attachments are mostly compressed already (PDF, images,
-- archives), so compressing them again costs CPU on every write for nothing.
ALTER TABLE email_attachment_pieces ALTER COLUMN bytes SET STORAGE EXTERNAL;
