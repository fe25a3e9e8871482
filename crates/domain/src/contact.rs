//! Addresses the agent is reached at: email inbox addresses and phone numbers.

use std::fmt;

use time::OffsetDateTime;

use crate::{EmailInboxId, PhoneNumberId};

/// The longest email address, in characters (RFC 5321's limit on a path).
pub const MAX_ADDRESS_CHARS: usize = 254;

/// An email address of the form `local@domain`, lower-cased domain, at most 254 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EmailAddress(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmailAddressError {
    #[error("email address must be local@domain")]
    Malformed,
    #[error("email address must be at most 254 characters")]
    TooLong,
}

impl EmailAddress {
    pub fn parse(candidate: &str) -> Result<Self, EmailAddressError> {
        if candidate.len() > MAX_ADDRESS_CHARS {
            return Err(EmailAddressError::TooLong);
        }
        let (local, domain) = candidate
            .rsplit_once('@')
            .ok_or(EmailAddressError::Malformed)?;
        let local_ok = !local.is_empty()
            && local.len() <= 64
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c));
        let labels: Vec<&str> = domain.split('.').collect();
        let domain_ok = labels.len() >= 2
            && labels.iter().all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        if !local_ok || !domain_ok {
            return Err(EmailAddressError::Malformed);
        }
        Ok(Self(format!("{local}@{}", domain.to_ascii_lowercase())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part after the `@`, lower-case.
    pub fn domain(&self) -> &str {
        self.0.rsplit_once('@').map_or("", |(_, domain)| domain)
    }
}

impl fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A phone number in E.164 form: `+` and 8 to 15 digits, the first not zero.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PhoneNumber(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("phone number must be in E.164 form: + followed by 8 to 15 digits")]
pub struct PhoneNumberError;

impl PhoneNumber {
    pub fn parse(candidate: &str) -> Result<Self, PhoneNumberError> {
        let digits = candidate.strip_prefix('+').ok_or(PhoneNumberError)?;
        let valid = (8..=15).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.starts_with('0');
        if valid {
            Ok(Self(candidate.to_owned()))
        } else {
            Err(PhoneNumberError)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PhoneNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A phone number assigned to an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneNumberRecord {
    pub id: PhoneNumberId,
    pub number: PhoneNumber,
    pub country_iso2: Option<String>,
    /// The SMS provider the number belongs to.
    pub provider: String,
    pub created_at: OffsetDateTime,
}

/// An agent's email inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailInboxRecord {
    pub id: EmailInboxId,
    pub address: EmailAddress,
    /// The email provider the inbox belongs to.
    pub provider: String,
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_addresses_keep_the_local_part_and_lowercase_the_domain() {
        let address = EmailAddress::parse("Agent.7+x@Inbox.Example.TEST").expect("valid");
        assert_eq!(address.as_str(), "Agent.7+x@inbox.example.test");
    }

    #[test]
    fn malformed_email_addresses_are_refused() {
        for bad in [
            "",
            "plain",
            "@example.com",
            "a@",
            "a@localhost",
            "a@-x.com",
            "a@x..com",
            ".a@x.com",
            "a..b@x.com",
            "a b@x.com",
            "a@x_y.com",
        ] {
            assert_eq!(
                EmailAddress::parse(bad),
                Err(EmailAddressError::Malformed),
                "{bad:?}"
            );
        }
        let long = format!("{}@example.com", "a".repeat(250));
        assert_eq!(EmailAddress::parse(&long), Err(EmailAddressError::TooLong));
    }

    #[test]
    fn phone_numbers_must_be_e164() {
        assert!(PhoneNumber::parse("+15550100123").is_ok());
        assert!(PhoneNumber::parse("+4915112345678").is_ok());
        for bad in [
            "",
            "15550100123",
            "+",
            "+1234567",
            "+0155501001",
            "+1555010012345678",
            "+1-555-0100",
        ] {
            assert_eq!(PhoneNumber::parse(bad), Err(PhoneNumberError), "{bad:?}");
        }
    }
}
