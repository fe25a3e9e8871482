//! What is wrong with the fields of a request, said once for every way in: the HTTP API renders
//! it as FastAPI's 422 list, and MCP or the console will render it their way. Kinds and messages
//! are pydantic's, as the API contract fixes them.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// The part of a request a field is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestPart {
    /// The fields the caller sent (a JSON body, a tool's arguments).
    Body,
    /// What travels beside them (HTTP headers), e.g. the idempotency key of a mail send.
    Header,
    /// The parameters of a URL's query string.
    Query,
}

impl RequestPart {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Body => "body",
            Self::Header => "header",
            Self::Query => "query",
        }
    }
}

/// How many items a page of a listing holds: `default` when the caller names none, else at
/// least `min` and at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLimit {
    pub default: u32,
    pub min: u32,
    pub max: u32,
}

impl PageLimit {
    /// The inbox, the intents, the events and the webhook deliveries.
    pub const PAGE: Self = Self {
        default: 20,
        min: 1,
        max: 100,
    };
    /// The SMS history: the spec sets no minimum there, so 0 is an empty page.
    pub const SMS: Self = Self {
        default: 20,
        min: 0,
        max: 100,
    };

    /// The limit asked for (`None`: the default) if within bounds, else pydantic's words for
    /// why not; `input` is the value as the caller sent it.
    pub fn check(
        self,
        part: RequestPart,
        field: &str,
        asked: Option<i128>,
        input: Value,
    ) -> Result<u32, FieldError> {
        let Some(asked) = asked else {
            return Ok(self.default);
        };
        FieldError::check_range(part, field, asked, self.min.into(), self.max.into(), input)?;
        // Within `min..=max`, so within u32.
        Ok(u32::try_from(asked).unwrap_or(self.max))
    }
}

/// One step into the fields: a name, or an index in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum FieldPath {
    Name(String),
    Index(usize),
}

impl From<&str> for FieldPath {
    fn from(name: &str) -> Self {
        Self::Name(name.to_owned())
    }
}

impl From<usize> for FieldPath {
    fn from(index: usize) -> Self {
        Self::Index(index)
    }
}

/// One field that is wrong: where, which rule (pydantic's type name, e.g. `string_too_long`),
/// what is wrong for a person, the value as received, and what the rule expected.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub part: RequestPart,
    pub path: Vec<FieldPath>,
    pub kind: &'static str,
    pub message: String,
    pub input: Value,
    // Boxed: most errors have none, and a small error keeps `Result<_, FieldError>` small.
    pub context: Option<Box<Value>>,
}

impl FieldError {
    pub fn new(
        part: RequestPart,
        path: Vec<FieldPath>,
        kind: &'static str,
        message: impl Into<String>,
        input: Value,
    ) -> Self {
        Self {
            part,
            path,
            kind,
            message: message.into(),
            input,
            context: None,
        }
    }

    /// An error of the body's field `path`.
    pub fn body(
        path: Vec<FieldPath>,
        kind: &'static str,
        message: impl Into<String>,
        input: Value,
    ) -> Self {
        Self::new(RequestPart::Body, path, kind, message, input)
    }

    pub fn with_context(mut self, context: Value) -> Self {
        self.context = Some(Box::new(context));
        self
    }

    /// A body field that failed a domain rule, in pydantic's `value_error` shape.
    pub fn value_error(
        field: &str,
        input: impl Into<Value>,
        reason: impl std::fmt::Display,
    ) -> Self {
        Self::body(
            vec![field.into()],
            "value_error",
            format!("Value error, {reason}"),
            input.into(),
        )
    }

    /// A list field given empty where it needs at least one item.
    pub fn empty_list(path: Vec<FieldPath>) -> Self {
        Self::body(
            path,
            "too_short",
            "List should have at least 1 item after validation, not 0",
            json!([]),
        )
        .with_context(json!({"field_type": "List", "min_length": 1, "actual_length": 0}))
    }

    /// A whole number outside `min..=max`, in pydantic's words; `input` is the value as sent.
    pub fn check_range(
        part: RequestPart,
        field: &str,
        value: i128,
        min: i128,
        max: i128,
        input: Value,
    ) -> Result<(), Self> {
        let path = vec![FieldPath::from(field)];
        if value < min {
            return Err(Self::new(
                part,
                path,
                "greater_than_equal",
                format!("Input should be greater than or equal to {min}"),
                input,
            )
            .with_context(json!({ "ge": min })));
        }
        if value > max {
            return Err(Self::new(
                part,
                path,
                "less_than_equal",
                format!("Input should be less than or equal to {max}"),
                input,
            )
            .with_context(json!({ "le": max })));
        }
        Ok(())
    }

    /// The direction of a message listing, `inbound` or `outbound`, or the enum error naming
    /// both.
    pub fn read_direction(
        part: RequestPart,
        field: &str,
        raw: &str,
    ) -> Result<domain::Direction, Self> {
        domain::Direction::parse(raw).ok_or_else(|| {
            Self::new(
                part,
                vec![field.into()],
                "enum",
                "Input should be 'inbound' or 'outbound'",
                json!(raw),
            )
            .with_context(json!({"expected": "'inbound' or 'outbound'"}))
        })
    }

    /// A string body field outside `min..=max` characters.
    pub fn check_length(field: &str, input: &str, min: usize, max: usize) -> Result<(), Self> {
        let length = input.chars().count();
        if length < min {
            let plural = if min == 1 { "" } else { "s" };
            return Err(Self::body(
                vec![field.into()],
                "string_too_short",
                format!("String should have at least {min} character{plural}"),
                json!(input),
            )
            .with_context(json!({ "min_length": min })));
        }
        if length > max {
            return Err(Self::body(
                vec![field.into()],
                "string_too_long",
                format!("String should have at most {max} characters"),
                json!(input),
            )
            .with_context(json!({ "max_length": max })));
        }
        Ok(())
    }
}

/// Every field of a request that is wrong, in the order the fields are checked, so the caller
/// learns them all at once.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldErrors(pub Vec<FieldError>);

impl FieldErrors {
    /// The errors among `checks`; none is a request whose fields are all right.
    pub fn among(checks: impl IntoIterator<Item = Option<FieldError>>) -> Self {
        Self(checks.into_iter().flatten().collect())
    }
}

impl From<FieldError> for FieldErrors {
    fn from(error: FieldError) -> Self {
        Self(vec![error])
    }
}

/// Reads the fields a caller sent (a JSON body, a tool's arguments) into `T`, or says what is
/// wrong with the first field that does not fit, in pydantic's kind and wording.
pub fn read_fields<T: DeserializeOwned>(value: Value) -> Result<T, FieldError> {
    let input = value.clone();
    serde_path_to_error::deserialize(value).map_err(|error| {
        let mut path = Vec::new();
        let mut located = &input;
        for segment in error.path().iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => {
                    path.push(FieldPath::Index(*index));
                    located = located.get(index).unwrap_or(&Value::Null);
                }
                serde_path_to_error::Segment::Map { key }
                | serde_path_to_error::Segment::Enum { variant: key } => {
                    path.push(FieldPath::Name(key.clone()));
                    located = located.get(key).unwrap_or(&Value::Null);
                }
                serde_path_to_error::Segment::Unknown => {}
            }
        }
        from_serde(&error.into_inner().to_string(), path, located, &input)
    })
}

/// Maps serde's message to pydantic's error type and wording.
fn from_serde(
    message: &str,
    mut path: Vec<FieldPath>,
    located: &Value,
    whole: &Value,
) -> FieldError {
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        path.push(FieldPath::from(field));
        return FieldError::body(path, "missing", "Field required", whole.clone());
    }
    if message.starts_with("unknown field `") {
        // serde_path_to_error's path already ends at the unknown field.
        return FieldError::body(
            path,
            "extra_forbidden",
            "Extra inputs are not permitted",
            located.clone(),
        );
    }
    let expected = message.split("expected ").nth(1).unwrap_or_default();
    let (kind, msg) =
        if expected.starts_with("a string") || expected.starts_with("a borrowed string") {
            ("string_type", "Input should be a valid string")
        } else if [
            "i8",
            "i16",
            "i32",
            "i64",
            "u8",
            "u16",
            "u32",
            "u64",
            "usize",
            "an integer",
        ]
        .iter()
        .any(|t| expected.starts_with(t))
        {
            ("int_type", "Input should be a valid integer")
        } else if expected.starts_with("a boolean") {
            ("bool_type", "Input should be a valid boolean")
        } else if expected.starts_with("a sequence") {
            ("list_type", "Input should be a valid list")
        } else if expected.starts_with("struct") || expected.starts_with("a map") {
            (
                "model_attributes_type",
                "Input should be a valid dictionary or object to extract fields from",
            )
        } else {
            return FieldError::body(
                path,
                "value_error",
                format!("Value error, {message}"),
                located.clone(),
            );
        };
    FieldError::body(path, kind, msg, located.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_lengths_follow_pydantics_rules() {
        assert_eq!(FieldError::check_length("k", "abc", 1, 3), Ok(()));
        let short = FieldError::check_length("k", "", 1, 3).expect_err("short");
        assert_eq!(short.kind, "string_too_short");
        assert_eq!(short.message, "String should have at least 1 character");
        assert_eq!(short.context, Some(Box::new(json!({"min_length": 1}))));
        let long = FieldError::check_length("k", "abcd", 1, 3).expect_err("long");
        assert_eq!(long.kind, "string_too_long");
        assert_eq!(long.message, "String should have at most 3 characters");
        assert_eq!(long.context, Some(Box::new(json!({"max_length": 3}))));
        let plural = FieldError::check_length("k", "a", 2, 3).expect_err("short");
        assert_eq!(plural.message, "String should have at least 2 characters");
    }

    #[test]
    fn errors_among_checks_keep_their_order_and_drop_the_passed() {
        let first = FieldError::value_error("a", "x", "one");
        let second = FieldError::value_error("b", "y", "two");
        assert_eq!(
            FieldErrors::among([Some(first.clone()), None, Some(second.clone())]),
            FieldErrors(vec![first, second])
        );
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Shape {
        name: String,
        counts: Vec<u32>,
    }

    #[test]
    fn fields_that_do_not_fit_are_located_and_worded_as_pydantic_does() {
        let missing = read_fields::<Shape>(json!({"counts": []})).expect_err("missing");
        assert_eq!(
            (missing.kind, missing.path, missing.message.as_str()),
            ("missing", vec![FieldPath::from("name")], "Field required")
        );
        let mistyped =
            read_fields::<Shape>(json!({"name": "a", "counts": [1, "two"]})).expect_err("typed");
        assert_eq!(
            (mistyped.kind, mistyped.path, mistyped.input),
            (
                "int_type",
                vec![FieldPath::from("counts"), FieldPath::from(1)],
                json!("two")
            )
        );
    }
}
