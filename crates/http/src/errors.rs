//! The error model of the API: `{"detail": "..."}` for every error, and FastAPI's exact list shape
//! for request validation (422). Causes of server errors are logged, never returned.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use api_types::{FieldError, FieldErrors, FieldPath};
use edge::Refusal;
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

/// The longest text of an input a 422 echoes, in characters; a longer one is cut and ends in `…`.
const ECHOED_TEXT_CHARS: usize = 4096;

/// The most entries of an input's list or object a 422 echoes; the rest are left out.
const ECHOED_ENTRIES: usize = 100;

/// The input as a 422 echoes it: whole when small, its long texts and lists cut, so an error never
/// repeats the megabytes a request sent (an attachment's base64 beside a missing name).
fn echoed(input: Value) -> Value {
    match input {
        Value::String(text) if text.chars().count() > ECHOED_TEXT_CHARS => {
            let mut cut: String = text.chars().take(ECHOED_TEXT_CHARS).collect();
            cut.push('…');
            Value::String(cut)
        }
        Value::Array(items) => items.into_iter().take(ECHOED_ENTRIES).map(echoed).collect(),
        Value::Object(entries) => Value::Object(
            entries
                .into_iter()
                .take(ECHOED_ENTRIES)
                .map(|(key, value)| (key, echoed(value)))
                .collect(),
        ),
        other => other,
    }
}

impl ValidationItem {
    pub fn new(kind: &str, loc: Vec<Value>, msg: impl Into<String>, input: Value) -> Self {
        Self {
            kind: kind.to_owned(),
            loc,
            msg: msg.into(),
            input: echoed(input),
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
            input: echoed(error.input),
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
    /// Refused by a use case, or here for one of the reasons every way in has (a missing key, an
    /// unknown resource): the kind picks the status, the detail is the text every way in shows.
    #[error(transparent)]
    Refused(Refusal),
    /// A credential other than the agent key is missing or wrong, e.g. a webhook's signature (401).
    #[error("{0}")]
    Unauthorized(String),
    #[error("Method Not Allowed")]
    MethodNotAllowed,
    /// FastAPI's 422 list: field errors of the use cases, and the body's own JSON errors made
    /// here.
    #[error("request validation failed")]
    Validation(Vec<ValidationItem>),
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Refused(refusal) => {
                StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            }
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
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
            Self::Refused(Refusal::Invalid(FieldErrors(errors))) => {
                return response.json(ValidationErrorBody {
                    detail: errors.iter().cloned().map(ValidationItem::from).collect(),
                })
            }
            Self::Refused(refusal) if refusal.is_unauthenticated() => {
                response
                    .insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer")));
            }
            Self::Refused(refusal) => {
                if let Some(seconds) = refusal.retry_after_secs() {
                    response.insert_header((header::RETRY_AFTER, seconds));
                }
                refusal.log_cause();
            }
            Self::Unauthorized(_) | Self::MethodNotAllowed => {}
        }
        response.json(ErrorBody {
            detail: self.to_string(),
        })
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        Self::Refused(refusal)
    }
}

/// Lets a handler's `?` take each use case's error through its `Refusal`.
macro_rules! refused_as_api_errors {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for ApiError {
            fn from(error: $error) -> Self {
                Refusal::from(error).into()
            }
        })*
    };
}

refused_as_api_errors!(
    FieldErrors,
    ports::StoreError,
    ports::ChainError,
    app::NotProvisioned,
    app::AuthError,
    app::KeyError,
    app::WalletError,
    app::BalanceError,
    app::SendError,
    app::X402Error,
    app::ListIntentsError,
    app::IntentLookupError,
    app::SendMailError,
    app::ReadMailError,
    app::AttachmentError,
    app::SmsError,
    app::WaitError,
    app::FollowError,
    app::WebhookError,
);

#[cfg(test)]
mod tests {
    use actix_web::body::MessageBody;
    use api_types::{EmailSend, FieldErrors};
    use serde_json::json;

    use super::*;

    #[test]
    fn an_echoed_input_keeps_its_shape_and_loses_its_bulk() {
        let bulky = json!({
            "filename": null,
            "content_base64": "A".repeat(3_000_000),
            "tags": (0..1000).collect::<Vec<_>>(),
        });
        let item = ValidationItem::new("missing", vec![json!("body")], "Field required", bulky);
        let text = item.input["content_base64"].as_str().expect("text");
        assert_eq!(text.chars().count(), ECHOED_TEXT_CHARS + 1);
        assert!(text.ends_with('…'));
        assert_eq!(
            item.input["tags"].as_array().map(Vec::len),
            Some(ECHOED_ENTRIES)
        );
        assert_eq!(item.input["filename"], Value::Null);
        let small = json!({"to": ["a@b.example"], "n": 3});
        let kept = ValidationItem::new("x", vec![], "x", small.clone());
        assert_eq!(kept.input, small, "a small input is echoed whole");
    }

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
