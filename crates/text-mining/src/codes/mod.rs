//! Verification codes in the text of a message (mail or SMS).
//!
//! One extractor serves email (`verification_codes`) and SMS (`parsed_code`, its first code).
//!
//! * **Shapes.** 4 to 8 digits, maybe in equal groups joined by one space or dash (`385 920`,
//!   `123-456`, `12 34 56`) or behind a one- or two-letter label and a dash (`G-123456`,
//!   `FB-12345`); or 4 to 8 letters and digits, with at least one of each (`A7B2KQ`, `X9-K2P`).
//!   Codes come back the way they are typed into one input box: separators and labels dropped.
//!   So `G-123456` gives `123456`: the `G-` only names Google, whose field takes six digits.
//! * **Keywords.** A keyword ("code", "OTP", "PIN", "código", "Bestätigungscode", "验证码"...)
//!   a few tokens before a candidate, or after it in the same sentence ("123456 is your
//!   code"), anchors it. A colon closes the phrase that names the candidate after it, so a
//!   keyword anywhere in that phrase, however long, anchors it as closely as "code:" does
//!   ("Here is the code you asked for to sign in to Figma: H7K2QX"), and wins over a blocker
//!   in its clause, which only says what the code is for ("Use this code to sign in to your
//!   account: R4T8WQ"); past a comma the blocker keeps the number ("If you didn't ask for a
//!   code, call us: 5550100"). Likewise a candidate opening its clause is what the noun after
//!   "is" names: a keyword heading that noun phrase anchors it as closely, whatever stands
//!   before the clause ("Dear Customer, 482913 is the OTP for …", "4829是您…的动态码"), and a
//!   blocker or an amount word in it names something else ("4829 is the room number"). A
//!   number with marks inside (`$1,250.00`, `14:35`) counts as one word on the way to a
//!   keyword, and its dots end no sentence, nor does a dot inside a name (`acme.com`). A
//!   short validity after digits, an expiry word with minutes or a clock time ("Use 4829
//!   within 10 minutes", "valid until 14:35", "expire à 14h35"), anchors them as a keyword
//!   would; not letters-with-digits, as promo codes carry validities too. An instruction to
//!   type or use the candidate right before it ("Enter", "Saisissez", "Geben Sie") with a
//!   time it expires at or by in its sentence or the next ("Please enter 5839 on the sign-in
//!   page. It expires at 14:35.", "Enter K2M9PX on example.com before 09:30") anchors digits
//!   and letters-with-digits alike, but not a word with a number (`SAVE20`), as shops set
//!   such times for promo codes. A blocker right after a number ("1234 Main Street") stands
//!   against a validity or such an instruction. 6 to 8 plain digits are codes even without a
//!   keyword: most codes have six digits, while shorter numbers are too often years,
//!   postcodes, house numbers or counts. 4 or 5 digits, grouped digits and
//!   letters-with-digits need a keyword; a year-like number (1900-2099) or an 8-digit date
//!   needs one right next to it ("Your code is 2026"). When any candidate is anchored, the
//!   others are taken for footer noise and dropped.
//! * **Exclusions.** A run that is not code-shaped as a whole gives nothing, so no part of a
//!   phone number (`+1 415 555 0100`, `0800 123 456`), a date (`2026-11-22`) or a tracking
//!   number is a code. Nor is a number glued by `.`, `,`, `:` or `/` to another (`1,299.00`,
//!   `22/11/2026`, `12:30`), after `+`, `#`, `№`, `©`, "No." or a currency, before `%`, a unit
//!   or a currency (`49 USD`, `1500 mg`), glued to a currency (`INR5000`), inside a URL or
//!   email address, or right after a blocker ("Order", "tracking number", "Ref:", "call",
//!   "promo code", "订单", "尾号"...). Words naming a sum ("amount", "total", "余额") block
//!   only the number after them: "Use 847261 to approve the amount of $25.00" holds a code.
//!   After a word of time, a clock time or a date in groups of two is none ("expires at
//!   1045", "until 22-11-26"), and a date with its month in letters never is (`22NOV26`).
//! * **Origin-bound line.** A last line `@example.com #123456` (the format browsers fill codes
//!   from), or a last line of text ending in ` @example.com #123456` ("Use 4821 to sign in
//!   @app.example.com #4821"), names its code outright: it comes first, and it anchors like a
//!   keyword does.
//! * **Ranking.** Anchored codes first, the closest to their keyword first (in coarse steps);
//!   then 6 digits, then 4 or 8, then 5 or 7, then letters-with-digits; then text order.

mod candidate;
#[cfg(test)]
mod corpus;
mod lexicon;
mod origin_bound;
mod scan;
mod words;

use std::cmp::Reverse;
use std::collections::HashSet;

use candidate::{Candidate, Shape};
use scan::Scan;

/// A year-like number needs its keyword this close: "code is 2026", "2026 is your code".
const YEAR_REACH: Reach = Reach {
    before: 1,
    after: 3,
    standalone: false,
    validity: false,
    instruction: false,
};
/// Letters with digits need a keyword close by: words like `COVID19` or `MP4` are about.
const ALNUM_REACH: usize = 3;

/// The verification codes found in `text`, most likely first, without duplicates.
pub fn extract_verification_codes(text: &str) -> Vec<String> {
    let bound = origin_bound::origin_bound_code(text);
    let scan = Scan::new(text);
    let mut found: Vec<Found> = candidate::candidates(&scan)
        .into_iter()
        .filter_map(|candidate| judge(&scan, candidate))
        .collect();
    if bound.is_some() || found.iter().any(|found| found.distance.is_some()) {
        found.retain(|found| found.distance.is_some());
    }
    // Stable: equal ranks keep the order of the text.
    found.sort_by_key(Found::rank);
    let mut seen = HashSet::new();
    bound
        .into_iter()
        .chain(found.into_iter().map(|found| found.code))
        .filter(|code| seen.insert(code.clone()))
        .collect()
}

/// A candidate judged to be a code.
struct Found {
    code: String,
    /// Tokens between the code and its keyword, if it has one.
    distance: Option<usize>,
    likelihood: u8,
}

impl Found {
    fn rank(&self) -> (usize, Reverse<u8>) {
        // "code: 4821" and "code is 4821" are equally close: only coarse steps count.
        let closeness = self.distance.map_or(usize::MAX, |distance| distance / 3);
        (closeness, Reverse(self.likelihood))
    }
}

/// How far a keyword may be for a candidate, whether the candidate may do without one,
/// whether a validity after it anchors it as a keyword would, and whether an instruction
/// before it with a time it expires at after it does.
struct Reach {
    before: usize,
    after: usize,
    standalone: bool,
    validity: bool,
    instruction: bool,
}

fn reach(candidate: &Candidate, alone: bool) -> Reach {
    if candidate.is_year_like() || candidate.is_compact_date() {
        return YEAR_REACH;
    }
    match candidate.shape {
        Shape::Digits { len, grouped } => Reach {
            before: usize::MAX,
            after: usize::MAX,
            standalone: !grouped && len >= 6,
            validity: true,
            instruction: true,
        },
        // Alone on its line under the sentence that announces it, as emails show codes.
        // Promo codes carry short validities too ("SAVE20 for the next 30 minutes"), and are
        // words with a number even when a shop says when to use them by.
        Shape::Alphanumeric { lowercase: false } => Reach {
            before: if alone { usize::MAX } else { ALNUM_REACH },
            after: ALNUM_REACH,
            standalone: false,
            validity: false,
            instruction: !candidate.is_word_with_number(),
        },
        // Lowercase words with digits are common ("mp3s", "4g"): only right after a keyword.
        Shape::Alphanumeric { lowercase: true } => Reach {
            before: 1,
            after: 2,
            standalone: false,
            validity: false,
            instruction: false,
        },
    }
}

/// How likely a code of this shape is; 6 digits are the most common.
fn likelihood(shape: Shape) -> u8 {
    match shape {
        Shape::Digits { len: 6, .. } => 3,
        Shape::Digits { len: 4 | 8, .. } => 2,
        Shape::Digits { .. } => 1,
        Shape::Alphanumeric { .. } => 0,
    }
}

fn judge(scan: &Scan, candidate: Candidate) -> Option<Found> {
    let (first, last) = (candidate.first, candidate.last);
    if scan.in_link(first, last)
        || candidate::excluded(scan, first, last)
        || (candidate.is_year_like() && candidate::dated(scan, first, last))
        || ((candidate.is_clock_like() || candidate.is_short_date())
            && candidate::after_when_word(scan, first))
    {
        return None;
    }
    let alone = scan.alone_on_line(first, last);
    let before = scan.look_back(first, alone);
    let after = scan.look_ahead(first, last);
    let reach = reach(&candidate, alone);
    let deadline = (reach.instruction && candidate::instructed(scan, first))
        .then(|| scan.deadline_after(last))
        .flatten();
    // A blocker right after the number names it ("Enter 1234 Main Street … before 14:35");
    // only a keyword wins over it.
    let bounded = [after.validity.filter(|_| reach.validity), deadline]
        .into_iter()
        .flatten()
        .min()
        .filter(|_| !after.blocked);
    let distance = [
        before.keyword.filter(|&distance| distance <= reach.before),
        after.keyword.filter(|&distance| distance <= reach.after),
        bounded,
    ]
    .into_iter()
    .flatten()
    .min();
    let unanchored_refused = distance.is_none() && (after.blocked || !reach.standalone);
    if (before.blocked && !after.named) || unanchored_refused {
        return None;
    }
    Some(Found {
        likelihood: likelihood(candidate.shape),
        code: candidate.code,
        distance,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::corpus::CORPUS;
    use super::*;

    fn codes(text: &str) -> Vec<String> {
        extract_verification_codes(text)
    }

    #[test]
    fn the_corpus_gives_exactly_the_expected_codes() {
        let failures: Vec<String> = CORPUS
            .iter()
            .filter(|(text, expected)| codes(text) != *expected)
            .map(|(text, expected)| {
                format!(
                    "{text:?}\n  expected {expected:?}\n  got      {:?}",
                    codes(text)
                )
            })
            .collect();
        assert!(
            failures.is_empty(),
            "{} of {} messages:\n{}",
            failures.len(),
            CORPUS.len(),
            failures.join("\n")
        );
    }

    #[test]
    fn the_corpus_is_large_and_varied() {
        let without = CORPUS.iter().filter(|(_, codes)| codes.is_empty()).count();
        assert!(CORPUS.len() - without >= 80, "messages with a code");
        assert!(without >= 20, "messages without a code");
    }

    #[test]
    fn six_to_eight_digits_stand_alone_but_four_or_five_need_a_keyword() {
        assert_eq!(codes("482913"), ["482913"]);
        assert_eq!(codes("Use 7392041 to sign in"), ["7392041"]);
        assert_eq!(codes("73920418"), ["73920418"]);
        assert!(codes("4829").is_empty());
        assert!(codes("Meet me at 48291 Ocean Drive").is_empty());
        assert_eq!(codes("Code 4829"), ["4829"]);
        assert_eq!(codes("48291 is your code"), ["48291"]);
        assert!(codes("123456789").is_empty(), "nine digits are too many");
        assert!(codes("Code 123").is_empty(), "three digits are too few");
    }

    #[test]
    fn grouped_digits_are_joined_and_need_a_keyword() {
        assert_eq!(codes("Your code: 123-456"), ["123456"]);
        assert_eq!(codes("Your code: 385 920"), ["385920"]);
        assert_eq!(codes("Your code: 12 34 56"), ["123456"]);
        assert_eq!(codes("Your code: 1234 5678"), ["12345678"]);
        assert!(codes("Population 385 920").is_empty());
        assert!(codes("Your code: 123 4567").is_empty(), "unequal groups");
    }

    #[test]
    fn a_prefixed_code_gives_the_digits_a_user_types() {
        assert_eq!(
            codes("G-123456 is your Google verification code."),
            ["123456"]
        );
        assert_eq!(codes("FB-12345 is your Facebook code"), ["12345"]);
        assert!(codes("See ticket PROJ-1234").is_empty());
    }

    #[test]
    fn a_colon_ties_a_code_to_the_phrase_that_names_it() {
        assert_eq!(codes("Login code: 4GH-72K"), ["4GH72K"]);
        assert_eq!(
            codes("Your code to sign in to Acme on the web: XK3-9P2"),
            ["XK39P2"]
        );
        assert!(
            codes("Your code is below. Sign in to Acme on the web: XK3-9P2").is_empty(),
            "the keyword is in another sentence"
        );
        assert!(codes("Discount code: SUMMER").is_empty(), "letters only");
        assert!(codes("Discount code for your next order: SAVE20").is_empty());
        assert!(codes("Error code: E404").is_empty());
    }

    #[test]
    fn a_code_opening_its_clause_is_what_the_noun_after_is_names() {
        assert_eq!(
            codes("Hello! A7K2QX is a one-time code for Acme."),
            ["A7K2QX"]
        );
        assert_eq!(codes("Hola, A7K2QX es su código de acceso."), ["A7K2QX"]);
        assert_eq!(codes("Olá, A7K2QX é um código para entrar."), ["A7K2QX"]);
        assert_eq!(
            codes("Hi, A7K2QX is your acme.com sign-in verification code"),
            ["A7K2QX"]
        );
        assert!(
            codes("Hi, A7K2QX is the name of the Acme login code").is_empty(),
            "of"
        );
        assert!(
            codes("Hi, A7K2QX is the model the new code reader replaced").is_empty(),
            "a keyword inside the phrase heads nothing"
        );
        assert_eq!(
            codes("Hi, A7K2QX is the Acme two-factor authentication code"),
            ["A7K2QX"]
        );
        assert!(
            codes("Your new A7K2QX is the Acme two-factor authentication code").is_empty(),
            "the candidate does not open its clause"
        );
        assert!(
            codes("Customer 4829 is the OTP").is_empty(),
            "a blocker in the clause keeps its number"
        );
        assert!(
            codes("Your order, 12345678, has shipped.").is_empty(),
            "nor does a comma free it"
        );
    }

    #[test]
    fn a_sum_of_money_is_no_code_and_no_bar_to_one() {
        assert_eq!(codes("4829 ($1,250.00 to Alex) is your code"), ["4829"]);
        assert_eq!(
            codes("Use 847261 to approve the amount of $25.00"),
            ["847261"]
        );
        assert!(codes("Total: 582913").is_empty(), "a sum follows its word");
        assert!(codes("Your OTP for INR5000").is_empty());
        assert!(codes("Code for RM250 off").is_empty());
    }

    #[test]
    fn a_short_validity_marks_a_code_and_its_times_are_none() {
        assert_eq!(codes("Use 4829 within 10 minutes"), ["4829"]);
        assert_eq!(codes("4829, valid for 5 min"), ["4829"]);
        assert_eq!(codes("Use 4829 within 10min"), ["4829"]);
        assert_eq!(codes("4829 expires at 10:45 PM"), ["4829"]);
        assert!(
            codes("Use 4829 within 2 hours").is_empty(),
            "parcels and tables"
        );
        assert!(
            codes("Route 4829 departs in 10 minutes").is_empty(),
            "a duration with no word of expiry"
        );
        assert!(
            codes("SAVE20 for the next 30 minutes").is_empty(),
            "promo codes carry validities too"
        );
        assert_eq!(codes("Your code 4829 expires at 1045"), ["4829"]);
        assert_eq!(codes("Your code 4829 is valid until 22-11-26"), ["4829"]);
        assert_eq!(codes("OTP 4829 valid till 22NOV"), ["4829"]);
        assert_eq!(
            codes("Your code is 1045"),
            ["1045"],
            "no word of time before it"
        );
    }

    #[test]
    fn an_instruction_and_a_time_it_expires_by_mark_a_code() {
        assert_eq!(codes("Enter 4829 here before 14:35"), ["4829"]);
        assert_eq!(codes("Enter 4829 here. It expires at 14:35"), ["4829"]);
        assert_eq!(codes("Geben Sie K2M9PX bis 09:30 ein"), ["K2M9PX"]);
        assert!(codes("Enter 4829 here.").is_empty(), "no time");
        assert!(
            codes("Enter 4829 here.\n\nIt expires at 14:35").is_empty(),
            "another paragraph"
        );
        assert!(
            codes("Enter 4829 here. Read on. It expires at 14:35").is_empty(),
            "two sentences on"
        );
        assert!(codes("Enter 4829 within 2h").is_empty(), "hours are long");
        assert_eq!(codes("Use 4829 here before 14:35"), ["4829"]);
        assert!(
            codes("Enter SAVE20 before 23:59").is_empty(),
            "a promo code"
        );
        assert!(
            codes("Enter k2m9px before 23:59").is_empty(),
            "a lowercase word"
        );
        assert!(codes("Shop 4829 before 14:35").is_empty(), "no instruction");
        assert!(
            codes("Enter 1234 Main Street before 14:35").is_empty(),
            "a blocker right after it"
        );
    }

    #[test]
    fn a_year_is_a_code_only_right_next_to_a_keyword() {
        assert_eq!(codes("Your code is 2026"), ["2026"]);
        assert_eq!(codes("2026 is your Lyft code"), ["2026"]);
        assert!(codes("© 2026 Acme. Your code was sent earlier.").is_empty());
        assert!(codes("Your code changed in 2025").is_empty());
        assert!(codes("The code of conduct was updated in Nov 2025").is_empty());
    }

    #[test]
    fn anchored_codes_come_first_and_push_out_the_rest() {
        assert_eq!(codes("48291357\nYour code is 4829"), ["4829"]);
        assert_eq!(codes("Numbers 48291357 and 482913"), ["482913", "48291357"]);
        assert_eq!(
            codes("Your PIN is 4821 and your passcode is 582913"),
            ["582913", "4821"]
        );
    }

    #[test]
    fn a_large_body_is_read_in_one_pass() {
        let paragraph = "Hi, your order 12345678 shipped on 2026-11-22 at 12:30 for $12.99. \
                         Call +1 415 555 0100. 您的验证码是482913。 Code: X9-K2P\n";
        let text = paragraph.repeat(1_000_000 / paragraph.len() + 1);
        assert_eq!(codes(&text), ["482913", "X9K2P"]);
        let lines = "1234567\n".repeat(130_000);
        assert_eq!(codes(&lines), ["1234567"]);
        let one_long_run = "12 ".repeat(350_000);
        assert!(codes(&one_long_run).is_empty());
        let one_long_number = "1234;".repeat(200_000);
        assert!(codes(&one_long_number).is_empty());
    }

    proptest! {
        #[test]
        fn any_text_gives_distinct_code_shaped_strings(text in any::<String>()) {
            let found = codes(&text);
            let distinct: HashSet<&String> = found.iter().collect();
            prop_assert_eq!(distinct.len(), found.len());
            for code in &found {
                prop_assert!((4..=8).contains(&code.len()));
                prop_assert!(code.bytes().all(|b| b.is_ascii_alphanumeric()));
            }
        }

        #[test]
        fn code_like_text_never_panics(
            text in r"([0-9]{1,9}|[A-Za-z]{1,6}|code|验证码|[ \-:./#+\n@$%]){0,40}"
        ) {
            let found = codes(&text);
            let distinct: HashSet<&String> = found.iter().collect();
            prop_assert_eq!(distinct.len(), found.len());
        }
    }
}
