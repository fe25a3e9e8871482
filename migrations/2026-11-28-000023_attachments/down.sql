DROP TABLE email_attachment_pieces;
