DROP INDEX email_messages_search;
ALTER TABLE email_messages DROP COLUMN search_vector;
DROP FUNCTION email_search_vector(text, text, text[], text);
DROP FUNCTION email_search_words(text);
