//! Who acts on the operator's side, as an intent records it when it is decided on.

use std::fmt;

use crate::ApprovalCount;

/// The longest operator name kept, in characters.
pub const MAX_OPERATOR_NAME_CHARS: usize = 64;

/// A name an operator goes by (an OS user now, a console account later): 1 to 64 characters,
/// none of them whitespace or a control character, so its stored form reads back unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperatorNameError {
    #[error("operator name must not be empty")]
    Empty,
    #[error("operator name must have at most {MAX_OPERATOR_NAME_CHARS} characters")]
    TooLong,
    #[error("operator name must hold no whitespace or control character")]
    InvalidCharacter,
}

impl OperatorName {
    pub fn parse(name: &str) -> Result<Self, OperatorNameError> {
        if name.is_empty() {
            return Err(OperatorNameError::Empty);
        }
        if name.chars().count() > MAX_OPERATOR_NAME_CHARS {
            return Err(OperatorNameError::TooLong);
        }
        if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(OperatorNameError::InvalidCharacter);
        }
        Ok(Self(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for OperatorName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The operator's principal: who takes a decision on an intent (approve, reject, resolve).
/// Stored as text in `decided_by` and in an intent's approvals (its `Display`): `cli` for
/// `agentctl` run by a user it could not name, `cli:<user>` for one run by a named OS user (both
/// the control plane), `operator:<name>` for an operator who names themselves (`agentctl
/// --operator`, the console's accounts): the one kind whose approvals make a quorum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operator {
    Cli { user: Option<OperatorName> },
    Named(OperatorName),
}

const CLI: &str = "cli";
const NAMED: &str = "operator";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoredOperatorError {
    #[error("{0:?} names no kind of operator")]
    UnknownKind(String),
    #[error(transparent)]
    Name(#[from] OperatorNameError),
}

impl Operator {
    /// Whether this operator may approve a transfer that needs `required` distinct approvals:
    /// any operator where one does, only one who names themselves where a quorum is asked for
    /// (one unnamed control plane is one approver, never several).
    pub fn may_approve(&self, required: ApprovalCount) -> bool {
        required == ApprovalCount::ONE || matches!(self, Self::Named(_))
    }

    /// Reads the stored form back, as `Display` writes it.
    pub fn parse_stored(stored: &str) -> Result<Self, StoredOperatorError> {
        let (kind, name) = match stored.split_once(':') {
            Some((kind, name)) => (kind, Some(name)),
            None => (stored, None),
        };
        match kind {
            CLI => Ok(Self::Cli {
                user: name.map(OperatorName::parse).transpose()?,
            }),
            NAMED => Ok(Self::Named(OperatorName::parse(name.unwrap_or_default())?)),
            _ => Err(StoredOperatorError::UnknownKind(stored.to_owned())),
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cli { user: None } => f.write_str(CLI),
            Self::Cli { user: Some(user) } => write!(f, "{CLI}:{}", user.as_str()),
            Self::Named(name) => write!(f, "{NAMED}:{}", name.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(user: Option<&str>) -> Operator {
        Operator::Cli {
            user: user.map(|name| OperatorName::parse(name).expect("valid")),
        }
    }

    #[test]
    fn the_stored_form_names_the_kind_and_the_user_when_known() {
        assert_eq!(cli(None).to_string(), "cli");
        assert_eq!(cli(Some("alice")).to_string(), "cli:alice");
    }

    #[test]
    fn the_stored_form_reads_back_as_it_was_written() {
        let named = Operator::Named(OperatorName::parse("bob").expect("valid"));
        assert_eq!(named.to_string(), "operator:bob");
        for operator in [
            cli(None),
            cli(Some("alice")),
            cli(Some("ops:night-shift")),
            named,
        ] {
            assert_eq!(
                Operator::parse_stored(&operator.to_string()),
                Ok(operator.clone())
            );
        }
    }

    #[test]
    fn a_stored_form_of_no_known_kind_is_refused() {
        assert!(matches!(
            Operator::parse_stored("console:7"),
            Err(StoredOperatorError::UnknownKind(_))
        ));
        assert!(Operator::parse_stored("").is_err());
        assert!(Operator::parse_stored("cli:").is_err());
        assert!(Operator::parse_stored("operator").is_err());
    }

    #[test]
    fn names_with_space_control_characters_or_too_long_are_refused() {
        assert_eq!(OperatorName::parse(""), Err(OperatorNameError::Empty));
        assert_eq!(
            OperatorName::parse("a b"),
            Err(OperatorNameError::InvalidCharacter)
        );
        assert_eq!(
            OperatorName::parse("a\u{7}"),
            Err(OperatorNameError::InvalidCharacter)
        );
        assert_eq!(
            OperatorName::parse(&"a".repeat(MAX_OPERATOR_NAME_CHARS + 1)),
            Err(OperatorNameError::TooLong)
        );
        assert!(OperatorName::parse(&"é".repeat(MAX_OPERATOR_NAME_CHARS)).is_ok());
    }
}
