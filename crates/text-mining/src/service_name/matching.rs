//! Whether a message is from the service a wait-for-code request names.

/// Whether a message matches the `service_name` of a wait-for-code request, `wanted`.
///
/// An empty (or blank) `wanted` matches every message. Otherwise the message matches when
/// `wanted` equals the name recognised in it (`recognised`, from [`super::recognise_service`])
/// regardless of case, spaces and punctuation ("mercadolibre" is "Mercado Libre"), or when
/// `wanted` is written in `text` as whole words regardless of case ("uber" is in "[Uber]" and
/// "Uber-Code", not in "Uberlândia"). In Chinese, Japanese, Korean and Thai, which show no word
/// boundaries, any occurrence counts ("微信" is in "您的微信验证码").
pub fn matches_service(text: &str, recognised: Option<&str>, wanted: &str) -> bool {
    let key = compact(wanted);
    key.is_empty() || recognised.is_some_and(|name| compact(name) == key) || mentions(text, wanted)
}

/// What is known of who sent a message, to hold a wanted service name against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender<'a> {
    /// Mail whose receiving side reported DKIM or DMARC results: the domain they authenticated
    /// for its From address, if any did.
    MailAuthenticated(Option<&'a str>),
    /// Mail that came with no authentication results: anyone may have written its From.
    MailUnauthenticated,
    /// An SMS from an alphanumeric sender id (`GOOGLE`, `VM-HDFCBK`), which names its sender.
    SmsSenderId(&'a str),
    /// An SMS from a phone number or a short code, which names no service.
    SmsNumber,
}

impl<'a> Sender<'a> {
    /// An SMS sender as the provider gives it.
    pub fn of_sms(from: &'a str) -> Self {
        match from.chars().any(char::is_alphabetic) {
            true => Self::SmsSenderId(from),
            false => Self::SmsNumber,
        }
    }
}

/// Whether a message from `sender` may be the one a wait for `wanted` waits for. Where the
/// sender is known (a domain the receiving side authenticated, an SMS sender id) it must be the
/// service's: a mail from `evil.example` saying "Your Google code" is not Google's. Where it is
/// not known, the name in the text is all there is, and the wait answers with the sender and
/// whether it was authenticated so the agent can judge.
pub fn sender_may_be(wanted: &str, sender: Sender<'_>) -> bool {
    let names = service_names(wanted);
    if names.is_empty() {
        return true;
    }
    match sender {
        Sender::MailAuthenticated(None) => false,
        Sender::MailAuthenticated(Some(domain)) => {
            let labels: Vec<String> = domain.split('.').map(compact).collect();
            // The last label is the top-level domain, which names no one.
            let named = labels.split_last().map_or(&[][..], |(_, rest)| rest);
            named.iter().any(|label| names.contains(label))
        }
        Sender::SmsSenderId(id) => {
            let id = compact(id);
            names
                .iter()
                .any(|name| id.contains(name.as_str()) || (id.len() >= 3 && name.contains(&id)))
        }
        Sender::MailUnauthenticated | Sender::SmsNumber => true,
    }
}

/// The forms a wanted service name takes in a domain or a sender id: written together
/// ("American Express" → `americanexpress`) and its first word (`american`).
fn service_names(wanted: &str) -> Vec<String> {
    let whole = compact(wanted);
    if whole.is_empty() {
        return Vec::new();
    }
    let first = wanted
        .split(|c: char| !c.is_alphanumeric())
        .find(|word| !word.is_empty())
        .map(compact)
        .unwrap_or_default();
    let mut names = vec![whole];
    if !first.is_empty() && !names.contains(&first) {
        names.push(first);
    }
    names
}

/// `name` lowercase, without spaces or punctuation.
fn compact(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn mentions(text: &str, wanted: &str) -> bool {
    let haystack = spaced_words(text);
    let needle = spaced_words(wanted);
    // `str::contains` runs in linear time (two-way search), however long the needle.
    if wanted.chars().any(is_unspaced_letter) {
        haystack.contains(needle.trim())
    } else {
        // The spaces around the needle make it match whole words only.
        haystack.contains(&needle)
    }
}

/// The words of `text` in lowercase, each followed by one space, the first preceded by one:
/// `" mercado libre "`.
fn spaced_words(text: &str) -> String {
    let mut spaced = String::with_capacity(text.len() + 1);
    spaced.push(' ');
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
    {
        spaced.extend(word.chars().flat_map(char::to_lowercase));
        spaced.push(' ');
    }
    spaced
}

/// Letters of the scripts that do not separate words with spaces (Chinese, Japanese, Thai), or
/// glue particles to them (Korean).
fn is_unspaced_letter(c: char) -> bool {
    matches!(c,
        '\u{0E00}'..='\u{0E7F}'      // Thai
        | '\u{1100}'..='\u{11FF}'    // Hangul Jamo
        | '\u{3040}'..='\u{30FF}'    // Hiragana, Katakana
        | '\u{3130}'..='\u{318F}'    // Hangul compatibility Jamo
        | '\u{3400}'..='\u{4DBF}'    // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'    // CJK unified ideographs
        | '\u{AC00}'..='\u{D7AF}'    // Hangul syllables
        | '\u{F900}'..='\u{FAFF}'    // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}'    // Halfwidth Katakana
        | '\u{20000}'..='\u{2FFFF}') // CJK extensions B and later
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authenticated_domain_must_belong_to_the_wanted_service() {
        for (domain, wanted) in [
            ("accounts.google.com", "Google"),
            ("google.com", "google"),
            ("paypal.com", "PayPal"),
            ("americanexpress.com", "American Express"),
            ("american-express.com", "American Express"),
            ("amazon.co.uk", "Amazon"),
            ("voice.google.com", "Google Voice"),
        ] {
            assert!(
                sender_may_be(wanted, Sender::MailAuthenticated(Some(domain))),
                "{domain} is {wanted}'s"
            );
        }
        for (domain, wanted) in [
            ("evil.example", "Google"),
            ("google.evil.example", "PayPal"),
            ("com", "com"),
        ] {
            assert!(
                !sender_may_be(wanted, Sender::MailAuthenticated(Some(domain))),
                "{domain} is not {wanted}'s"
            );
        }
        assert!(!sender_may_be("Google", Sender::MailAuthenticated(None)));
        assert!(sender_may_be("", Sender::MailAuthenticated(None)));
        assert!(sender_may_be("Google", Sender::MailUnauthenticated));
    }

    #[test]
    fn an_sms_sender_id_must_name_the_wanted_service_and_a_number_names_none() {
        assert_eq!(Sender::of_sms("+15550001111"), Sender::SmsNumber);
        assert_eq!(Sender::of_sms("22000"), Sender::SmsNumber);
        for (sender, wanted) in [
            ("GOOGLE", "Google"),
            ("VM-HDFCBK", "HDFC Bank"),
            ("Uber", "uber"),
        ] {
            assert!(
                sender_may_be(wanted, Sender::of_sms(sender)),
                "{sender} is {wanted}"
            );
        }
        assert!(!sender_may_be("Google", Sender::of_sms("EVILCO")));
        assert!(sender_may_be("Google", Sender::of_sms("+15550001111")));
    }

    #[test]
    fn an_empty_or_blank_wanted_name_matches_everything() {
        assert!(matches_service("Your code is 1234", None, ""));
        assert!(matches_service("", None, ""));
        assert!(matches_service("Your code is 1234", Some("Uber"), "  "));
        assert!(matches_service("Your code is 1234", None, " - "));
    }

    #[test]
    fn the_recognised_name_matches_regardless_of_case_spaces_and_punctuation() {
        let text = "Código de verificación de Mercado Libre: 123456";
        for wanted in [
            "Mercado Libre",
            "mercadolibre",
            "MERCADO-LIBRE",
            " mercado  libre ",
        ] {
            assert!(
                matches_service(text, Some("Mercado Libre"), wanted),
                "{wanted}"
            );
        }
        assert!(matches_service("x", Some("Booking.com"), "booking com"));
        assert!(matches_service("x", Some("PayPal"), "paypal"));
        assert!(matches_service("x", Some("微信"), "微信"));
        assert!(!matches_service("x", Some("PayPal"), "Pay"));
        assert!(!matches_service("x", Some("Google Voice"), "Google"));
    }

    #[test]
    fn a_wanted_name_written_in_the_text_as_whole_words_matches() {
        let text = "Don't share this code. Uber will never call you.";
        assert!(matches_service(text, None, "uber"));
        assert!(matches_service(text, Some("Lyft"), "UBER"));
        assert!(matches_service("Ihr Uber-Code lautet 4829", None, "Uber"));
        assert!(matches_service(
            "Your Google Voice code",
            Some("Google Voice"),
            "google"
        ));
        assert!(matches_service(
            "from Mercado   Libre.",
            None,
            "mercado libre"
        ));
        assert!(matches_service(
            "Your Booking.com code",
            None,
            "Booking.com"
        ));
    }

    #[test]
    fn a_wanted_name_inside_another_word_does_not_match() {
        let text = "Prefeitura de Uberlândia: seu código é 4821";
        assert!(!matches_service(
            text,
            Some("Prefeitura de Uberlândia"),
            "Uber"
        ));
        assert!(!matches_service("Your Superbank code: 4821", None, "bank"));
        assert!(!matches_service("Your Lyft code", Some("Lyft"), "Uber"));
        assert!(!matches_service("Mercado Libre", None, "mercadolibre"));
        assert!(!matches_service("Your code is 1234", None, "code is 12"));
    }

    #[test]
    fn names_in_scripts_without_spaces_match_anywhere() {
        assert!(matches_service("您的微信验证码是482913", None, "微信"));
        assert!(matches_service(
            "[카카오톡] 인증번호 482913",
            None,
            "카카오"
        ));
        assert!(!matches_service("您的支付宝验证码是482913", None, "微信"));
        assert!(!matches_service(
            "【微信】验证码 123456",
            Some("微信"),
            "WeChat"
        ));
    }

    #[test]
    fn odd_and_large_inputs_are_read_in_one_pass() {
        let odd = "\u{0}\u{301}İ\u{200d}👩‍👩‍👧‍👦\u{202e}ß\u{fffd}";
        assert!(!matches_service(odd, Some(odd), "uber"));
        assert!(matches_service(odd, Some(odd), odd));
        let text = "a ".repeat(500_000) + "Uber";
        let wanted = "a ".repeat(10_000) + "b";
        assert!(!matches_service(&text, None, &wanted));
        assert!(matches_service(&text, None, "A uber"));
    }
}
