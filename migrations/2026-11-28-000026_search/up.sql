-- Search of an inbox (mail-plus.md): the words of a message's subject, sender, recipients and
-- text (its first 100,000 characters: a tsvector holds at most 1 MB), lowercased, accents
-- removed, and split into runs of letters and digits as a query's words are (domain's
-- `SearchQuery`), so `alice` finds alice@example.org and `uberweisung` finds Überweisung.
-- `unaccent` is called with its dictionary named, which fixes its result for an index (it is
-- only STABLE otherwise), and every name is schema-qualified, so a restore under another
-- search_path computes the same; `btree_gin` lets one GIN index hold the inbox beside the
-- words. Both are trusted extensions: the database's owner may create them.
CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;
CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;

CREATE FUNCTION email_search_words(input text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(
        lower(public.unaccent('public.unaccent'::regdictionary, coalesce(input, ''))),
        '[^[:alnum:]]+', ' ', 'g')
$$;

CREATE FUNCTION email_search_vector(subject text, sender text, recipients text[], body text)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_tsvector('pg_catalog.simple'::regconfig, public.email_search_words(
        coalesce(subject, '') || ' ' || coalesce(sender, '') || ' '
        || array_to_string(recipients, ' ') || ' ' || left(coalesce(body, ''), 100000)))
$$;

ALTER TABLE email_messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    email_search_vector(subject, from_address, to_addresses || cc_addresses, body_text)
) STORED;
CREATE INDEX email_messages_search ON email_messages USING gin (inbox_id, search_vector);
