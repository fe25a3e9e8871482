//! How a tool answers a model: what it asked for in the route's own shapes (as structured content,
//! and the same JSON as text), or a refusal it can act on (`isError`, the route's detail as the
//! text, the status and what to fix beside it); and the progress of a long call.

use std::future::Future;
use std::time::{Duration, Instant};

use api_types::{FieldError, FieldPath, RequestPart, IDEMPOTENCY_KEY_HEADER};
use edge::Refusal;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The answer to a call that did what it was asked: structured, and the same JSON as text for
/// clients that read only text. Both are written from `value` itself, which is quicker than
/// writing the text from the structured value.
pub fn answer(value: impl Serialize) -> CallToolResult {
    match (serde_json::to_value(&value), serde_json::to_string(&value)) {
        (Ok(structured), Ok(text)) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(structured);
            result
        }
        (Err(error), _) | (_, Err(error)) => refused(Refusal::Internal(format!(
            "rendering a tool's answer: {error}"
        ))),
    }
}

/// A refusal, as every way in words it.
pub fn refused(refusal: Refusal) -> CallToolResult {
    refused_with(refusal, Map::new())
}

/// A refusal with more for the model beside the detail (a denied transfer's verdict).
pub fn refused_with(refusal: Refusal, more: Map<String, Value>) -> CallToolResult {
    refusal.log_cause();
    let mut structured = Map::new();
    structured.insert("status".into(), json!(refusal.status()));
    let text = match &refusal {
        Refusal::Invalid(errors) => {
            let items: Vec<Value> = errors.0.iter().map(item).collect();
            let lines: Vec<String> = errors
                .0
                .iter()
                .map(|error| format!("{}: {}", dotted(&location(error)), error.message))
                .collect();
            structured.insert("detail".into(), Value::Array(items));
            format!("Invalid arguments: {}", lines.join("; "))
        }
        other => {
            let detail = other.to_string();
            structured.insert("detail".into(), json!(detail));
            detail
        }
    };
    if let Some(seconds) = refusal.retry_after_secs() {
        structured.insert("retry_after".into(), json!(seconds));
    }
    structured.extend(more);
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(Value::Object(structured));
    result
}

/// Where a field is among the tool's arguments. The route's idempotency key travels as a
/// header; here it is the argument `idempotency_key`.
fn location(error: &FieldError) -> Vec<Value> {
    if error.part == RequestPart::Header && error.path == [FieldPath::from(IDEMPOTENCY_KEY_HEADER)]
    {
        return vec![json!("idempotency_key")];
    }
    error
        .path
        .iter()
        .map(|step| match step {
            FieldPath::Name(name) => json!(name),
            FieldPath::Index(index) => json!(index),
        })
        .collect()
}

/// A location as a model reads it: `to.0`.
fn dotted(location: &[Value]) -> String {
    let steps: Vec<String> = location
        .iter()
        .map(|step| match step {
            Value::String(name) => name.clone(),
            other => other.to_string(),
        })
        .collect();
    steps.join(".")
}

/// One wrong field as pydantic lists it: its type, location, message, input and context.
fn item(error: &FieldError) -> Value {
    let mut item = json!({
        "type": error.kind,
        "loc": location(error),
        "msg": error.message,
        "input": error.input,
    });
    if let Some(context) = &error.context {
        item["ctx"] = (**context).clone();
    }
    item
}

/// Runs `work` (a wait of up to `total`), telling the caller how long it has waited when the call
/// asked for progress (it carries a `progressToken`): at once, so its answer starts as an event
/// stream at once, then every `every`. `None` when the call was cancelled (its client gone): the
/// work is dropped, and whatever place it held with it.
pub async fn reporting_progress<T>(
    context: &RequestContext<RoleServer>,
    what: &str,
    total: Duration,
    every: Duration,
    work: impl Future<Output = T>,
) -> Option<T> {
    let token = context.meta.get_progress_token();
    let started = Instant::now();
    let mut ticks = tokio::time::interval_at(started.into(), every);
    tokio::pin!(work);
    loop {
        tokio::select! {
            biased;
            done = &mut work => return Some(done),
            () = context.ct.cancelled() => return None,
            _ = ticks.tick(), if token.is_some() => {
                let Some(token) = token.clone() else { continue };
                let waited = started.elapsed().as_secs();
                let progress = ProgressNotificationParam::new(token, waited as f64)
                    .with_total(total.as_secs() as f64)
                    .with_message(format!("{what}: waited {waited} of {} s", total.as_secs()));
                if let Err(error) = context.peer.notify_progress(progress).await {
                    tracing::debug!(%error, "a progress notification was not delivered");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use api_types::{EmailSend, FieldErrors};

    use super::*;

    fn structured(result: &CallToolResult) -> &Value {
        result.structured_content.as_ref().expect("structured")
    }

    fn text(result: &CallToolResult) -> &str {
        &result.content[0].as_text().expect("text").text
    }

    fn send_refused(body: Value, key: Option<&[u8]>) -> CallToolResult {
        let errors = app::SendMail::try_from(EmailSend {
            body: serde_json::from_value(body).expect("a body"),
            idempotency_key: key,
        })
        .expect_err("refused");
        refused(errors.into())
    }

    #[test]
    fn wrong_fields_are_each_named_where_the_model_passed_them() {
        let result = send_refused(
            json!({"to": ["nobody", "a@b.co"], "subject": "a\nb", "body_text": "x"}),
            None,
        );
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            text(&result),
            "Invalid arguments: to.0: value is not a valid email address: email address must be \
             local@domain; subject: Value error, the subject is a header: it must not contain CR \
             or LF"
        );
        assert_eq!(structured(&result)["status"], 422);
        assert_eq!(
            structured(&result)["detail"][0],
            json!({"type": "value_error", "loc": ["to", 0], "input": "nobody",
                   "msg": "value is not a valid email address: email address must be local@domain"})
        );
    }

    #[test]
    fn the_routes_idempotency_key_header_is_the_argument_here() {
        let result = send_refused(
            json!({"to": ["a@b.co"], "subject": "s", "body_text": "x"}),
            Some(b"\x01"),
        );
        assert_eq!(
            text(&result),
            "Invalid arguments: idempotency_key: Value error, the idempotency key must be visible \
             ASCII"
        );
        assert_eq!(
            structured(&result)["detail"][0]["loc"],
            json!(["idempotency_key"])
        );
    }

    #[test]
    fn a_refusal_reads_as_the_routes_detail_with_its_status_and_retry() {
        let result = refused(Refusal::TooManyRequests {
            detail: "Too many sends from this agent; retry later".into(),
            retry_after: Duration::from_millis(2500),
        });
        assert_eq!(text(&result), "Too many sends from this agent; retry later");
        assert_eq!(
            structured(&result),
            &json!({"status": 429, "retry_after": 3,
                    "detail": "Too many sends from this agent; retry later"})
        );
        let limits = FieldErrors::from(FieldError::value_error("to", "x", "no"));
        assert_eq!(structured(&refused(limits.into()))["status"], 422);
    }

    #[test]
    fn an_internal_error_tells_the_model_nothing_of_its_cause() {
        let result = refused(Refusal::Internal("the pool's secret".into()));
        assert_eq!(text(&result), "Internal Server Error");
        assert!(!structured(&result).to_string().contains("secret"));
    }

    #[test]
    fn an_answer_is_the_same_json_as_structure_and_as_text() {
        let result = answer(json!({"found": true}));
        assert_eq!(result.is_error, Some(false));
        assert_eq!(
            serde_json::from_str::<Value>(text(&result)).expect("JSON"),
            *structured(&result)
        );
    }
}
