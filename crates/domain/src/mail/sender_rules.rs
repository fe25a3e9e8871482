//! Sender rules (mail-plus.md): which inbound mail an agent's inbox takes. Entries are addresses
//! or `@domain`, compared without regard to case; with an allow list, mail from anyone else is
//! kept out, and a blocked sender's mail is kept out whatever the allow list says. A mail names
//! its sender twice, in its envelope and in `From`, and a sender may write either as it likes:
//! rules are held against both, each normalised (`"a"@x.example.` is `a@x.example`).

use std::fmt;

use crate::EmailAddress;

/// Entries of each list at most.
pub const MAX_SENDER_RULES: usize = 1_000;

/// One entry of a list: a whole address, or every address of one domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SenderPattern {
    /// An address, lowercased.
    Address(String),
    /// `@domain`: every address at exactly this domain (not its subdomains), lowercased.
    Domain(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be an email address or @domain")]
pub struct InvalidSenderPattern;

impl SenderPattern {
    pub fn parse(entry: &str) -> Result<Self, InvalidSenderPattern> {
        match entry.strip_prefix('@') {
            // A domain is valid where an address at it is; a fully qualified name's trailing dot
            // names the same domain.
            Some(domain) => {
                let domain = domain.strip_suffix('.').unwrap_or(domain);
                EmailAddress::parse(&format!("postmaster@{domain}"))
                    .map(|_| Self::Domain(domain.to_ascii_lowercase()))
                    .map_err(|_| InvalidSenderPattern)
            }
            None => EmailAddress::parse(entry)
                .map(|address| Self::Address(address.as_str().to_ascii_lowercase()))
                .map_err(|_| InvalidSenderPattern),
        }
    }

    /// Whether `sender`, normalised, is this pattern's.
    fn matches(&self, sender: &str) -> bool {
        match self {
            Self::Address(address) => sender.eq_ignore_ascii_case(address),
            Self::Domain(domain) => sender
                .rsplit_once('@')
                .is_some_and(|(_, at)| at.eq_ignore_ascii_case(domain)),
        }
    }
}

impl fmt::Display for SenderPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Address(address) => f.write_str(address),
            Self::Domain(domain) => write!(f, "@{domain}"),
        }
    }
}

/// An agent's allow and block lists, each without duplicates, in the order first given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderRules {
    allow: Vec<SenderPattern>,
    block: Vec<SenderPattern>,
}

/// Why a list was refused: the list, and the entry's index when one entry is at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SenderRulesError {
    #[error("{list}[{index}] must be an email address or @domain")]
    Entry { list: &'static str, index: usize },
    #[error("{list} must hold at most {MAX_SENDER_RULES} entries")]
    TooMany { list: &'static str },
}

impl SenderRules {
    /// The lists as given: every entry valid, at most `MAX_SENDER_RULES` each; duplicates (in any
    /// case) are kept once.
    pub fn new(allow: &[String], block: &[String]) -> Result<Self, Vec<SenderRulesError>> {
        let mut errors = Vec::new();
        let allow = parsed_list("allow", allow, &mut errors);
        let block = parsed_list("block", block, &mut errors);
        match errors.is_empty() {
            true => Ok(Self { allow, block }),
            false => Err(errors),
        }
    }

    pub fn allow(&self) -> &[SenderPattern] {
        &self.allow
    }

    pub fn block(&self) -> &[SenderPattern] {
        &self.block
    }

    /// Both lists as written back (`SenderRules::new` reads them again): the allow list, then
    /// the block list.
    pub fn texts(&self) -> (Vec<String>, Vec<String>) {
        let texts = |list: &[SenderPattern]| list.iter().map(ToString::to_string).collect();
        (texts(&self.allow), texts(&self.block))
    }

    /// Whether mail from `envelope` (the envelope sender the provider reports, if it does)
    /// with `from` (its `From`) comes into the inbox: neither blocked, and, when there is an
    /// allow list, the envelope sender allowed where there is one, else `From` (mail-plus.md).
    /// A block holds against both, so a blocked sender cannot pass under another envelope. Mail
    /// naming no sender comes in only without an allow list.
    pub fn admits(&self, envelope: Option<&str>, from: Option<&str>) -> bool {
        let envelope = envelope.and_then(normalised_sender);
        let from = from.and_then(normalised_sender);
        let on = |list: &[SenderPattern], sender: &String| {
            list.iter().any(|pattern| pattern.matches(sender))
        };
        let blocked = [&envelope, &from]
            .into_iter()
            .flatten()
            .any(|sender| on(&self.block, sender));
        let allowed = self.allow.is_empty()
            || envelope
                .as_ref()
                .or(from.as_ref())
                .is_some_and(|sender| on(&self.allow, sender));
        !blocked && allowed
    }
}

/// A sender's address as rules compare it: trimmed, without the angle brackets of a path, its
/// local part unquoted (`"a.b"` and `a.b` are one mailbox), its domain without the trailing dot
/// of a fully qualified name, lowercased. `None` when nothing is left.
fn normalised_sender(sender: &str) -> Option<String> {
    let sender = sender.trim();
    let sender = sender
        .strip_prefix('<')
        .and_then(|inner| inner.strip_suffix('>'))
        .unwrap_or(sender)
        .trim();
    if sender.is_empty() {
        return None;
    }
    let Some((local, domain)) = sender.rsplit_once('@') else {
        return Some(sender.to_lowercase());
    };
    let local = match local
        .strip_prefix('"')
        .and_then(|quoted| quoted.strip_suffix('"'))
    {
        Some(quoted) => unescaped(quoted),
        None => local.to_owned(),
    };
    let domain = domain.trim_end_matches('.');
    Some(format!("{local}@{domain}").to_lowercase())
}

/// A quoted string's text: each backslash stands for the character after it.
fn unescaped(quoted: &str) -> String {
    let mut text = String::with_capacity(quoted.len());
    let mut characters = quoted.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => text.extend(characters.next()),
            other => text.push(other),
        }
    }
    text
}

fn parsed_list(
    list: &'static str,
    entries: &[String],
    errors: &mut Vec<SenderRulesError>,
) -> Vec<SenderPattern> {
    if entries.len() > MAX_SENDER_RULES {
        errors.push(SenderRulesError::TooMany { list });
        return Vec::new();
    }
    let mut kept: Vec<SenderPattern> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match SenderPattern::parse(entry) {
            Ok(pattern) if kept.contains(&pattern) => {}
            Ok(pattern) => kept.push(pattern),
            Err(_) => errors.push(SenderRulesError::Entry { list, index }),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rules(allow: &[&str], block: &[&str]) -> SenderRules {
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        SenderRules::new(&owned(allow), &owned(block)).expect("valid")
    }

    #[test]
    fn no_rules_admit_everyone_even_mail_without_a_sender() {
        let none = SenderRules::default();
        assert!(none.admits(None, Some("anyone@example.org")));
        assert!(none.admits(None, None));
    }

    #[test]
    fn an_allow_list_keeps_out_everyone_else_and_mail_without_a_sender() {
        let only = rules(&["Boss@Corp.example", "@partner.example"], &[]);
        assert!(only.admits(None, Some("boss@corp.example")));
        assert!(only.admits(None, Some("anyone@PARTNER.example")));
        assert!(!only.admits(None, Some("someone@corp.example")));
        assert!(
            !only.admits(None, Some("x@sub.partner.example")),
            "exact domains only"
        );
        assert!(!only.admits(None, None));
        assert!(!only.admits(None, Some("  ")));
    }

    #[test]
    fn a_block_wins_over_an_allow() {
        let both = rules(&["@corp.example"], &["spam@corp.example"]);
        assert!(both.admits(None, Some("boss@corp.example")));
        assert!(!both.admits(None, Some("SPAM@corp.example")));
        let blocked = rules(&[], &["@spam.example"]);
        assert!(!blocked.admits(None, Some("a@spam.example")));
        assert!(blocked.admits(None, Some("a@ham.example")));
        assert!(blocked.admits(None, None));
    }

    #[test]
    fn entries_are_addresses_or_at_domains_kept_once_in_lower_case() {
        let kept = rules(&["A@X.example", "a@x.example", "@Y.example"], &[]);
        let shown: Vec<String> = kept.allow().iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["a@x.example", "@y.example"]);
        let (allow, block) = kept.texts();
        assert_eq!(
            SenderRules::new(&allow, &block),
            Ok(kept.clone()),
            "read back whole"
        );
        let refused = SenderRules::new(
            &["ok@x.example".into(), "nope".into()],
            &["@".into(), "@x".into(), "@-x.example".into()],
        )
        .expect_err("invalid");
        assert_eq!(
            refused,
            [
                SenderRulesError::Entry {
                    list: "allow",
                    index: 1
                },
                SenderRulesError::Entry {
                    list: "block",
                    index: 0
                },
                SenderRulesError::Entry {
                    list: "block",
                    index: 1
                },
                SenderRulesError::Entry {
                    list: "block",
                    index: 2
                },
            ]
        );
        let too_many: Vec<String> = (0..=MAX_SENDER_RULES)
            .map(|n| format!("a{n}@x.example"))
            .collect();
        assert_eq!(
            SenderRules::new(&[], &too_many).expect_err("too many"),
            [SenderRulesError::TooMany { list: "block" }]
        );
    }

    #[test]
    fn a_blocked_sender_is_kept_out_by_its_envelope_or_its_from_however_written() {
        let blocked = rules(&[], &["evil@bad.example", "@spam.example"]);
        for (envelope, from) in [
            (Some("nice@good.example"), Some("evil@bad.example")),
            (Some("evil@bad.example"), Some("nice@good.example")),
            (None, Some("evil@bad.example.")),
            (None, Some("\"evil\"@bad.example")),
            (Some("\"e\\vil\"@BAD.example."), None),
            (Some("<evil@bad.example>"), None),
            (None, Some("a@spam.example.")),
        ] {
            assert!(!blocked.admits(envelope, from), "{envelope:?} {from:?}");
        }
        assert!(blocked.admits(Some("bounce@mailer.example"), Some("nice@good.example")));
        assert!(blocked.admits(None, Some("\"evil@bad.example\"@good.example")));
    }

    #[test]
    fn an_allow_list_holds_against_the_envelope_sender_where_there_is_one() {
        let only = rules(&["boss@corp.example", "@partner.example."], &[]);
        assert!(only.admits(
            Some("\"boss\"@corp.example."),
            Some("ceo@elsewhere.example")
        ));
        assert!(only.admits(None, Some("x@partner.example")));
        assert!(!only.admits(Some("bounces-17@mailer.example"), Some("boss@corp.example")));
    }

    proptest! {
        #[test]
        fn a_blocked_sender_is_never_admitted(local in "[a-z]{1,8}", domain in "[a-z]{1,8}") {
            let sender = format!("{local}@{domain}.example");
            let by_address = rules(&[&sender], &[&sender]);
            let domain_entry = format!("@{domain}.example");
            let by_domain = rules(&[&sender], &[&domain_entry]);
            prop_assert!(!by_address.admits(None, Some(&sender)));
            prop_assert!(!by_domain.admits(Some(&sender.to_uppercase()), None));
        }
    }
}
