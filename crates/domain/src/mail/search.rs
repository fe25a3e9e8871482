//! What an inbox search asks (mail-plus.md): words that must all match, in any order, in the
//! subject, the sender, the recipients or the text (case and accents aside), narrowed by
//! `from:`, `to:`, `has:attachment`, `after:` and `before:`. Parsed here; matched by the store.

use time::macros::format_description;
use time::Date;
use unicode_normalization::UnicodeNormalization as _;

use crate::SenderPattern;

/// Characters a query may have.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// How deep a search reads: results past this many are not paged to.
pub const MAX_SEARCH_RESULTS: usize = 10_000;
/// A search's matches are ranked (best match first, ties newest first) when they are at most
/// this many; past it they come newest first, so that no query makes the store weigh every
/// message of a large inbox.
pub const MAX_RANKED_MATCHES: usize = 1_000;

/// A parsed query: at least one word or narrowing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchQuery {
    /// Lowercased runs of letters and digits; the store also ignores accents.
    pub words: Vec<String>,
    /// The sender: an address, or `@domain`.
    pub from: Option<SenderPattern>,
    /// A recipient (To or Cc): an address, or `@domain`.
    pub to: Option<SenderPattern>,
    pub has_attachment: bool,
    /// Only mail of this day or later (UTC).
    pub after: Option<Date>,
    /// Only mail before this day (UTC).
    pub before: Option<Date>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchQueryError {
    #[error("the query is empty: give words or a narrowing such as from:ADDRESS")]
    Empty,
    #[error("the query is longer than {MAX_QUERY_CHARS} characters")]
    TooLong,
    #[error("{0}: must be an email address or @domain")]
    Address(String),
    #[error("{0}: the only value of has: is attachment")]
    Has(String),
    #[error("{0}: must be a date as YYYY-MM-DD")]
    Date(String),
    #[error("{0} is given twice")]
    Repeated(&'static str),
    #[error("after: must be a day before before:")]
    EmptyRange,
}

impl SearchQuery {
    /// Reads `q`: tokens split on white space; `from:`, `to:`, `has:`, `after:` and `before:`
    /// (in any case) narrow, each at most once; anything else gives its runs of letters and
    /// digits as words (so `re:invoice` is the words `re` and `invoice`).
    pub fn parse(q: &str) -> Result<Self, SearchQueryError> {
        if q.chars().count() > MAX_QUERY_CHARS {
            return Err(SearchQueryError::TooLong);
        }
        // One form of each letter: `é` typed as `e` and a combining accent is `é`, a letter.
        let q: String = q.nfc().collect();
        let mut query = Self::default();
        let mut has_given = false;
        for token in q.split_whitespace() {
            let Some((name, value)) = token.split_once(':') else {
                query.add_words(token);
                continue;
            };
            match name.to_ascii_lowercase().as_str() {
                "from" => set_once(&mut query.from, "from:", address(token, value)?)?,
                "to" => set_once(&mut query.to, "to:", address(token, value)?)?,
                "has" => {
                    if !value.eq_ignore_ascii_case("attachment") {
                        return Err(SearchQueryError::Has(token.to_owned()));
                    }
                    if std::mem::replace(&mut has_given, true) {
                        return Err(SearchQueryError::Repeated("has:"));
                    }
                    query.has_attachment = true;
                }
                "after" => set_once(&mut query.after, "after:", date(token, value)?)?,
                "before" => set_once(&mut query.before, "before:", date(token, value)?)?,
                _ => query.add_words(token),
            }
        }
        if let (Some(after), Some(before)) = (query.after, query.before) {
            if after >= before {
                return Err(SearchQueryError::EmptyRange);
            }
        }
        if query == Self::default() {
            return Err(SearchQueryError::Empty);
        }
        Ok(query)
    }

    fn add_words(&mut self, token: &str) {
        for word in token.split(|c: char| !c.is_alphanumeric()) {
            let word = word.to_lowercase();
            if !word.is_empty() && !self.words.contains(&word) {
                self.words.push(word);
            }
        }
    }

    /// What identifies the query for its cursors: the same query, however written, is the
    /// same text.
    pub fn canonical(&self) -> String {
        let mut parts: Vec<String> = self.words.clone();
        parts.sort();
        if let Some(from) = &self.from {
            parts.push(format!("from:{from}"));
        }
        if let Some(to) = &self.to {
            parts.push(format!("to:{to}"));
        }
        if self.has_attachment {
            parts.push("has:attachment".into());
        }
        if let Some(after) = self.after {
            parts.push(format!("after:{after}"));
        }
        if let Some(before) = self.before {
            parts.push(format!("before:{before}"));
        }
        parts.join(" ")
    }
}

fn set_once<T>(slot: &mut Option<T>, name: &'static str, value: T) -> Result<(), SearchQueryError> {
    match slot.replace(value) {
        Some(_) => Err(SearchQueryError::Repeated(name)),
        None => Ok(()),
    }
}

fn address(token: &str, value: &str) -> Result<SenderPattern, SearchQueryError> {
    SenderPattern::parse(value).map_err(|_| SearchQueryError::Address(token.to_owned()))
}

/// A day written `YYYY-MM-DD`: four digits of year, no sign.
fn date(token: &str, value: &str) -> Result<Date, SearchQueryError> {
    let refused = || SearchQueryError::Date(token.to_owned());
    if value.len() != 10 || !value.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
        return Err(refused());
    }
    Date::parse(value, format_description!("[year]-[month]-[day]")).map_err(|_| refused())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use time::macros::date;

    #[test]
    fn words_and_every_narrowing_are_read_in_any_case() {
        let query = SearchQuery::parse(
            "Invoice  FROM:Billing@Acme.example to:@corp.example HAS:Attachment after:2026-01-31 \
             before:2026-03-01 re:Überweisung",
        )
        .expect("valid");
        assert_eq!(query.words, ["invoice", "re", "überweisung"]);
        assert_eq!(
            query.from,
            Some(SenderPattern::Address("billing@acme.example".into()))
        );
        assert_eq!(query.to, Some(SenderPattern::Domain("corp.example".into())));
        assert!(query.has_attachment);
        assert_eq!(query.after, Some(date!(2026 - 01 - 31)));
        assert_eq!(query.before, Some(date!(2026 - 03 - 01)));
    }

    #[test]
    fn an_accent_typed_as_a_combining_mark_is_the_same_letter() {
        let composed = SearchQuery::parse("résumé crème").expect("valid");
        let decomposed = SearchQuery::parse("re\u{301}sume\u{301} cre\u{300}me").expect("valid");
        assert_eq!(decomposed.words, ["résumé", "crème"]);
        assert_eq!(decomposed, composed);
    }

    #[test]
    fn a_narrowing_alone_is_a_query() {
        let query = SearchQuery::parse("has:attachment").expect("valid");
        assert!(query.words.is_empty() && query.has_attachment);
    }

    #[test]
    fn empty_and_malformed_queries_say_what_is_wrong() {
        for (q, error) in [
            ("", SearchQueryError::Empty),
            ("   \t ", SearchQueryError::Empty),
            ("--- !!!", SearchQueryError::Empty),
            ("from:", SearchQueryError::Address("from:".into())),
            ("from:alice", SearchQueryError::Address("from:alice".into())),
            ("has:pdf", SearchQueryError::Has("has:pdf".into())),
            (
                "after:2026-13-01",
                SearchQueryError::Date("after:2026-13-01".into()),
            ),
            (
                "before:yesterday",
                SearchQueryError::Date("before:yesterday".into()),
            ),
            (
                "before:-2026-01-01",
                SearchQueryError::Date("before:-2026-01-01".into()),
            ),
            (
                "after:+2026-01-01",
                SearchQueryError::Date("after:+2026-01-01".into()),
            ),
            (
                "after:20260-01-01",
                SearchQueryError::Date("after:20260-01-01".into()),
            ),
            (
                "after:2é-01-0101",
                SearchQueryError::Date("after:2é-01-0101".into()),
            ),
            (
                "from:a@x.example from:b@x.example",
                SearchQueryError::Repeated("from:"),
            ),
            (
                "has:attachment has:attachment",
                SearchQueryError::Repeated("has:"),
            ),
            (
                "after:2026-02-01 before:2026-02-01",
                SearchQueryError::EmptyRange,
            ),
        ] {
            assert_eq!(SearchQuery::parse(q), Err(error), "{q:?}");
        }
        assert_eq!(
            SearchQuery::parse(&"a".repeat(MAX_QUERY_CHARS + 1)),
            Err(SearchQueryError::TooLong)
        );
    }

    #[test]
    fn the_same_query_written_otherwise_is_the_same_canonical_text() {
        let one = SearchQuery::parse("Invoice march from:A@x.example").expect("valid");
        let other = SearchQuery::parse("FROM:a@X.example  MARCH invoice invoice").expect("valid");
        assert_eq!(one.canonical(), other.canonical());
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused_without_panicking(q in any::<String>()) {
            let _ = SearchQuery::parse(&q);
        }

        #[test]
        fn words_are_lowercase_letters_and_digits_each_once(q in "[ a-zA-Z0-9àéÖ.,;!?-]{0,200}") {
            if let Ok(query) = SearchQuery::parse(&q) {
                for word in &query.words {
                    prop_assert!(!word.is_empty());
                    prop_assert!(word.chars().all(char::is_alphanumeric));
                    prop_assert_eq!(word, &word.to_lowercase());
                    prop_assert_eq!(query.words.iter().filter(|w| *w == word).count(), 1);
                }
                prop_assert!(!query.words.is_empty(), "no narrowing in this alphabet");
            }
        }

        #[test]
        fn a_parsed_query_reads_back_from_its_canonical_text(q in "[ a-z0-9]{1,50}( from:[a-z]{1,5}@x\\.example)?( has:attachment)?") {
            if let Ok(query) = SearchQuery::parse(&q) {
                let again = SearchQuery::parse(&query.canonical()).expect("canonical text parses");
                prop_assert_eq!(again.canonical(), query.canonical());
            }
        }
    }
}
