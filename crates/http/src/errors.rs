//! The error model of the API: `{"detail": "..."}` for every error, and FastAPI's exact list shape
//! for request validation (422). Causes of server errors are logged, never returned.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use api_types::{FieldError, FieldErrors, FieldPath};
use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::schema::{Array, ArrayBuilder, Object, OneOfBuilder, Type};

/// One entry of a 422 `detail` list, as FastAPI (pydantic v2) writes it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ValidationItem {
    /// What kind of rule failed, e.g. `missing`, `value_error`, `greater_than_equal`.
    #[serde(rename = "type")]
    pub kind: String,
    #[schema(schema_with = location_schema)]
    pub loc: Vec<Value>,
    /// What is wrong, for a person.
    pub msg: String,
    /// The value as it was received: any JSON value, `null` for a missing body.
    pub input: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    // Boxed: most items have none, and a small item keeps `Result<_, ValidationItem>` small.
    /// What the failed rule expected, e.g. `{"ge": 1}`.
    #[schema(value_type = Option<Object>)]
    pub ctx: Option<Box<Value>>,
}

/// The schema of `loc`: names are strings, list indexes and offsets in a body integers.
fn location_schema() -> Array {
    ArrayBuilder::new()
        .description(Some(
            "Where: `body`, `query`, `path` or `header`, then field names and list indexes.",
        ))
        .items(
            OneOfBuilder::new()
                .item(Object::with_type(Type::String))
                .item(Object::with_type(Type::Integer)),
        )
        .build()
}

impl ValidationItem {
    pub fn new(kind: &str, loc: Vec<Value>, msg: impl Into<String>, input: Value) -> Self {
        Self {
            kind: kind.to_owned(),
            loc,
            msg: msg.into(),
            input,
            ctx: None,
        }
    }

    pub fn with_ctx(mut self, ctx: Value) -> Self {
        self.ctx = Some(Box::new(ctx));
        self
    }
}

/// A field error as FastAPI writes it: its location starts with the part of the request.
impl From<FieldError> for ValidationItem {
    fn from(error: FieldError) -> Self {
        let loc = std::iter::once(Value::from(error.part.as_str()))
            .chain(error.path.into_iter().map(|step| match step {
                FieldPath::Name(name) => Value::String(name),
                FieldPath::Index(index) => Value::from(index),
            }))
            .collect();
        Self {
            kind: error.kind.to_owned(),
            loc,
            msg: error.message,
            input: error.input,
            ctx: error.context,
        }
    }
}

/// `{"detail": "..."}`, the body of every non-validation error.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub detail: String,
}

/// `{"detail": [...]}`, the body of a 422.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ValidationErrorBody {
    pub detail: Vec<ValidationItem>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("Invalid agent key")]
    InvalidKey,
    /// A credential other than the agent key is missing or wrong, e.g. a webhook's signature (401).
    #[error("{0}")]
    Unauthorized(String),
    /// A business rule refused the request (400).
    #[error("{0}")]
    BadRequest(String),
    /// The key is valid but the action is not permitted, e.g. by the spend policy (403).
    #[error("{0}")]
    Forbidden(String),
    #[error("Not Found")]
    NotFound,
    /// The request conflicts with stored state, e.g. a reused idempotency key (409).
    #[error("{0}")]
    Conflict(String),
    #[error("Method Not Allowed")]
    MethodNotAllowed,
    /// A wait ended without what it waited for (408).
    #[error("{0}")]
    RequestTimeout(String),
    /// Too many requests: the client may retry after `retry_after` (429 with `Retry-After`).
    #[error("{detail}")]
    TooManyRequests {
        detail: String,
        retry_after: std::time::Duration,
    },
    #[error("request validation failed")]
    Validation(Vec<ValidationItem>),
    /// A dependency (the database, a provider) could not be reached; the cause is only logged.
    #[error("{detail}")]
    Unavailable { detail: &'static str, cause: String },
    /// A bug or an unexpected state; the cause is only logged.
    #[error("Internal Server Error")]
    Internal(String),
}

impl ApiError {
    /// A write whose idempotency key another request of the same key still holds.
    pub(crate) fn key_in_flight() -> Self {
        Self::Conflict(
            "Idempotency key conflict: a request with this key is still in progress; retry once \
             it has finished"
                .into(),
        )
    }

    /// A write whose idempotency key an earlier, different request took; `mismatch` names it.
    pub(crate) fn key_mismatch(mismatch: impl std::fmt::Display) -> Self {
        Self::Conflict(format!("Idempotency key conflict: {mismatch}"))
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::InvalidKey | Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        match self {
            Self::Validation(items) => {
                return response.json(ValidationErrorBody {
                    detail: items.clone(),
                })
            }
            Self::InvalidKey => {
                response
                    .insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer")));
            }
            Self::TooManyRequests { retry_after, .. } => {
                // Whole seconds, rounded up: a client waiting that long is never early.
                let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
                response.insert_header((header::RETRY_AFTER, seconds.max(1)));
            }
            Self::Unavailable { cause, .. } => {
                tracing::warn!(%cause, "dependency unavailable");
            }
            Self::Internal(cause) => {
                tracing::error!(%cause, "internal error");
            }
            Self::BadRequest(_)
            | Self::Unauthorized(_)
            | Self::Forbidden(_)
            | Self::NotFound
            | Self::Conflict(_)
            | Self::MethodNotAllowed
            | Self::RequestTimeout(_) => {}
        }
        response.json(ErrorBody {
            detail: self.to_string(),
        })
    }
}

impl From<FieldErrors> for ApiError {
    fn from(FieldErrors(errors): FieldErrors) -> Self {
        Self::Validation(errors.into_iter().map(ValidationItem::from).collect())
    }
}

impl From<ports::StoreError> for ApiError {
    fn from(error: ports::StoreError) -> Self {
        match error {
            ports::StoreError::Unavailable(cause) => Self::Unavailable {
                detail: "Database unavailable",
                cause,
            },
            ports::StoreError::Busy(_) => Self::TooManyRequests {
                detail: "Too many concurrent requests for this resource; retry shortly".into(),
                retry_after: std::time::Duration::from_secs(1),
            },
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<ports::ChainError> for ApiError {
    fn from(error: ports::ChainError) -> Self {
        let (ports::ChainError::Unavailable(cause) | ports::ChainError::Unexpected(cause)) = error;
        Self::Unavailable {
            detail: "Chain unavailable",
            cause,
        }
    }
}

impl From<app::NotProvisioned> for ApiError {
    fn from(missing: app::NotProvisioned) -> Self {
        let resource = match missing {
            app::NotProvisioned::Wallet => "wallet",
            app::NotProvisioned::EmailInbox => "email inbox",
            app::NotProvisioned::PhoneNumber => "phone number",
        };
        Self::BadRequest(format!("No {resource} provisioned for this agent"))
    }
}

#[cfg(test)]
mod tests {
    use actix_web::body::MessageBody;
    use api_types::{EmailSend, FieldErrors};
    use serde_json::json;

    use super::*;

    fn rendered(error: ApiError) -> (StatusCode, String) {
        let response = error.error_response();
        let status = response.status();
        let bytes = response
            .into_body()
            .try_into_bytes()
            .unwrap_or_else(|_| panic!("a body in one piece"));
        (status, String::from_utf8(bytes.to_vec()).expect("UTF-8"))
    }

    fn send_refused(body: serde_json::Value, key: Option<&[u8]>) -> FieldErrors {
        app::SendMail::try_from(EmailSend {
            body: serde_json::from_value(body).expect("a send body"),
            idempotency_key: key,
        })
        .expect_err("refused")
    }

    // The bytes a 422 of the mail send had before its rules left the handler.
    #[test]
    fn field_errors_render_as_the_same_422_bytes_as_before() {
        let errors = send_refused(
            json!({"to": [], "cc": ["nobody"], "subject": "a\nb", "body_text": "x"}),
            None,
        );
        assert_eq!(
            rendered(errors.into()),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                concat!(
                    r#"{"detail":["#,
                    r#"{"type":"too_short","loc":["body","to"],"msg":"List should have at least 1 item after validation, not 0","input":[],"ctx":{"actual_length":0,"field_type":"List","min_length":1}},"#,
                    r#"{"type":"value_error","loc":["body","cc",0],"msg":"value is not a valid email address: email address must be local@domain","input":"nobody"},"#,
                    r#"{"type":"value_error","loc":["body","subject"],"msg":"Value error, the subject is a header: it must not contain CR or LF","input":"a\nb"}"#,
                    r#"]}"#
                )
                .to_owned()
            )
        );
    }

    #[test]
    fn a_header_error_is_located_in_the_header() {
        let errors = send_refused(
            json!({"to": ["a@b.co"], "subject": "s", "body_text": "x"}),
            Some(b"\x01"),
        );
        assert_eq!(
            rendered(errors.into()).1,
            r#"{"detail":[{"type":"value_error","loc":["header","idempotency-key"],"msg":"Value error, the idempotency key must be visible ASCII","input":null}]}"#
        );
    }
}
