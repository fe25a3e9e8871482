//! The service that sent a verification message (SMS or mail), recognised from its text.
//!
//! * **Where a name is.** In order: a bracketed prefix (`[Uber]`, `【微信】`, `(Google)`; after
//!   an SMS Retriever `<#>`, and past brackets without a name like `[#]`, `(1/2)`, `[Web발신]`);
//!   a label (`Amazon: …`, `Microsoft account: …`); then next to the first "code" word that has
//!   one: before it ("your Instagram code", "Google verification code", "Ihr Uber-Code") or after
//!   it behind a connective ("code from PayPal", "código de verificación de Mercado Libre",
//!   "Bestätigungscode für N26"), or straight after "your code" or a code word opening its
//!   clause ("Votre code Doctolib", "Seu código Uber", "Код подтверждения Яндекс").
//! * **What a name is.** Up to five words, 40 characters, on one line, each with a capital
//!   ("PayPal", "iFood", "N26", "Bank of America" through a lowercase joiner), neither generic
//!   (a sorted list: "Your", "Verification", "Account", "SMS", "One-time"...) nor shaped like a
//!   code ("A7B2KQ", "G-123456"). Scripts without capitals (Chinese, Korean, Thai...) give a name
//!   only in a bracketed prefix, where the bracket marks it.
//! * **As written.** The name keeps the case and script of the message ("微信", not "WeChat";
//!   "AMAZON" stays upper case) with its words one space apart; [`matches_service`] compares
//!   names loosely, so callers need no alias table.
//!
//! The text is read once, and only a bounded neighbourhood of each word is looked at again.

mod matching;
mod scan;
mod words;

#[cfg(test)]
mod corpus;

pub use matching::{matches_service, sender_may_be, Sender};

use scan::{Class, Direction, Letters, Scan};

/// A bracket holding more than this is a sentence, not a sender.
const MAX_BRACKET_CHARS: usize = 40;
/// A label ends with a colon this close to the start of the message.
const MAX_LABEL_CHARS: usize = 64;
/// Generic words that may stand between a code word and the name: "code to sign in to Uber".
const MAX_SKIPPED: usize = 4;

const BRACKETS: &[(char, char)] = &[
    ('(', ')'),
    ('[', ']'),
    ('「', '」'),
    ('【', '】'),
    ('〔', '〕'),
    ('（', '）'),
    ('［', '］'),
];

/// The name of the service that sent `text`, as written in it; `None` when no name is found.
pub fn recognise_service(text: &str) -> Option<String> {
    let text = text.trim_start();
    // Android's SMS Retriever tag comes before anything else.
    let text = text.strip_prefix("<#>").unwrap_or(text).trim_start();
    bracketed_prefix(text)
        .or_else(|| labelled_prefix(text))
        .or_else(|| beside_code_word(&Scan::new(text, Letters::Capitalised)))
}

/// `[Uber] …`, `【微信】…`, `[#][TikTok] …`.
fn bracketed_prefix(text: &str) -> Option<String> {
    let mut rest = text;
    loop {
        let (inside, after) = split_bracket(rest)?;
        if let Some(name) = sole_name(inside, Letters::Uncased) {
            return Some(name);
        }
        rest = after.trim_start();
    }
}

/// The inside of the bracket that opens `text`, and the text after it.
fn split_bracket(text: &str) -> Option<(&str, &str)> {
    let open = text.chars().next()?;
    let &(_, close) = BRACKETS.iter().find(|&&(bracket, _)| bracket == open)?;
    let body = &text[open.len_utf8()..];
    let (end, _) = body
        .char_indices()
        .take(MAX_BRACKET_CHARS + 1)
        .find(|&(_, c)| c == close)?;
    Some((&body[..end], &body[end + close.len_utf8()..]))
}

/// `Amazon: …`, `Microsoft account: …`, `Ameli : …`.
fn labelled_prefix(text: &str) -> Option<String> {
    let (end, colon) = text
        .char_indices()
        .take(MAX_LABEL_CHARS + 1)
        .take_while(|&(_, c)| c != '\n')
        .find(|&(_, c)| matches!(c, ':' | '：'))?;
    // A label's colon is followed by a space, unlike those of "12:30" or "https://"; the
    // full-width one needs none.
    let spaced = colon == '：'
        || text[end + colon.len_utf8()..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace);
    if !spaced {
        return None;
    }
    sole_name(&text[..end], Letters::Capitalised)
}

/// The name that opens `phrase`, when only generic words follow it: "Microsoft account" gives
/// "Microsoft"; "Dear Ana", "Your code" and "Amazon is great" give nothing.
fn sole_name(phrase: &str, letters: Letters) -> Option<String> {
    let scan = Scan::new(phrase, letters);
    if scan.word_count() == 0 || scan.class(0) != Class::Name {
        return None;
    }
    let run = scan.name_run(0, Direction::Forward)?;
    let rest_is_generic = (run.end() + 1..scan.word_count()).all(|i| scan.class(i).is_generic());
    rest_is_generic.then(|| scan.phrase(run))
}

/// The name next to the first code word that has one.
fn beside_code_word(scan: &Scan) -> Option<String> {
    (0..scan.word_count())
        .filter(|&i| scan.class(i) == Class::Code)
        .find_map(|code| name_before(scan, code).or_else(|| name_after(scan, code)))
}

/// "your Instagram code", "Google verification code", "Microsoft account security code".
fn name_before(scan: &Scan, code: usize) -> Option<String> {
    let mut next = code;
    for _ in 0..=MAX_SKIPPED {
        let previous = next
            .checked_sub(1)
            .filter(|&previous| scan.joined(previous))?;
        match scan.class(previous) {
            Class::Name => {
                let run = scan.name_run(previous, Direction::Backward)?;
                return Some(scan.phrase(run));
            }
            Class::Stop | Class::Code => next = previous,
            // A name does not come before "your", nor before "from" or "de".
            Class::Possessive | Class::Connective | Class::Other => return None,
        }
    }
    None
}

/// "code from PayPal", "código de verificación de Mercado Libre", "Votre code Doctolib".
fn name_after(scan: &Scan, code: usize) -> Option<String> {
    // Without a connective, only "your code" or a code word opening its clause may have the
    // name after it: elsewhere a capitalised word after "code" is rarely a name ("Use code
    // JULY").
    let after_possessive = code
        .checked_sub(1)
        .is_some_and(|previous| scan.joined(previous) && scan.class(previous) == Class::Possessive);
    let mut connected = after_possessive || scan.starts_clause(code);
    let mut previous = code;
    for _ in 0..=MAX_SKIPPED {
        let next = previous + 1;
        if next >= scan.word_count() || !scan.joined(previous) {
            return None;
        }
        match scan.class(next) {
            Class::Name if connected => {
                let run = scan.name_run(next, Direction::Forward)?;
                return Some(scan.phrase(run));
            }
            Class::Connective => connected = true,
            Class::Stop | Class::Code | Class::Possessive => {}
            Class::Name | Class::Other => return None,
        }
        previous = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::corpus::CORPUS;
    use super::words::{CODE_WORDS, CONNECTIVES, JOINERS, POSSESSIVES, STOP_WORDS};
    use super::*;

    fn service(text: &str) -> Option<String> {
        recognise_service(text)
    }

    #[test]
    fn the_corpus_gives_exactly_the_expected_names() {
        let failures: Vec<String> = CORPUS
            .iter()
            .filter(|(text, expected)| service(text).as_deref() != *expected)
            .map(|(text, expected)| {
                format!(
                    "{text:?}\n  expected {expected:?}\n  got      {:?}",
                    service(text)
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
        let without = CORPUS.iter().filter(|(_, name)| name.is_none()).count();
        assert!(CORPUS.len() - without >= 60, "messages with a name");
        assert!(without >= 15, "messages without a name");
    }

    #[test]
    fn the_examples_of_the_brief() {
        let examples = [
            ("Your Google verification code is 123456", "Google"),
            ("G-123456 is your Google verification code.", "Google"),
            ("[Uber] Your code is 1234", "Uber"),
            ("Your PayPal code is 123456", "PayPal"),
            ("123456 is your code from PayPal", "PayPal"),
            ("<#> 123456 is your Instagram code", "Instagram"),
            ("Microsoft account: security code 1234", "Microsoft"),
            ("WhatsApp code 123-456", "WhatsApp"),
            ("Telegram code: 12345", "Telegram"),
            ("【微信】验证码 123456", "微信"),
            ("Amazon: Your code is 123456", "Amazon"),
            ("Your Airbnb verification code is: 123456", "Airbnb"),
            (
                "Código de verificación de Mercado Libre: 123456",
                "Mercado Libre",
            ),
            ("Votre code Doctolib est 123456", "Doctolib"),
            ("Tu código de Uber es 1234", "Uber"),
            ("Seu código Uber é 1234", "Uber"),
            ("Ihr Uber-Code lautet 1234", "Uber"),
            ("Dein WhatsApp Code: 123-456", "WhatsApp"),
            ("Your verification code for Twitter is 123456", "Twitter"),
        ];
        for (text, name) in examples {
            assert_eq!(service(text).as_deref(), Some(name), "{text}");
        }
    }

    #[test]
    fn generic_words_are_never_names_even_capitalised() {
        for word in [
            "Your",
            "The",
            "Verification",
            "Security",
            "Account",
            "SMS",
            "Code",
        ] {
            assert_eq!(service(&format!("{word}: your {word} code is 1234")), None);
            assert_eq!(service(&format!("[{word}] 1234")), None);
        }
        assert_eq!(service("Your One-time code is 1234"), None);
        let lists = [STOP_WORDS, CODE_WORDS, POSSESSIVES, CONNECTIVES];
        for word in lists.into_iter().flatten() {
            let capitalised = capitalise(word);
            for text in [
                format!("{capitalised}: 1234"),
                format!("[{capitalised}] 1234"),
                format!("1234 is your {capitalised} code"),
                format!("Your code from {capitalised}"),
            ] {
                assert_eq!(service(&text), None, "{text}");
            }
        }
    }

    fn capitalise(word: &str) -> String {
        let mut chars = word.chars();
        chars
            .next()
            .map(|first| first.to_uppercase().chain(chars).collect())
            .unwrap_or_default()
    }

    #[test]
    fn names_keep_their_case_and_lose_surrounding_punctuation() {
        assert_eq!(
            service("AMAZON: your code is 1234").as_deref(),
            Some("AMAZON")
        );
        assert_eq!(service("[ Uber ] 1234").as_deref(), Some("Uber"));
        assert_eq!(
            service("Your Booking.com code.").as_deref(),
            Some("Booking.com")
        );
        assert_eq!(
            service("Your  Wells   Fargo code").as_deref(),
            Some("Wells Fargo"),
            "spaces between the words of a name are one"
        );
    }

    #[test]
    fn a_code_word_far_from_any_name_gives_nothing() {
        assert_eq!(service("Acme\n\nYour code is 1234"), None);
        assert_eq!(service("Acme. Code 1234"), None);
        assert_eq!(service("Use code JULY for 10% off"), None);
        assert_eq!(service("Your code is KXQWPT"), None);
        assert_eq!(
            service("Please enter the following security code in the app: 1234"),
            None
        );
    }

    #[test]
    fn a_long_or_unclosed_bracket_is_no_prefix() {
        assert_eq!(service("[Uber"), None);
        let long = format!("[{}] 1234", "Uber ".repeat(20));
        assert_eq!(service(&long), None);
        assert_eq!(service("(1/2) [#] [Lyft] 1234").as_deref(), Some("Lyft"));
    }

    #[test]
    fn odd_unicode_never_panics() {
        let odd = [
            "",
            " ",
            "<#>",
            "[",
            "】",
            "【】",
            ":",
            "：",
            "-",
            "d'",
            "code",
            "Code-",
            "-Code",
            "Uber-",
            "\u{0}\u{301}\u{200d}\u{202e}\u{fffd}",
            "İstanbul code: 1234",
            "👩‍👩‍👧‍👦 code 👍🏽 Uber",
            "ǅungla code",
            "ﬀ ﬁ ẞ code ǈ",
            "\u{301}Code de \u{301}",
            "[\u{301}] x",
            "Ⅻ code",
            "١٢٣٤ رمز التحقق: ٤٥٦٧",
        ];
        for text in odd {
            let _ = service(text);
        }
    }

    #[test]
    fn a_large_body_is_read_in_one_pass() {
        let paragraph = "Hi, your order 12345678 shipped on 2026-11-22 for $12.99. \
                         Call +1 415 555 0100. 【】[ ( Code code code from the the the \
                         Your Your verification D'Ü ǅ 👩‍👩‍👧‍👦\n";
        let text = paragraph.repeat(1_000_000 / paragraph.len() + 1);
        assert!(text.len() >= 1_000_000);
        assert_eq!(service(&text), None);
        let named = format!("{text}Your Uber code is 1234");
        assert_eq!(service(&named).as_deref(), Some("Uber"));
        let one_word = "A".repeat(1_000_000) + " code";
        assert_eq!(service(&one_word), None);
        let spaces = format!("Uber{}code", " ".repeat(1_000_000));
        assert_eq!(service(&spaces).as_deref(), Some("Uber"));
        let capitals = "Abc ".repeat(250_000) + "code";
        assert_eq!(service(&capitals), None);
        let brackets = "[".repeat(1_000_000);
        assert_eq!(service(&brackets), None);
        let empty_brackets = "[]".repeat(500_000);
        assert_eq!(service(&empty_brackets), None);
    }

    #[test]
    fn joiners_are_lowercase_generic_words() {
        for joiner in JOINERS {
            let class = Scan::new(joiner, Letters::Capitalised).class(0);
            assert!(class.is_generic(), "{joiner} would end names");
        }
    }

    proptest! {
        #[test]
        fn any_text_gives_a_short_trimmed_name_or_none(text in any::<String>()) {
            if let Some(name) = service(&text) {
                prop_assert!(!name.is_empty());
                prop_assert!(name.chars().count() <= 40);
                prop_assert_eq!(name.trim(), name.as_str());
            }
        }

        #[test]
        fn code_like_text_never_panics(
            text in r"(Uber|Code|code|de|your|[A-Z][a-z]{0,5}|[0-9]{1,6}|微信|【|】|\[|\]|[ \-:.'\n]){0,40}"
        ) {
            let _ = service(&text);
        }
    }
}
