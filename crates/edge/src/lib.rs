//! The edge: what every way in (the REST API, MCP, the operator console) shares, so each is
//! written once. What a refused request is told ([`Refusal`]); one bounded read of a request body
//! with a deadline ([`read_body`]); one writer of Server-Sent Events ([`sse_response`]: the retry
//! line, keep-alives, a lifetime, a bounded buffer that cuts a stalled reader, the end at
//! shutdown), used by the event stream and the console's live list; and constant-time comparison
//! of secrets ([`same_secret`]).

mod body;
mod refusal;
mod secret;
mod sse;

pub use body::{declared_length, read_body, BodyLimits, BodyRefused, BodyShare};
pub use refusal::{Refusal, MAIL_THROTTLE_RETRY_AFTER, UNAVAILABLE_RETRY_AFTER};
pub use secret::same_secret;
pub use sse::{sse_response, SseMeter, SseSettings};
