//! A message cut into words, each classed by what it says about a service name next to it, and
//! the runs of words that make up one name.

use std::borrow::Cow;
use std::ops::{Range, RangeInclusive};

use super::words::{CODE_WORDS, CONNECTIVES, JOINERS, LONGEST_WORD_BYTES, POSSESSIVES, STOP_WORDS};

/// A longer run of capitalised words is a title-case sentence, not a name.
const MAX_NAME_WORDS: usize = 5;
const MAX_NAME_CHARS: usize = 40;

/// What a word says about a service name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    /// May be (part of) a name: "PayPal", "iFood", "N26".
    Name,
    /// The code itself: "code", "OTP", "código", "Bestätigungscode".
    Code,
    /// "your", "tu", "votre".
    Possessive,
    /// "from", "for", "de", "von": leads from the code to a name after it.
    Connective,
    /// "verification", "account", "the": never a name, passed over on the way to one.
    Stop,
    /// Anything else: lowercase words, numbers, codes. A search for a name ends there.
    Other,
}

impl Class {
    /// Words that are never a name but may stand beside one.
    pub fn is_generic(self) -> bool {
        !matches!(self, Class::Name | Class::Other)
    }
}

/// Which words may be names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Letters {
    /// Only words with a capital: in running text that is what tells a name from a word.
    Capitalised,
    /// Also words in scripts without capitals (中国银行, 카카오): trusted only inside brackets,
    /// since elsewhere such a run may be a whole sentence.
    Uncased,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    Forward,
    Backward,
}

#[derive(Debug, Clone, Copy)]
struct Word {
    start: usize,
    end: usize,
    class: Class,
    /// Whether the next word belongs to the same phrase (see `is_joining`).
    joined: bool,
}

pub(super) struct Scan<'t> {
    text: &'t str,
    words: Vec<Word>,
}

impl<'t> Scan<'t> {
    pub fn new(text: &'t str, letters: Letters) -> Self {
        let spans = spans(text);
        let words = spans
            .iter()
            .enumerate()
            .map(|(i, span)| Word {
                start: span.start,
                end: span.end,
                class: classify(&text[span.clone()], letters),
                joined: spans
                    .get(i + 1)
                    .is_some_and(|next| is_joining(&text[span.end..next.start])),
            })
            .collect();
        Scan { text, words }
    }

    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    pub fn class(&self, i: usize) -> Class {
        self.words[i].class
    }

    fn word(&self, i: usize) -> &'t str {
        let word = self.words[i];
        &self.text[word.start..word.end]
    }

    /// Whether word `i` and the next are in one phrase.
    pub fn joined(&self, i: usize) -> bool {
        self.words[i].joined
    }

    /// Whether word `i` opens its sentence, line or bracket: nothing before it is in its phrase.
    pub fn starts_clause(&self, i: usize) -> bool {
        i.checked_sub(1)
            .is_none_or(|previous| !self.joined(previous))
    }

    /// The words of the name that starts (forward) or ends (backward) at word `start`, which is
    /// a `Name`. `None` when the run is too long to be a name.
    pub fn name_run(&self, start: usize, direction: Direction) -> Option<RangeInclusive<usize>> {
        let mut end = start;
        while let Some(next) = self.continuation(end, direction) {
            if next.abs_diff(start) >= MAX_NAME_WORDS {
                return None;
            }
            end = next;
        }
        let run = start.min(end)..=start.max(end);
        let chars: usize = run.clone().map(|i| self.word(i).chars().count() + 1).sum();
        (chars <= MAX_NAME_CHARS + 1).then_some(run)
    }

    /// The words of `run` as written, one space apart.
    pub fn phrase(&self, run: RangeInclusive<usize>) -> String {
        run.map(|i| self.word(i)).collect::<Vec<_>>().join(" ")
    }

    /// The next word of the name that reaches word `i`: a `Name` in the same phrase, or one
    /// past a joiner ("Bank of America").
    fn continuation(&self, i: usize, direction: Direction) -> Option<usize> {
        let next = self.step(i, direction)?;
        if self.class(next) == Class::Name {
            return Some(next);
        }
        // Joiners are generic words; checking the class first spares lowercasing long words.
        if !(self.class(next).is_generic() && listed(JOINERS, &lowercase(self.word(next)))) {
            return None;
        }
        self.step(next, direction)
            .filter(|&after| self.class(after) == Class::Name)
    }

    /// The neighbour of word `i` in `direction`, if it is in the same phrase.
    fn step(&self, i: usize, direction: Direction) -> Option<usize> {
        match direction {
            Direction::Forward => (i + 1 < self.words.len() && self.joined(i)).then_some(i + 1),
            Direction::Backward => i.checked_sub(1).filter(|&previous| self.joined(previous)),
        }
    }
}

fn listed(list: &[&str], word: &str) -> bool {
    list.binary_search(&word).is_ok()
}

/// `word` in lowercase, copied only when it has capitals.
pub(super) fn lowercase(word: &str) -> Cow<'_, str> {
    if word.chars().any(char::is_uppercase) {
        Cow::Owned(word.chars().flat_map(char::to_lowercase).collect())
    } else {
        Cow::Borrowed(word)
    }
}

fn classify(word: &str, letters: Letters) -> Class {
    if word.len() > LONGEST_WORD_BYTES {
        return Class::Other;
    }
    let lower = lowercase(word);
    if listed(CODE_WORDS, &lower) {
        Class::Code
    } else if listed(POSSESSIVES, &lower) {
        Class::Possessive
    } else if listed(CONNECTIVES, &lower) {
        Class::Connective
    } else if listed(STOP_WORDS, &lower) || is_generic_compound(&lower) {
        Class::Stop
    } else if looks_like_name(word, letters) {
        Class::Name
    } else {
        Class::Other
    }
}

/// "one-time", "sign-in", "6-digit": hyphenated words made only of generic parts and numbers.
fn is_generic_compound(lower: &str) -> bool {
    lower.contains('-')
        && lower.split('-').all(|part| {
            listed(STOP_WORDS, part)
                || listed(CODE_WORDS, part)
                || (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// A name has a capital ("PayPal", "iFood") or, when allowed, letters without case (微信); and
/// is not shaped like a code or a number ("A7B2KQ", "G-123456", "2026"), unlike "N26".
fn looks_like_name(word: &str, letters: Letters) -> bool {
    let digits = word.chars().filter(char::is_ascii_digit).count();
    let code_shaped = digits >= 2 && word.chars().count() >= 4;
    let marked = word.chars().any(|c| {
        c.is_uppercase() || (letters == Letters::Uncased && c.is_alphabetic() && !c.is_lowercase())
    });
    marked && !code_shaped
}

/// Whether the text between two words keeps them in one phrase: spaces on one line, the hyphen
/// of a split "Uber-Code", or the apostrophe of an elision ("d'Amazon").
fn is_joining(gap: &str) -> bool {
    matches!(gap, "-" | "'" | "’")
        || (!gap.is_empty() && gap.chars().all(|c| matches!(c, ' ' | '\t' | '\u{a0}')))
}

/// Whether `c`, between the word so far and the letter `next`, is part of the word: "T-Mobile",
/// "Booking.com", "AT&T", "McDonald's"; but not after the elided article of "d'accès".
fn glues(word_so_far: &str, c: char, next: Option<char>) -> bool {
    let elision = matches!(c, '\'' | '’') && matches!(word_so_far, "d" | "l");
    matches!(c, '-' | '.' | '&' | '\'' | '’' | '_')
        && next.is_some_and(char::is_alphanumeric)
        && !elision
}

/// The byte ranges of the words of `text`.
fn spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c.is_alphanumeric() {
            start.get_or_insert(at);
            continue;
        }
        let Some(first) = start else {
            continue;
        };
        let next = chars.peek().map(|&(_, next)| next);
        if !glues(&text[first..at], c, next) {
            push_word(text, first..at, &mut spans);
            start = None;
        }
    }
    if let Some(first) = start {
        push_word(text, first..text.len(), &mut spans);
    }
    spans
}

/// Adds a word, split in two when it is a hyphenated code compound ("Uber-Code",
/// "Google-Bestätigungscode"): the name and the code are then words of their own.
fn push_word(text: &str, span: Range<usize>, spans: &mut Vec<Range<usize>>) {
    let word = &text[span.clone()];
    let split = word
        .rfind('-')
        .filter(|&hyphen| listed(CODE_WORDS, &lowercase(&word[hyphen + 1..])));
    match split {
        Some(hyphen) => {
            spans.push(span.start..span.start + hyphen);
            spans.push(span.start + hyphen + 1..span.end);
        }
        None => spans.push(span),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(text: &str) -> Vec<(&str, Class)> {
        let scan = Scan::new(text, Letters::Capitalised);
        (0..scan.word_count())
            .map(|i| (scan.word(i), scan.class(i)))
            .collect()
    }

    #[test]
    fn punctuation_inside_a_word_keeps_it_whole() {
        let words: Vec<&str> = classes("T-Mobile, Booking.com and AT&T. McDonald's end.")
            .into_iter()
            .map(|(word, _)| word)
            .collect();
        assert_eq!(
            words,
            [
                "T-Mobile",
                "Booking.com",
                "and",
                "AT&T",
                "McDonald's",
                "end"
            ]
        );
    }

    #[test]
    fn a_code_compound_and_an_elision_split() {
        assert_eq!(
            classes("Uber-Code d'Amazon"),
            [
                ("Uber", Class::Name),
                ("Code", Class::Code),
                ("d", Class::Connective),
                ("Amazon", Class::Name)
            ]
        );
    }

    #[test]
    fn generic_compounds_and_code_shapes_are_no_names() {
        assert_eq!(classes("One-Time")[0].1, Class::Stop);
        assert_eq!(classes("6-Digit")[0].1, Class::Stop);
        assert_eq!(classes("G-123456")[0].1, Class::Other);
        assert_eq!(classes("A7B2KQ")[0].1, Class::Other);
        assert_eq!(classes("N26")[0].1, Class::Name);
        assert_eq!(classes("iFood")[0].1, Class::Name);
        assert_eq!(classes("微信")[0].1, Class::Other);
        let bracketed = Scan::new("微信", Letters::Uncased);
        assert_eq!(bracketed.class(0), Class::Name);
    }

    #[test]
    fn a_name_run_crosses_joiners_but_not_punctuation() {
        let scan = Scan::new("from Bank of America, Inc", Letters::Capitalised);
        let run = scan.name_run(1, Direction::Forward);
        assert_eq!(
            run.clone().map(|run| scan.phrase(run)).as_deref(),
            Some("Bank of America")
        );
        let back = scan.name_run(3, Direction::Backward);
        assert_eq!(back, run);
        let prose = Scan::new("Read Whole Long Title Case Lines Now", Letters::Capitalised);
        assert_eq!(prose.name_run(0, Direction::Forward), None);
    }
}
