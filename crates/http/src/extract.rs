//! Request extractors whose failures are FastAPI-shaped 422s with the exact location of the
//! offending field.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use app::LongLived;
use edge::{read_body, BodyLimits, BodyRefused, BodyShare};
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Value};

use api_types::{FieldError, PageLimit, RequestPart};
use domain::{json_items_within, MAX_JSON_ITEMS};
use edge::Refusal;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ValidationItem};
use crate::state::ApiState;

/// Largest JSON body accepted; larger bodies are refused before they are read in full.
pub const MAX_JSON_BODY_BYTES: usize = 512 * 1024;

/// How long a client has to send a JSON body once its request's head arrived: a body that
/// trickles in holds its memory and a worker's attention no longer than this.
pub const JSON_BODY_WITHIN: Duration = Duration::from_secs(30);

/// A JSON request body to be deserialized into `T`. Extracting it reads nothing: the handler
/// calls [`JsonBody::read`] once the request is authenticated, so a request without a valid key
/// gets its 401 before its body is even looked at, and the body's bytes are counted against its
/// agent's share of the bodies being read.
pub struct JsonBody<T> {
    payload: Payload,
    /// Whether the request says its body is JSON (or says nothing of it).
    declared_json: bool,
    /// The body's length as `Content-Length` declares it.
    declared_length: Option<usize>,
    long_lived: Option<Arc<LongLived>>,
    shape: PhantomData<T>,
}

impl<T> FromRequest for JsonBody<T> {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        std::future::ready(Ok(Self {
            payload: payload.take(),
            declared_json: declares_json(request),
            declared_length: edge::declared_length(request.headers()),
            long_lived: request
                .app_data::<web::Data<ApiState>>()
                .map(|state| state.services.long_lived.clone()),
            shape: PhantomData,
        }))
    }
}

/// Whether the request's `Content-Type` is JSON (`application/json`, `application/*+json`) or
/// absent, as FastAPI reads a body as JSON.
fn declares_json(request: &HttpRequest) -> bool {
    let Some(value) = request.headers().get(header::CONTENT_TYPE) else {
        return true;
    };
    let media = value
        .to_str()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    media == "application/json"
        || media
            .strip_prefix("application/")
            .is_some_and(|subtype| subtype.ends_with("+json"))
}

impl<T: DeserializeOwned> JsonBody<T> {
    /// Reads at most `MAX_JSON_BODY_BYTES` for `agent` and deserializes them, or says what is
    /// wrong in a 422.
    pub async fn read(self, agent: &AuthenticatedAgent) -> Result<T, ApiError> {
        self.read_at_most(agent, MAX_JSON_BODY_BYTES).await
    }

    /// Like `read`, for a route whose fields have limits of their own above the default body
    /// limit: their 422 should name the field, not the body. A body declared larger is refused
    /// before it is read; one that would take the agent's bodies being read past their share is
    /// refused with 429.
    pub async fn read_at_most(
        self,
        agent: &AuthenticatedAgent,
        max_bytes: usize,
    ) -> Result<T, ApiError> {
        let registry = self.long_lived.ok_or_else(|| {
            ApiError::Refused(Refusal::Internal("ApiState not registered".into()))
        })?;
        let share = BodyShare {
            registry,
            agent: agent.profile.agent.id,
        };
        let limits = BodyLimits {
            max_bytes,
            within: JSON_BODY_WITHIN,
        };
        let bytes = read_body(self.payload, self.declared_length, limits, Some(share))
            .await
            .map_err(body_refused)?;
        if !self.declared_json {
            // FastAPI hands a body of another type to the model as it is: not an object.
            return Err(ApiError::Validation(vec![ValidationItem::new(
                "model_attributes_type",
                vec![json!("body")],
                "Input should be a valid dictionary or object to extract fields from",
                json!(String::from_utf8_lossy(&bytes)),
            )]));
        }
        parse_json_body(&bytes, max_bytes)
    }
}

/// A JSON value in which no object names a key twice: serde_json keeps the last of two, so a
/// body could say two things and be read as one of them.
struct UniqueKeys(Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(UniqueKeysVisitor)
            .map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> Visitor<'de> for UniqueKeysVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut list = Vec::new();
        while let Some(UniqueKeys(item)) = items.next_element()? {
            list.push(item);
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!("the key {key:?} is given twice")));
            }
            let UniqueKeys(value) = entries.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// What a body that was not read is answered: a 422 on the body like FastAPI's, 429 past the
/// agent's share, 408 when it did not arrive in time.
pub(crate) fn body_refused(refused: BodyRefused) -> ApiError {
    match refused {
        BodyRefused::TooLarge { max_bytes } => body_too_large(max_bytes),
        BodyRefused::Unreadable(_) => body_error(refused.to_string()),
        BodyRefused::OverShare => ApiError::Refused(Refusal::too_many_body_bytes()),
        BodyRefused::Late { .. } => ApiError::Refused(Refusal::TimedOut(refused.to_string())),
    }
}

fn body_error(reason: String) -> ApiError {
    ApiError::Validation(vec![ValidationItem::new(
        "value_error",
        vec![json!("body")],
        format!("Value error, {reason}"),
        Value::Null,
    )])
}

/// The 422 of a body over `max_bytes`.
pub(crate) fn body_too_large(max_bytes: usize) -> ApiError {
    body_error(format!("body must be at most {max_bytes} bytes"))
}

/// Deserializes a JSON body of at most `max_bytes`, or says what is wrong in a 422.
pub(crate) fn parse_json_body<T: DeserializeOwned>(
    bytes: &[u8],
    max_bytes: usize,
) -> Result<T, ApiError> {
    if bytes.len() > max_bytes {
        return Err(body_too_large(max_bytes));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::Validation(vec![ValidationItem::new(
            "missing",
            vec![json!("body")],
            "Field required",
            Value::Null,
        )]));
    }
    if !json_items_within(bytes, MAX_JSON_ITEMS) {
        return Err(body_error(format!(
            "body must hold at most {MAX_JSON_ITEMS} JSON items (values and keys)"
        )));
    }
    let value: Value = serde_json::from_slice(bytes)
        .map(|UniqueKeys(value)| value)
        .map_err(|error| {
            if error.classify() == serde_json::error::Category::Data {
                // The one data error `UniqueKeys` raises: a key given twice.
                let reason = error.to_string();
                let reason = reason.split(" at line ").next().unwrap_or_default();
                return ApiError::Validation(vec![ValidationItem::new(
                    "value_error",
                    vec![json!("body")],
                    format!("Value error, {reason}"),
                    Value::Null,
                )]);
            }
            // Python's json reports the 0-based offset where parsing stopped: the end, at EOF.
            let position = match error.classify() {
                serde_json::error::Category::Eof => bytes.len(),
                _ => byte_offset(bytes, error.line(), error.column()),
            };
            ApiError::Validation(vec![ValidationItem::new(
                "json_invalid",
                vec![json!("body"), json!(position)],
                "JSON decode error",
                json!({}),
            )
            .with_ctx(json!({ "error": json_error_reason(&error) }))])
        })?;
    if !value.is_object() {
        return Err(ApiError::Validation(vec![ValidationItem::new(
            "model_attributes_type",
            vec![json!("body")],
            "Input should be a valid dictionary or object to extract fields from",
            value,
        )]));
    }
    api_types::read_fields(value).map_err(|error| ApiError::Validation(vec![error.into()]))
}

fn byte_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start: usize = bytes
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    line_start + column.saturating_sub(1)
}

/// The reason in Python's `json` wording where the two agree, serde's otherwise.
fn json_error_reason(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let reason = message.split(" at line ").next().unwrap_or(&message);
    match reason {
        "EOF while parsing a value" | "expected value" => "Expecting value".to_owned(),
        "EOF while parsing an object"
        | "EOF while parsing a list"
        | "EOF while parsing a string" => "Unterminated input".to_owned(),
        other => other.to_owned(),
    }
}

/// The query string as name/value pairs; a repeated name keeps its last value, as FastAPI does.
pub struct QueryParams(Vec<(String, String)>);

impl FromRequest for QueryParams {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let pairs = serde_urlencoded::from_str::<Vec<(String, String)>>(request.query_string())
            .unwrap_or_default();
        std::future::ready(Ok(QueryParams(pairs)))
    }
}

impl QueryParams {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// A non-negative integer parameter within `min..=max`, `default` when absent; pydantic's
    /// errors otherwise (a negative number is out of range, not unparseable).
    pub fn integer(
        &self,
        name: &str,
        default: u32,
        min: u32,
        max: u32,
    ) -> Result<u32, ValidationItem> {
        let Some(raw) = self.get(name) else {
            return Ok(default);
        };
        let loc = vec![json!("query"), json!(name)];
        let value: i64 = raw.trim().parse().map_err(|_| {
            ValidationItem::new(
                "int_parsing",
                loc.clone(),
                "Input should be a valid integer, unable to parse string as an integer",
                json!(raw),
            )
        })?;
        FieldError::check_range(
            RequestPart::Query,
            name,
            value.into(),
            min.into(),
            max.into(),
            json!(raw),
        )?;
        // Within `min..=max`, so within u32.
        Ok(u32::try_from(value).unwrap_or(max))
    }

    /// The page size asked for, within `limit`'s bounds.
    pub fn limit(&self, limit: PageLimit) -> Result<u32, ValidationItem> {
        self.integer("limit", limit.default, limit.min, limit.max)
    }
}

impl QueryParams {
    /// A position in an agent's event log: a non-negative integer, 0 when absent.
    pub fn sequence(&self, name: &str) -> Result<u64, ValidationItem> {
        let Some(raw) = self.get(name) else {
            return Ok(0);
        };
        let loc = vec![json!("query"), json!(name)];
        let value: i128 = raw.trim().parse().map_err(|_| {
            ValidationItem::new(
                "int_parsing",
                loc.clone(),
                "Input should be a valid integer, unable to parse string as an integer",
                json!(raw),
            )
        })?;
        u64::try_from(value).map_err(|_| match value < 0 {
            true => ValidationItem::new(
                "greater_than_equal",
                loc.clone(),
                "Input should be greater than or equal to 0",
                json!(raw),
            )
            .with_ctx(json!({ "ge": 0 })),
            false => ValidationItem::new(
                "less_than_equal",
                loc.clone(),
                format!("Input should be less than or equal to {}", u64::MAX),
                json!(raw),
            )
            .with_ctx(json!({ "le": u64::MAX })),
        })
    }

    /// The `direction` filter of message listings: `inbound`, `outbound`, or absent.
    pub fn direction(&self) -> Result<Option<domain::Direction>, ValidationItem> {
        match self.get("direction") {
            None => Ok(None),
            Some(raw) => Ok(Some(FieldError::read_direction(
                RequestPart::Query,
                "direction",
                raw,
            )?)),
        }
    }
}

/// Every failure among a request's checks as one 422, so the caller learns them all at once.
pub fn rejected(failures: impl IntoIterator<Item = Option<ValidationItem>>) -> ApiError {
    ApiError::Validation(failures.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        to: Vec<String>,
        subject: String,
        count: Option<u32>,
    }

    fn parse_json_body_default(bytes: &[u8]) -> Result<Sample, ApiError> {
        parse_json_body(bytes, MAX_JSON_BODY_BYTES)
    }

    fn items(result: Result<Sample, ApiError>) -> Vec<Value> {
        match result {
            Err(ApiError::Validation(items)) => items
                .iter()
                .map(|i| serde_json::to_value(i).expect("serializes"))
                .collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn a_missing_field_is_located_in_the_body_with_the_whole_input() {
        let got = items(parse_json_body_default(br#"{"to": ["a@b.co"]}"#));
        assert_eq!(
            got,
            vec![
                json!({"type": "missing", "loc": ["body", "subject"], "msg": "Field required", "input": {"to": ["a@b.co"]}})
            ]
        );
    }

    #[test]
    fn a_wrong_type_inside_a_list_is_located_by_index() {
        let got = items(parse_json_body_default(
            br#"{"to": ["a@b.co", 5], "subject": "s"}"#,
        ));
        assert_eq!(
            got,
            vec![
                json!({"type": "string_type", "loc": ["body", "to", 1], "msg": "Input should be a valid string", "input": 5})
            ]
        );
    }

    #[test]
    fn malformed_json_is_a_json_invalid_item_with_its_position() {
        let got = items(parse_json_body_default(br#"{"to": "#));
        assert_eq!(got[0]["type"], "json_invalid");
        assert_eq!(got[0]["loc"], json!(["body", 7]));
        assert_eq!(got[0]["msg"], "JSON decode error");
        assert_eq!(got[0]["ctx"], json!({"error": "Expecting value"}));
    }

    #[test]
    fn an_empty_body_is_a_missing_body() {
        let got = items(parse_json_body_default(b""));
        assert_eq!(
            got,
            vec![
                json!({"type": "missing", "loc": ["body"], "msg": "Field required", "input": null})
            ]
        );
    }

    #[test]
    fn a_body_that_is_not_an_object_says_so() {
        let got = items(parse_json_body_default(b"[1]"));
        assert_eq!(got[0]["type"], "model_attributes_type");
        assert_eq!(got[0]["loc"], json!(["body"]));
    }

    #[test]
    fn unknown_fields_are_refused_when_the_dto_denies_them() {
        let got = items(parse_json_body_default(
            br#"{"to": [], "subject": "s", "extra": 1}"#,
        ));
        assert_eq!(got[0]["type"], "extra_forbidden");
        assert_eq!(got[0]["loc"], json!(["body", "extra"]));
    }

    fn query(raw: &str) -> QueryParams {
        QueryParams(serde_urlencoded::from_str(raw).expect("query"))
    }

    #[test]
    fn integers_in_the_query_follow_pydantics_rules() {
        assert_eq!(query("").integer("limit", 20, 1, 100), Ok(20));
        assert_eq!(
            query("limit=7&limit=100").integer("limit", 20, 1, 100),
            Ok(100)
        );
        let item = |raw| {
            serde_json::to_value(
                query(raw)
                    .integer("limit", 20, 1, 100)
                    .expect_err("invalid"),
            )
            .expect("json")
        };
        assert_eq!(
            item("limit=abc"),
            json!({"type": "int_parsing", "loc": ["query", "limit"], "msg": "Input should be a valid integer, unable to parse string as an integer", "input": "abc"})
        );
        assert_eq!(
            item("limit=0"),
            json!({"type": "greater_than_equal", "loc": ["query", "limit"], "msg": "Input should be greater than or equal to 1", "input": "0", "ctx": {"ge": 1}})
        );
        assert_eq!(
            item("limit=101"),
            json!({"type": "less_than_equal", "loc": ["query", "limit"], "msg": "Input should be less than or equal to 100", "input": "101", "ctx": {"le": 100}})
        );
    }

    // Found by an outside attack: a body naming a key twice was read as its last value.
    #[test]
    fn a_key_given_twice_is_refused_at_any_depth() {
        for body in [
            &br#"{"to": ["a@b.co"], "to": []}"#[..],
            br#"{"to": ["a@b.co"], "nested": {"x": 1, "x": 2}}"#,
            br#"{"to": ["a@b.co"], "list": [{"y": 1, "y": 1}]}"#,
        ] {
            let got = items(parse_json_body_default(body));
            assert_eq!(got[0]["type"], "value_error", "{got:?}");
            assert_eq!(got[0]["loc"], json!(["body"]));
            assert!(
                got[0]["msg"]
                    .as_str()
                    .is_some_and(|msg| msg.contains("given twice")),
                "{got:?}"
            );
        }
    }

    #[test]
    fn an_oversized_body_is_refused() {
        let body = vec![b' '; MAX_JSON_BODY_BYTES + 1];
        assert_eq!(
            items(parse_json_body_default(&body))[0]["loc"],
            json!(["body"])
        );
    }
}
