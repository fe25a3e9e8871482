//! The cue each token of a message gives, and look-ups in the word lists.

use std::borrow::Cow;

use super::scan::{Kind, Token};
use super::words::{
    AMOUNT_WORDS, BLOCKERS, CJK_AMOUNT_WORDS, CJK_BLOCKERS, CJK_KEYWORDS, CJK_UNITS, CODE_WORDS,
    CONNECTIVES, COPULAS, CURRENCIES, DEADLINE_WORDS, DURATION_UNITS, EXPIRY_WORDS, INSTRUCTIONS,
    INSTRUCTION_FILLERS, KEYWORDS, LONGEST_WORD_BYTES, MONTHS, NEG_COMPOUND_STEMS, NEG_FOLLOWERS,
    NEG_QUALIFIERS, NUMBER_ABBREVIATIONS, PREPOSITIONS, UNITS, WHEN_WORDS, YEAR_WORDS,
};

/// A count of minutes or a clock time this many tokens after an expiry word bounds it:
/// "valid for the next 15 minutes".
const EXPIRY_REACH: usize = 4;

/// What a word says about a number near it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cue {
    /// "code", "OTP", "验证码": the number is probably a verification code.
    Keyword,
    /// "order", "tracking", "phone", "promo code": the number is something else.
    Blocker,
    /// "amount", "total", "余额": the number after it is a sum of money. It says nothing of a
    /// number before it ("Use 847261 to approve the amount of $25.00").
    Amount,
    /// "expires in 10 minutes", "valid until 14:35": a validity as short as a one-time
    /// code's. A number before it in the sentence is probably a code ("Use 4829 within 10
    /// minutes").
    Validity,
    /// "before 09:30", "bis 14:35": a time by which something must be done. It bounds a code
    /// only after an instruction to type it ("Enter K2M9PX on example.com before 09:30"), as
    /// shops and timetables set such times too.
    Deadline,
}

fn listed(list: &[&str], word: &str) -> bool {
    list.binary_search(&word).is_ok()
}

pub(super) fn is_unit(word: &str) -> bool {
    listed(UNITS, word) || listed(CURRENCIES, word)
}

pub(super) fn is_currency(word: &str) -> bool {
    listed(CURRENCIES, word)
}

pub(super) fn is_cjk_unit(c: char) -> bool {
    CJK_UNITS.contains(&c)
}

pub(super) fn is_month(word: &str) -> bool {
    listed(MONTHS, word)
}

pub(super) fn is_year_word(word: &str) -> bool {
    listed(YEAR_WORDS, word)
}

pub(super) fn is_number_abbreviation(word: &str) -> bool {
    listed(NUMBER_ABBREVIATIONS, word)
}

pub(super) fn is_when_word(word: &str) -> bool {
    listed(WHEN_WORDS, word)
}

pub(super) fn is_instruction(word: &str) -> bool {
    listed(INSTRUCTIONS, word)
}

pub(super) fn is_instruction_filler(word: &str) -> bool {
    listed(INSTRUCTION_FILLERS, word)
}

pub(super) fn is_copula(word: &str) -> bool {
    listed(COPULAS, word)
}

pub(super) fn is_preposition(word: &str) -> bool {
    listed(PREPOSITIONS, word)
}

/// The cue of every token of `text`.
pub(super) fn cues(text: &str, tokens: &[Token]) -> Vec<Option<Cue>> {
    let mut cues = vec![None; tokens.len()];
    for (i, token) in tokens.iter().enumerate() {
        match token.kind {
            Kind::Cjk => mark_cjk(text, tokens, i, &mut cues),
            Kind::Alnum | Kind::Word => cues[i] = word_cue(text, tokens, i),
            Kind::Digits => {}
        }
    }
    cues
}

/// Marks the characters of the CJK keywords and blockers starting at token `i`.
fn mark_cjk(text: &str, tokens: &[Token], i: usize, cues: &mut [Option<Cue>]) {
    let rest = &text[tokens[i].start..];
    let lists = [
        (CJK_BLOCKERS, Cue::Blocker),
        (CJK_AMOUNT_WORDS, Cue::Amount),
        (CJK_KEYWORDS, Cue::Keyword),
    ];
    for (list, cue) in lists {
        for word in list.iter().filter(|word| rest.starts_with(**word)) {
            // Every character of a CJK word is one token, so the word covers as many tokens.
            let end = (i + word.chars().count()).min(cues.len());
            for slot in &mut cues[i..end] {
                if !matches!(slot, Some(Cue::Blocker | Cue::Amount)) {
                    *slot = Some(cue);
                }
            }
        }
    }
}

/// Whether a count of minutes or seconds or a clock time follows the expiry word at token
/// `i` closely: "expires in 10 minutes", "valid for the next 15 min", "valid until 14:35".
fn expires_soon(text: &str, tokens: &[Token], i: usize) -> bool {
    (i + 1..tokens.len())
        .take(EXPIRY_REACH)
        .any(|j| is_duration(text, tokens, j) || is_clock_time(text, tokens, j))
}

/// "10 minutes", "30 sec", "10min".
fn is_duration(text: &str, tokens: &[Token], i: usize) -> bool {
    let is_unit = |word: &str| listed(DURATION_UNITS, word);
    match tokens[i].kind {
        Kind::Digits => tokens.get(i + 1).is_some_and(|next| {
            text[tokens[i].end..next.start].trim().is_empty()
                && lowercase_token(text, next).is_some_and(|word| is_unit(&word))
        }),
        Kind::Alnum | Kind::Word => lowercase_token(text, &tokens[i]).is_some_and(|word| {
            let unit = word.trim_start_matches(|c: char| c.is_ascii_digit());
            unit.len() < word.len() && is_unit(unit)
        }),
        Kind::Cjk => false,
    }
}

/// "14:35", "2:30pm", "14h35": hours, a colon or an "h", then minutes.
fn is_clock_time(text: &str, tokens: &[Token], i: usize) -> bool {
    let is_hours = |hours: &str| hours.len() <= 2 && hours.parse::<u8>().is_ok_and(|h| h < 24);
    let is_minutes = |minutes: Option<&str>| {
        minutes.is_some_and(|minutes| {
            minutes.bytes().all(|b| b.is_ascii_digit())
                && minutes.parse::<u8>().is_ok_and(|minutes| minutes < 60)
        })
    };
    let word = &text[tokens[i].start..tokens[i].end];
    if tokens[i].kind == Kind::Alnum {
        // French writes "14h35"; the minutes keep "2h", two hours, out.
        return word.split_once(['h', 'H']).is_some_and(|(hours, minutes)| {
            is_hours(hours) && minutes.len() == 2 && is_minutes(Some(minutes))
        });
    }
    let Some(next) = tokens.get(i + 1) else {
        return false;
    };
    tokens[i].kind == Kind::Digits
        && &text[tokens[i].end..next.start] == ":"
        && is_hours(word)
        && is_minutes(text[next.start..next.end].get(..2))
}

/// `word` in lowercase, copied only when it has capitals: most words in a message have none.
pub(super) fn lowercase(word: &str) -> Cow<'_, str> {
    if word.chars().any(char::is_uppercase) {
        Cow::Owned(word.chars().flat_map(char::to_lowercase).collect())
    } else {
        Cow::Borrowed(word)
    }
}

fn lowercase_token<'t>(text: &'t str, token: &Token) -> Option<Cow<'t, str>> {
    let word = &text[token.start..token.end];
    (word.len() <= LONGEST_WORD_BYTES && token.kind != Kind::Digits).then(|| lowercase(word))
}

fn word_cue(text: &str, tokens: &[Token], i: usize) -> Option<Cue> {
    let word = lowercase_token(text, &tokens[i])?;
    if listed(BLOCKERS, &word) {
        return Some(Cue::Blocker);
    }
    if listed(AMOUNT_WORDS, &word) {
        return Some(Cue::Amount);
    }
    if listed(KEYWORDS, &word) || word.ends_with("passwort") || word.ends_with("password") {
        return Some(Cue::Keyword);
    }
    if listed(EXPIRY_WORDS, &word) {
        return expires_soon(text, tokens, i).then_some(Cue::Validity);
    }
    if listed(DEADLINE_WORDS, &word) {
        let clock_follows = (i + 1..tokens.len())
            .take(EXPIRY_REACH)
            .any(|j| is_clock_time(text, tokens, j));
        return clock_follows.then_some(Cue::Deadline);
    }
    // German compounds: "Bestellnummer", "Sendungsnummer", "Telefonnummer".
    if word.ends_with("nummer") {
        return Some(Cue::Blocker);
    }
    let negative = if listed(CODE_WORDS, &word) {
        qualified_away(text, tokens, i)
    } else {
        let stem = word
            .strip_suffix("codes")
            .or_else(|| word.strip_suffix("code"))?;
        negative_stem(stem)
    };
    Some(if negative { Cue::Blocker } else { Cue::Keyword })
}

/// Whether the first half of a compound like "Gutscheincode" makes it something else.
fn negative_stem(stem: &str) -> bool {
    // German joins compounds with an "s": "Buchungscode".
    let unjoined = stem.strip_suffix('s').unwrap_or(stem);
    [stem, unjoined]
        .into_iter()
        .any(|stem| listed(NEG_QUALIFIERS, stem) || listed(NEG_COMPOUND_STEMS, stem))
}

/// Whether the word before or after the "code" noun at token `i` makes it something else:
/// "zip code", "código postal", "code de réduction".
fn qualified_away(text: &str, tokens: &[Token], i: usize) -> bool {
    let word_at = |j: usize| tokens.get(j).and_then(|token| lowercase_token(text, token));
    let before = i.checked_sub(1).and_then(word_at);
    if before.is_some_and(|word| listed(NEG_QUALIFIERS, &word)) {
        return true;
    }
    match word_at(i + 1) {
        Some(next) if listed(CONNECTIVES, &next) => {
            word_at(i + 2).is_some_and(|word| listed(NEG_FOLLOWERS, &word))
        }
        Some(next) => listed(NEG_FOLLOWERS, &next),
        None => false,
    }
}
