//! Agent keys as the keys contract shows them, and the body that asks for one.

use domain::keys::{AgentKeyRecord, KeyRequest, Scope, Scopes};
use domain::{AgentKey, Label};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::OffsetDateTime;
use utoipa::ToSchema;

use crate::{FieldError, FieldErrors, FieldPath, ScopeName};

/// The longest `expires_in_seconds`: ten years.
pub const MAX_KEY_LIFETIME_SECONDS: i64 = 10 * 366 * 24 * 3600;

#[derive(Debug, Deserialize, ToSchema)]
pub struct KeyCreateRequest {
    /// What the key is for, for the people who read the list: 1 to 200 characters.
    #[serde(default)]
    #[schema(max_length = 200)]
    pub label: Option<String>,
    /// The scopes of the new key, each held by the key that makes it; `agent:read` is always
    /// added.
    #[schema(value_type = Vec<ScopeName>, example = json!(["email:read"]))]
    pub scopes: Vec<Value>,
    /// Seconds until the key expires; omitted: when the key that makes it expires, else never.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 316_224_000)]
    pub expires_in_seconds: Option<Value>,
}

/// A key asked for, read from its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyCreation {
    pub label: Option<Label>,
    pub request: KeyRequest,
}

impl TryFrom<KeyCreateRequest> for KeyCreation {
    type Error = FieldErrors;

    fn try_from(body: KeyCreateRequest) -> Result<Self, FieldErrors> {
        let mut failures = Vec::new();
        let label = match body.label.as_deref().map(Label::parse).transpose() {
            Ok(label) => label,
            Err(error) => {
                failures.push(FieldError::value_error("label", body.label.clone(), error));
                None
            }
        };
        let mut scopes = Vec::new();
        for (index, named) in body.scopes.iter().enumerate() {
            match named.as_str().and_then(Scope::parse) {
                Some(scope) => scopes.push(scope),
                None => failures.push(
                    FieldError::body(
                        vec![FieldPath::from("scopes"), FieldPath::from(index)],
                        "enum",
                        format!("Input should be one of {}", scope_names()),
                        named.clone(),
                    )
                    .with_context(json!({ "expected": scope_names() })),
                ),
            }
        }
        let expires_in = match &body.expires_in_seconds {
            None | Some(Value::Null) => None,
            Some(given) => match given.as_i64() {
                Some(seconds) => {
                    match FieldError::check_range(
                        crate::RequestPart::Body,
                        "expires_in_seconds",
                        seconds.into(),
                        1,
                        MAX_KEY_LIFETIME_SECONDS.into(),
                        given.clone(),
                    ) {
                        Ok(()) => Some(std::time::Duration::from_secs(seconds.unsigned_abs())),
                        Err(error) => {
                            failures.push(error);
                            None
                        }
                    }
                }
                None => {
                    failures.push(FieldError::body(
                        vec![FieldPath::from("expires_in_seconds")],
                        "int_type",
                        "Input should be a valid integer",
                        given.clone(),
                    ));
                    None
                }
            },
        };
        if !failures.is_empty() {
            return Err(FieldErrors(failures));
        }
        Ok(Self {
            label,
            request: KeyRequest {
                scopes: Scopes::of(scopes),
                expires_in,
            },
        })
    }
}

/// Every scope's name, as a 422 lists them.
fn scope_names() -> String {
    Scope::ALL
        .iter()
        .map(|scope| format!("'{scope}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn scope_list(scopes: Scopes) -> Vec<String> {
    scopes
        .iter()
        .map(|scope| scope.as_str().to_owned())
        .collect()
}

/// The key a request is made with, as `/v1/agents/me` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct KeyInUseOut {
    /// `key_` and 26 characters.
    pub id: String,
    pub label: Option<String>,
    #[schema(value_type = Vec<ScopeName>)]
    pub scopes: Vec<String>,
    /// `null`: the key never expires.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
}

impl From<&AgentKeyRecord> for KeyInUseOut {
    fn from(key: &AgentKeyRecord) -> Self {
        Self {
            id: key.id.to_string(),
            label: key.label.as_ref().map(|label| label.as_str().to_owned()),
            scopes: scope_list(key.scopes()),
            expires_at: key.grant.expires_at,
        }
    }
}

/// A live key, without its secret.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct KeyOut {
    /// `key_` and 26 characters.
    pub id: String,
    pub label: Option<String>,
    #[schema(value_type = Vec<ScopeName>)]
    pub scopes: Vec<String>,
    /// `null`: the key never expires.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When the key last authenticated a request, to the minute; `null`: never.
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
    /// The key that made it; `null` for the key made with the agent and the keys an operator
    /// made.
    pub parent_key_id: Option<String>,
}

impl From<&AgentKeyRecord> for KeyOut {
    fn from(key: &AgentKeyRecord) -> Self {
        let shown = KeyInUseOut::from(key);
        Self {
            id: shown.id,
            label: shown.label,
            scopes: shown.scopes,
            expires_at: shown.expires_at,
            created_at: key.created_at,
            last_used_at: key.last_used_at,
            parent_key_id: key.parent.map(|parent| parent.to_string()),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyListOut {
    /// The agent's live keys, oldest first.
    pub items: Vec<KeyOut>,
}

/// A key just made: the key itself is shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyCreatedOut {
    /// The new key (`ark_` and 43 characters): store it now, it is never shown again.
    pub key: String,
    pub id: String,
    pub label: Option<String>,
    #[schema(value_type = Vec<ScopeName>)]
    pub scopes: Vec<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
}

impl KeyCreatedOut {
    pub fn new(key: &AgentKey, record: &AgentKeyRecord) -> Self {
        let shown = KeyInUseOut::from(record);
        Self {
            key: key.expose().to_owned(),
            id: shown.id,
            label: shown.label,
            scopes: shown.scopes,
            expires_at: shown.expires_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: Value) -> Result<KeyCreation, FieldErrors> {
        KeyCreation::try_from(serde_json::from_value::<KeyCreateRequest>(body).expect("shape"))
    }

    #[test]
    fn a_body_names_scopes_and_a_lifetime_in_seconds() {
        let read = read(json!({"label": " mail reader ", "scopes": ["email:read"],
            "expires_in_seconds": 3600}))
        .expect("valid");
        assert_eq!(read.label.expect("label").as_str(), "mail reader");
        assert_eq!(read.request.scopes, Scopes::of([Scope::EmailRead]));
        assert_eq!(
            read.request.expires_in,
            Some(std::time::Duration::from_secs(3600))
        );
    }

    #[test]
    fn unknown_scopes_and_lifetimes_out_of_range_are_each_named() {
        let FieldErrors(errors) =
            read(json!({"scopes": ["email:read", "admin", 3], "expires_in_seconds": 0}))
                .expect_err("invalid");
        let paths: Vec<_> = errors.iter().map(|error| error.path.clone()).collect();
        assert_eq!(
            paths,
            [
                vec![FieldPath::from("scopes"), FieldPath::from(1)],
                vec![FieldPath::from("scopes"), FieldPath::from(2)],
                vec![FieldPath::from("expires_in_seconds")],
            ]
        );
        let FieldErrors(errors) =
            read(json!({"scopes": [], "expires_in_seconds": "soon"})).expect_err("invalid");
        assert_eq!(errors[0].kind, "int_type");
    }
}
