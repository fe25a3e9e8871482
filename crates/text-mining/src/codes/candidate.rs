//! Code-shaped runs of tokens, and the marks around a run that show it is something else.

use std::ops::{Range, RangeInclusive};

use super::lexicon;
use super::scan::{Kind, Scan};

/// Codes hold 4 to 8 characters once separators are dropped.
const CODE_LEN: RangeInclusive<usize> = 4..=8;
/// Digits grouped for reading come in equal groups of 2 to 4: `12 34 56`, `123-456`.
const GROUP_LEN: RangeInclusive<usize> = 2..=4;
const YEARS: Range<u16> = 1900..2100;
const CURRENCY_SYMBOLS: &str = "$€£¥₹₽₩₺₫₱₪¢฿₦₴";

#[derive(Debug, Clone, Copy)]
pub(super) enum Shape {
    Digits { len: usize, grouped: bool },
    Alphanumeric { lowercase: bool },
}

/// A code-shaped run of tokens `first..=last`.
pub(super) struct Candidate {
    pub first: usize,
    pub last: usize,
    pub code: String,
    pub shape: Shape,
}

impl Candidate {
    /// A year of the last or this century: "© 2026", "in 2025".
    pub fn is_year_like(&self) -> bool {
        self.code.len() == 4 && self.code.parse().is_ok_and(|year| YEARS.contains(&year))
    }

    /// Four digits that read as hours and minutes: `1045`, `2359`.
    pub fn is_clock_like(&self) -> bool {
        let number = |range: Range<usize>| self.code.get(range)?.parse::<u8>().ok();
        matches!(
            self.shape,
            Shape::Digits {
                len: 4,
                grouped: false
            }
        ) && number(0..2).is_some_and(|hours| hours < 24)
            && number(2..4).is_some_and(|minutes| minutes < 60)
    }

    /// Three groups of two digits that read as a date, day or month first or year first:
    /// `22-11-26`, `11-22-26`, `26-11-22`.
    pub fn is_short_date(&self) -> bool {
        let number = |range: Range<usize>| self.code.get(range)?.parse::<u8>().ok();
        let (Some(a), Some(b), Some(c)) = (number(0..2), number(2..4), number(4..6)) else {
            return false;
        };
        let day = |n: u8| (1..=31).contains(&n);
        let month = |n: u8| (1..=12).contains(&n);
        self.last == self.first + 2
            && matches!(self.shape, Shape::Digits { len: 6, .. })
            && ((day(a) && month(b)) || (month(a) && day(b)) || (month(b) && day(c)))
    }

    /// A word with a number, as promo codes and model names are: `SAVE20`, `SUMMER25`.
    pub fn is_word_with_number(&self) -> bool {
        let word = self.code.trim_end_matches(|c: char| c.is_ascii_digit());
        matches!(self.shape, Shape::Alphanumeric { .. })
            && word.len() >= 3
            && word.bytes().all(|b| b.is_ascii_alphabetic())
    }

    /// An 8-digit date such as `20261122`.
    pub fn is_compact_date(&self) -> bool {
        let number = |range: Range<usize>| self.code.get(range)?.parse::<u16>().ok();
        matches!(
            self.shape,
            Shape::Digits {
                len: 8,
                grouped: false
            }
        ) && number(0..4).is_some_and(|year| YEARS.contains(&year))
            && number(4..6).is_some_and(|month| (1..=12).contains(&month))
            && number(6..8).is_some_and(|day| (1..=31).contains(&day))
    }
}

fn is_dash(c: char) -> bool {
    matches!(c, '-' | '\u{2010}' | '\u{2011}' | '\u{2013}')
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{2009}' | '\u{202f}')
}

/// The single character between two tokens, if that is all there is.
fn single_char(gap: &str) -> Option<char> {
    let mut chars = gap.chars();
    chars.next().filter(|_| chars.next().is_none())
}

/// Whether token `i` and the next one belong to one written unit: ASCII pieces joined by one
/// dash (`X9-K2P`, `G-123456`), or digit groups joined by one space (`385 920`).
fn joined(scan: &Scan, i: usize) -> bool {
    let Some(next) = scan.tokens.get(i + 1) else {
        return false;
    };
    let ascii = |kind| matches!(kind, Kind::Digits | Kind::Alnum);
    let both_digits = scan.tokens[i].kind == Kind::Digits && next.kind == Kind::Digits;
    ascii(scan.tokens[i].kind)
        && ascii(next.kind)
        && single_char(scan.gap_after(i))
            .is_some_and(|c| is_dash(c) || (both_digits && is_space(c)))
}

/// Every code-shaped run of `scan`, in order. A run that is not code-shaped as a whole gives
/// nothing, so no piece of a phone number (`+1 415 555 0100`) or a tracking number becomes a
/// candidate.
pub(super) fn candidates(scan: &Scan) -> Vec<Candidate> {
    let mut found = Vec::new();
    let mut first = 0;
    while first < scan.tokens.len() {
        if !matches!(scan.tokens[first].kind, Kind::Digits | Kind::Alnum) {
            first += 1;
            continue;
        }
        let mut last = first;
        while joined(scan, last) {
            last += 1;
        }
        if let Some((code, shape)) = read(scan, first, last) {
            found.push(Candidate {
                first,
                last,
                code,
                shape,
            });
        }
        first = last + 1;
    }
    found
}

fn read(scan: &Scan, first: usize, last: usize) -> Option<(String, Shape)> {
    let all_digits = |from: usize| (from..=last).all(|i| scan.tokens[i].kind == Kind::Digits);
    if all_digits(first) {
        digits(scan, first, last)
    } else if last > first && is_prefix(scan.word(first)) && all_digits(first + 1) {
        // `G-123456`: the letters label the sender; the field to fill takes the digits.
        digits(scan, first + 1, last)
    } else if last == first + 1 && all_digits(last) {
        // A word, a dash and a number name a thing: `COVID-19`, `PROJ-1234`.
        None
    } else {
        alphanumeric(scan, first, last)
    }
}

/// The label of a prefixed code: `G` (Google), `FB` (Facebook).
fn is_prefix(word: &str) -> bool {
    (1..=2).contains(&word.len()) && word.bytes().all(|b| b.is_ascii_uppercase())
}

fn digits(scan: &Scan, first: usize, last: usize) -> Option<(String, Shape)> {
    let code: String = (first..=last).map(|i| scan.word(i)).collect();
    let grouped = last > first;
    let group_len = scan.word(first).len();
    let evenly_grouped = GROUP_LEN.contains(&group_len)
        && (first..=last).all(|i| scan.word(i).len() == group_len)
        && (first..last).all(|i| scan.gap_after(i) == scan.gap_after(first));
    (CODE_LEN.contains(&code.len()) && (!grouped || evenly_grouped)).then(|| {
        let len = code.len();
        (code, Shape::Digits { len, grouped })
    })
}

fn alphanumeric(scan: &Scan, first: usize, last: usize) -> Option<(String, Shape)> {
    let code: String = (first..=last).map(|i| scan.word(i)).collect();
    let has = |test: fn(&u8) -> bool| code.as_bytes().iter().any(test);
    let shaped = CODE_LEN.contains(&code.len())
        && has(u8::is_ascii_digit)
        && has(u8::is_ascii_alphabetic)
        && !is_masked(&code)
        && !is_measure(&code)
        && !is_price(&code)
        && !is_month_date(&code);
    let lowercase = has(u8::is_ascii_lowercase);
    shaped.then_some((code, Shape::Alphanumeric { lowercase }))
}

/// A masked card or account number: `XXXX1234`.
fn is_masked(code: &str) -> bool {
    code.bytes()
        .filter(u8::is_ascii_alphabetic)
        .all(|b| b.eq_ignore_ascii_case(&b'x'))
}

/// A number glued to its unit: `10PM`, `15MIN`, `500MB`.
fn is_measure(code: &str) -> bool {
    let number = code.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = code[number.len()..].to_ascii_lowercase();
    number.bytes().all(|b| b.is_ascii_digit()) && lexicon::is_unit(&unit)
}

/// A date with its month in letters: `22NOV26`, `22NOV`, `NOV2026`.
fn is_month_date(code: &str) -> bool {
    let is_digit = |c: char| c.is_ascii_digit();
    let month = code.trim_start_matches(is_digit).trim_end_matches(is_digit);
    month.bytes().all(|b| b.is_ascii_alphabetic()) && lexicon::is_month(&month.to_ascii_lowercase())
}

/// A currency glued to its amount: `INR5000`, `Rs2500`, `USD25`.
fn is_price(code: &str) -> bool {
    let amount = code.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let currency = code[..code.len() - amount.len()].to_ascii_lowercase();
    amount.bytes().all(|b| b.is_ascii_digit()) && lexicon::is_currency(&currency)
}

fn is_currency_symbol(c: char) -> bool {
    CURRENCY_SYMBOLS.contains(c)
}

/// Whether the marks around tokens `first..=last` show a number that is not a code: a phone
/// number, reference, price, percentage, date, time, decimal, path or measure.
pub(super) fn excluded(scan: &Scan, first: usize, last: usize) -> bool {
    let before = scan.gap_before(first);
    let after = scan.gap_after(last);
    let previous = first.checked_sub(1);
    let next = (last + 1 < scan.tokens.len()).then_some(last + 1);
    marked_before(before)
        || marked_after(after)
        || previous.is_some_and(|i| glued(scan, i, before))
        || next.is_some_and(|i| glued(scan, i, after))
        || previous.is_some_and(|i| reference_abbreviation(scan, i, before))
        || previous.is_some_and(|i| tight(before) && priced_by(scan, i))
        // A dot after the number ends its sentence: "Your OTP is 7521. Rs.2,500.00 will be
        // debited" names no unit of the code.
        || next.is_some_and(|i| after.trim().is_empty() && measured_by(scan, i))
}

/// Marks on the candidate's line: `+` starts a phone number, `#`, `№` and `°` a reference,
/// `@` a handle, `©` a year, a currency a price.
fn marked_before(gap: &str) -> bool {
    let same_line = gap.rsplit('\n').next().unwrap_or(gap);
    same_line
        .trim_end()
        .chars()
        .next_back()
        .is_some_and(|c| matches!(c, '+' | '#' | '№' | '°' | '@' | '©') || is_currency_symbol(c))
}

/// `%` ends a percentage, `@` an email address, a currency a price.
fn marked_after(gap: &str) -> bool {
    let same_line = gap.split('\n').next().unwrap_or(gap);
    same_line
        .trim_start()
        .chars()
        .next()
        .is_some_and(|c| matches!(c, '%' | '‰' | '@') || is_currency_symbol(c))
}

/// Whether one character glues the candidate to the neighbouring token `i` into something
/// larger: `12:30`, `1,299`, `22.11.2026`, `/login/48213`, `?code=123456`, `Nr-12345`.
fn glued(scan: &Scan, i: usize, gap: &str) -> bool {
    let Some(c) = single_char(gap) else {
        return false;
    };
    match scan.tokens[i].kind {
        Kind::Digits => matches!(c, '.' | ',' | ':') || is_path_char(c),
        Kind::Alnum => is_path_char(c),
        Kind::Word => is_path_char(c) || is_dash(c),
        Kind::Cjk => false,
    }
}

fn is_path_char(c: char) -> bool {
    matches!(c, '/' | '\\' | '_' | '=' | '&' | '?' | '|')
}

/// "No. 12345678", "Nr. 4455667".
fn reference_abbreviation(scan: &Scan, i: usize, gap: &str) -> bool {
    gap.starts_with('.') && lexicon::is_number_abbreviation(&scan.lowercase_word(i))
}

/// Nothing but spaces, or the dot of an abbreviation ("Rs. 1299").
fn tight(gap: &str) -> bool {
    matches!(gap.trim(), "" | ".")
}

/// Whether token `i`, right before a number, is its currency: "USD 1299", "Rs. 1299".
fn priced_by(scan: &Scan, i: usize) -> bool {
    lexicon::is_currency(&scan.lowercase_word(i))
}

/// Whether token `i`, right after a number, is its unit or currency: "1500 mg", "5分钟".
fn measured_by(scan: &Scan, i: usize) -> bool {
    match scan.tokens[i].kind {
        Kind::Cjk => scan.word(i).chars().all(lexicon::is_cjk_unit),
        Kind::Alnum | Kind::Word => lexicon::is_unit(&scan.lowercase_word(i)),
        Kind::Digits => false,
    }
}

/// Whether the word right before token `first` introduces a time or a date: "expires at
/// 1045", "valid until 22-11-26".
pub(super) fn after_when_word(scan: &Scan, first: usize) -> bool {
    first.checked_sub(1).is_some_and(|i| {
        matches!(scan.tokens[i].kind, Kind::Alnum | Kind::Word)
            && scan.gap_before(first).trim().is_empty()
            && lexicon::is_when_word(&scan.lowercase_word(i))
    })
}

/// Whether an instruction to type or use the candidate comes right before it: "Enter 4829",
/// "Saisissez 4829", "Geben Sie 4829 ein".
pub(super) fn instructed(scan: &Scan, first: usize) -> bool {
    let word_before = |i: usize| {
        i.checked_sub(1).filter(|&before| {
            matches!(scan.tokens[before].kind, Kind::Alnum | Kind::Word)
                && scan
                    .gap_before(i)
                    .chars()
                    .all(|c| c.is_whitespace() && c != '\n')
        })
    };
    let Some(mut verb) = word_before(first) else {
        return false;
    };
    if lexicon::is_instruction_filler(&scan.lowercase_word(verb)) {
        let Some(before) = word_before(verb) else {
            return false;
        };
        verb = before;
    }
    lexicon::is_instruction(&scan.lowercase_word(verb))
}

/// Whether a year-like candidate is written as a year: next to a month ("Nov 2026"), after
/// "in", "since", "de" or "©".
pub(super) fn dated(scan: &Scan, first: usize, last: usize) -> bool {
    let word = |i: usize| match scan.tokens[i].kind {
        Kind::Alnum | Kind::Word => Some(scan.lowercase_word(i)),
        Kind::Digits | Kind::Cjk => None,
    };
    let previous = first.checked_sub(1).and_then(word);
    let next = (last + 1 < scan.tokens.len())
        .then(|| word(last + 1))
        .flatten();
    scan.gap_before(first).contains('©')
        || previous.is_some_and(|w| lexicon::is_month(&w) || lexicon::is_year_word(&w))
        || next.is_some_and(|w| lexicon::is_month(&w))
}
