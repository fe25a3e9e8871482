//! How a tool answers a model: what it asked for in the route's own shapes (as structured content,
//! and the same JSON as text), or a refusal it can act on (`isError`, the route's detail as the
//! text, the status and what to fix beside it); and the progress of a long call.

use std::future::Future;
use std::time::{Duration, Instant};

use api_types::{FieldError, FieldPath, RequestPart, IDEMPOTENCY_KEY_HEADER};
use refusals::Refusal;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// The answer to a call that did what it was asked.
pub fn answer(value: impl Serialize) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(value) => CallToolResult::structured(value),
        Err(error) => refused(Refusal::Internal(format!(
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

/// Runs `work` (a wait of up to `total`), telling the caller every `every` how long it has
/// waited when the call asked for progress (it carries a `progressToken`). `None` when the call
/// was cancelled (its client gone): the work is dropped, and whatever place it held with it.
pub async fn reporting_progress<T>(
    context: &RequestContext<RoleServer>,
    what: &str,
    total: Duration,
    every: Duration,
    work: impl Future<Output = T>,
) -> Option<T> {
    let token = context.meta.get_progress_token();
    let started = Instant::now();
    let mut ticks = tokio::time::interval_at((started + every).into(), every);
    tokio::pin!(work);
    loop {
        tokio::select! {
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
