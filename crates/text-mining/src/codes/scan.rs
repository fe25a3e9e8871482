//! A message cut into tokens, with the cue of each token, the links in it, and walks from a
//! candidate to the nearest cue.

use std::borrow::Cow;
use std::ops::Range;

use super::lexicon::{self, Cue};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// ASCII digits only.
    Digits,
    /// ASCII letters, maybe with digits.
    Alnum,
    /// Any other run of letters and digits: accents, Cyrillic...
    Word,
    /// One Chinese, Japanese or Korean character: those scripts do not separate words.
    Cjk,
}

/// A run of letters or digits; the text between two tokens (spaces, punctuation) is a gap.
#[derive(Debug, Clone, Copy)]
pub(super) struct Token {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

/// A keyword within this many tokens of a candidate anchors it.
const REACH_BEFORE: usize = 8;
/// ...or within this many when the candidate sits alone on its line, the way emails show a
/// code under the paragraph that announces it, or after the colon that ends a phrase naming it.
const REACH_BEFORE_ALONE: usize = 30;
const REACH_AFTER: usize = 6;
/// A number with marks inside reads as one word up to this many pieces (`$1,250,000.00`);
/// past them each piece is a word, which keeps every walk short.
const NUMBER_PIECES: usize = 4;
/// A time a code expires at or by may come this many tokens after it, in its sentence or the
/// next ("Enter 4829 on the checkout page to approve your payment of $25.00. It expires at
/// 14:35").
const REACH_DEADLINE: usize = 16;
/// The noun phrase after "is" is read this many tokens far at most; a CJK character is one
/// ("4829是您本次交易人民币2,500.00元的动态码").
const REACH_PREDICATE: usize = 24;
/// A blocker rules out a number only this close to it ("Order #12345678").
const BLOCKER_REACH: usize = 3;

/// The cues found on one side of a candidate.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Look {
    /// How many tokens lie between the candidate and the nearest keyword.
    pub keyword: Option<usize>,
    /// A blocker is close enough to claim the candidate.
    pub blocked: bool,
    /// How many tokens lie between the candidate and a validity after it ("within 10 min").
    pub validity: Option<usize>,
    /// The candidate opens its clause and the noun after "is" names it a code: a blocker
    /// before it is in another clause ("Dear Customer, 482913 is the OTP").
    pub named: bool,
}

pub(super) struct Scan<'t> {
    text: &'t str,
    pub tokens: Vec<Token>,
    cues: Vec<Option<Cue>>,
    links: Vec<Range<usize>>,
}

impl<'t> Scan<'t> {
    pub fn new(text: &'t str) -> Self {
        let tokens = tokenize(text);
        let cues = lexicon::cues(text, &tokens);
        Scan {
            text,
            tokens,
            cues,
            links: links(text),
        }
    }

    pub fn word(&self, i: usize) -> &'t str {
        let token = self.tokens[i];
        &self.text[token.start..token.end]
    }

    pub fn lowercase_word(&self, i: usize) -> Cow<'t, str> {
        lexicon::lowercase(self.word(i))
    }

    /// The text between token `i - 1` (or the start) and token `i`.
    pub fn gap_before(&self, i: usize) -> &'t str {
        let start = i
            .checked_sub(1)
            .map_or(0, |previous| self.tokens[previous].end);
        &self.text[start..self.tokens[i].start]
    }

    /// The text between token `i` and token `i + 1` (or the end).
    pub fn gap_after(&self, i: usize) -> &'t str {
        let end = self
            .tokens
            .get(i + 1)
            .map_or(self.text.len(), |next| next.start);
        &self.text[self.tokens[i].end..end]
    }

    fn has_digit(&self, i: usize) -> bool {
        match self.tokens[i].kind {
            Kind::Digits => true,
            Kind::Alnum => self.word(i).bytes().any(|b| b.is_ascii_digit()),
            Kind::Word | Kind::Cjk => false,
        }
    }

    /// Whether tokens `first..=last` overlap a URL or an email address.
    pub fn in_link(&self, first: usize, last: usize) -> bool {
        let (start, end) = (self.tokens[first].start, self.tokens[last].end);
        let next = self.links.partition_point(|link| link.end <= start);
        self.links.get(next).is_some_and(|link| link.start < end)
    }

    /// Whether tokens `first..=last` are the only ones on their line.
    pub fn alone_on_line(&self, first: usize, last: usize) -> bool {
        let starts_line = first == 0 || self.gap_before(first).contains('\n');
        let ends_line = last + 1 == self.tokens.len() || self.gap_after(last).contains('\n');
        starts_line && ends_line
    }

    /// The nearest cue before token `first`, walking back over newlines but not over the end
    /// of a sentence. A candidate alone on its line is read with the paragraph above it: the
    /// walk goes farther and across sentences, and a keyword in the sentence of a blocker
    /// wins over it ("the code you need to log in to account ana:"). A colon right before the
    /// candidate ends the phrase that names it, however long: a keyword anywhere in that
    /// phrase counts as right next to the candidate ("Here is the code you asked for to sign
    /// in to Figma: H7K2QX"), and wins over a blocker in its clause, which is only what the
    /// code is for ("Use this code to sign in to your account: R4T8WQ"). Past a comma the
    /// blocker keeps the number ("If you didn't ask for a code, call us: 5550100").
    pub fn look_back(&self, first: usize, alone: bool) -> Look {
        let mut look = Look::default();
        let mut digits_between = false;
        let mut distance = 0;
        let mut pieces = 1;
        let mut in_named_phrase = self.follows_colon(first);
        for i in (0..first).rev() {
            // The gap right before the candidate may hold the dot of an abbreviation
            // ("Ref. 4455667"), so the walk stops only at sentence ends farther back.
            if i + 1 < first {
                let gap = self.gap_after(i);
                let within_number = self.within_number(i) && pieces < NUMBER_PIECES;
                if within_number {
                    pieces += 1;
                } else {
                    distance += 1;
                    pieces = 1;
                }
                let reach = if alone || in_named_phrase {
                    REACH_BEFORE_ALONE
                } else {
                    REACH_BEFORE
                };
                if distance > reach {
                    break;
                }
                let sentence_end = !within_number && self.ends_sentence_after(i);
                if sentence_end && (look.blocked || !alone) {
                    break;
                }
                if look.blocked && in_named_phrase && !within_number && ends_clause(gap) {
                    break;
                }
                in_named_phrase &= !sentence_end && !ends_paragraph(gap);
            }
            match self.cues[i] {
                Some(Cue::Keyword) => {
                    look.keyword = Some(if in_named_phrase { 0 } else { distance });
                    look.blocked = false;
                    break;
                }
                // A blocker names the number right after it, not one past another number.
                Some(Cue::Blocker | Cue::Amount)
                    if distance <= BLOCKER_REACH && !digits_between =>
                {
                    look.blocked = true;
                    if !alone && !in_named_phrase {
                        break;
                    }
                }
                _ => {}
            }
            digits_between |= self.has_digit(i);
        }
        look
    }

    /// The tokens after token `last`, each with how many words lie between it and `last`: a
    /// number with marks inside (`$1,250.00`, `14:35`) counts as one word, for at most
    /// `NUMBER_PIECES` pieces.
    fn steps_after(&self, last: usize) -> impl Iterator<Item = Step> + '_ {
        let mut distance = 0;
        let mut pieces = 1;
        (last + 1..self.tokens.len()).map(move |token| {
            let within_number =
                token > last + 1 && self.within_number(token - 1) && pieces < NUMBER_PIECES;
            if within_number {
                pieces += 1;
            } else if token > last + 1 {
                distance += 1;
                pieces = 1;
            }
            Step {
                token,
                distance,
                within_number,
            }
        })
    }

    /// The cues after token `last` in the same sentence and line. A keyword anywhere in reach
    /// wins over a blocker: qualifiers come before the noun ("4821 is your account code"). A
    /// word naming an amount names the number after it, not this one ("Use 847261 to approve
    /// the amount of $25.00"). The first validity is noted, and the walk goes on to a keyword.
    /// A candidate opening its clause before "is" is read by the noun after it instead (see
    /// [`Self::predicate`]).
    pub fn look_ahead(&self, first: usize, last: usize) -> Look {
        match self.predicate(first, last) {
            Some(Cue::Keyword) => {
                return Look {
                    keyword: Some(0),
                    named: true,
                    ..Look::default()
                }
            }
            Some(_) => {
                return Look {
                    blocked: true,
                    ..Look::default()
                }
            }
            None => {}
        }
        let mut look = Look::default();
        let mut digits_between = false;
        for Step {
            token: i,
            distance,
            within_number,
        } in self.steps_after(last)
        {
            if distance > REACH_AFTER
                || (!within_number && self.ends_sentence_after(i - 1))
                || self.gap_before(i).contains('\n')
            {
                break;
            }
            match self.cues[i] {
                Some(Cue::Keyword) => {
                    look.keyword = Some(distance);
                    look.blocked = false;
                    break;
                }
                Some(Cue::Blocker) if distance <= BLOCKER_REACH && !digits_between => {
                    look.blocked = true;
                }
                Some(Cue::Validity) => {
                    look.validity.get_or_insert(distance);
                }
                _ => {}
            }
            digits_between |= self.has_digit(i);
        }
        look
    }

    /// How many tokens lie between token `last` and a time it expires at or by, in its
    /// sentence or the next, on its line or the next: "Please enter 5839 on the sign-in page.
    /// It expires at 14:35.", "Enter K2M9PX on example.com before 09:30 UTC".
    pub fn deadline_after(&self, last: usize) -> Option<usize> {
        let (mut sentence_ends, mut line_ends) = (0, 0);
        for Step {
            token: i,
            distance,
            within_number,
        } in self.steps_after(last)
        {
            sentence_ends += usize::from(!within_number && self.ends_sentence_after(i - 1));
            line_ends += self.gap_before(i).matches('\n').count();
            if distance > REACH_DEADLINE || sentence_ends > 1 || line_ends > 1 {
                return None;
            }
            if matches!(self.cues[i], Some(Cue::Validity | Cue::Deadline)) {
                return Some(distance);
            }
        }
        None
    }

    /// What the noun after "is" says the candidate `first..=last` is, when the candidate
    /// opens its clause. The noun phrase after "is" runs to a preposition standing on its own
    /// ("for", "of", "pour"...) or to the end of the phrase, and its last word is its head. A
    /// keyword there names the candidate as closely as "code:" does: "Dear Customer, 482913
    /// is the OTP for …", "Hello! 66A2KX is the one-time password for …", "4829是您本次交易…
    /// 的动态码，". Otherwise a blocker or an amount word in the phrase names it as something
    /// else: "4829 is the room number for …", "2500 is the amount debited for your OTP
    /// request". A keyword inside the phrase heads nothing: "2026 is the year two-factor
    /// authentication became the default".
    fn predicate(&self, first: usize, last: usize) -> Option<Cue> {
        let opens_clause = first == 0
            || self
                .gap_before(first)
                .chars()
                .any(|c| c == '\n' || !c.is_whitespace());
        let copula = last + 1;
        let is = copula < self.tokens.len()
            && self.gap_before(copula).chars().all(is_inline_space)
            && lexicon::is_copula(&self.lowercase_word(copula));
        if !opens_clause || !is {
            return None;
        }
        let mut named_away = false;
        let end = self.tokens.len().min(copula + 1 + REACH_PREDICATE);
        for i in copula + 1..end {
            if self.is_preposition(i) {
                return self.head_of_predicate(i - 1, copula, named_away);
            }
            named_away |= matches!(self.cues[i], Some(Cue::Blocker | Cue::Amount));
            if i + 1 == self.tokens.len() || self.ends_phrase(i) {
                return self.head_of_predicate(i, copula, named_away);
            }
        }
        None
    }

    /// What the predicate whose last word is token `head` names, see [`Self::predicate`].
    fn head_of_predicate(&self, head: usize, copula: usize, named_away: bool) -> Option<Cue> {
        if head > copula && self.cues[head] == Some(Cue::Keyword) {
            Some(Cue::Keyword)
        } else {
            named_away.then_some(Cue::Blocker)
        }
    }

    /// Whether token `i` is a preposition standing on its own, not the end of a compound
    /// ("sign-in code").
    fn is_preposition(&self, i: usize) -> bool {
        self.gap_before(i).chars().all(char::is_whitespace)
            && lexicon::is_preposition(&self.lowercase_word(i))
    }

    /// Whether the gap after token `i` ends a phrase: the end of a sentence, a clause or a
    /// line, or a colon; not a mark inside a number (`2,500.00`).
    fn ends_phrase(&self, i: usize) -> bool {
        let gap = self.gap_after(i);
        !self.within_number(i)
            && (self.ends_sentence_after(i) || ends_clause(gap) || gap.contains(['\n', ':', '：']))
    }

    /// Whether the gap after token `i` ends a sentence. A dot between two words is inside a
    /// name and ends none: `acme.com`, `Booking.com`.
    fn ends_sentence_after(&self, i: usize) -> bool {
        let gap = self.gap_after(i);
        let inside_name = gap == "." && i + 1 < self.tokens.len();
        ends_sentence(gap) && !inside_name
    }

    /// Whether the text right before token `first` ends with a colon.
    fn follows_colon(&self, first: usize) -> bool {
        self.gap_before(first).trim_end().ends_with([':', '：'])
    }

    /// Whether tokens `i` and `i + 1` are pieces of one number joined by one mark: `$1,250.00`,
    /// `14:35`, `22.11.2026`. Such a number reads as one word, and its dots end no sentence.
    fn within_number(&self, i: usize) -> bool {
        let digits = |i: usize| {
            self.tokens
                .get(i)
                .is_some_and(|token| token.kind == Kind::Digits)
        };
        let mut gap = self.gap_after(i).chars();
        digits(i) && digits(i + 1) && gap.next().is_some_and(|c| c != '\n') && gap.next().is_none()
    }
}

fn ends_sentence(gap: &str) -> bool {
    gap.contains(['.', '!', '?', '…', '。', '！', '？'])
}

/// A space within a line: words of one phrase are apart by nothing else.
fn is_inline_space(c: char) -> bool {
    c.is_whitespace() && c != '\n'
}

/// A comma or a semicolon: the end of a clause within a sentence.
fn ends_clause(gap: &str) -> bool {
    gap.contains([',', ';', '，', '；'])
}

/// A blank line between two tokens.
fn ends_paragraph(gap: &str) -> bool {
    gap.matches('\n').nth(1).is_some()
}

/// Letters of the scripts written without spaces between words.
pub(super) fn is_cjk_letter(c: char) -> bool {
    c.is_alphanumeric()
        && matches!(c,
            '\u{1100}'..='\u{11FF}'      // Hangul Jamo
            | '\u{3040}'..='\u{30FF}'    // Hiragana, Katakana
            | '\u{3130}'..='\u{318F}'    // Hangul compatibility Jamo
            | '\u{31F0}'..='\u{31FF}'    // Katakana extensions
            | '\u{3400}'..='\u{4DBF}'    // CJK extension A
            | '\u{4E00}'..='\u{9FFF}'    // CJK unified ideographs
            | '\u{AC00}'..='\u{D7AF}'    // Hangul syllables
            | '\u{F900}'..='\u{FAFF}'    // CJK compatibility ideographs
            | '\u{FF66}'..='\u{FF9F}'    // Halfwidth Katakana
            | '\u{20000}'..='\u{2FFFF}') // CJK extensions B and later
}

fn kind_of(word: &str) -> Kind {
    if word.bytes().all(|b| b.is_ascii_digit()) {
        Kind::Digits
    } else if word.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Kind::Alnum
    } else {
        Kind::Word
    }
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let mut end = start + c.len_utf8();
        if is_cjk_letter(c) {
            tokens.push(Token {
                start,
                end,
                kind: Kind::Cjk,
            });
        } else if c.is_alphanumeric() {
            while let Some((at, next)) =
                chars.next_if(|&(_, next)| next.is_alphanumeric() && !is_cjk_letter(next))
            {
                end = at + next.len_utf8();
            }
            tokens.push(Token {
                start,
                end,
                kind: kind_of(&text[start..end]),
            });
        }
    }
    tokens
}

/// Characters a URL or an email address can hold, as written in running text.
fn is_link_char(c: char) -> bool {
    c.is_ascii_graphic() && !matches!(c, '<' | '>' | '"' | '\'' | '(' | ')' | '[' | ']' | '`')
}

fn looks_like_link(chunk: &str) -> bool {
    chunk.contains("://")
        || chunk.contains('@')
        || chunk
            .get(..4)
            .is_some_and(|head| head.eq_ignore_ascii_case("www."))
}

/// The byte ranges of the URLs and email addresses of `text`, in order.
fn links(text: &str) -> Vec<Range<usize>> {
    let mut links = Vec::new();
    let mut start = 0;
    // The end of the text closes the last chunk as a space would.
    let ends = text
        .char_indices()
        .filter(|&(_, c)| !is_link_char(c))
        .chain([(text.len(), ' ')]);
    for (end, c) in ends {
        if looks_like_link(&text[start..end]) {
            links.push(start..end);
        }
        start = end + c.len_utf8();
    }
    links
}

/// A token on a walk away from a candidate: how far it is, in words, and whether it continues a
/// number the walk is inside.
struct Step {
    token: usize,
    distance: usize,
    within_number: bool,
}
