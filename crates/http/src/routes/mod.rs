//! Route handlers, one module per resource.

pub mod agents;
pub mod docs;
pub mod email;
pub mod events;
pub mod fallback;
pub mod keys;
pub mod ops;
pub mod provider_webhooks;
pub mod sms;
pub mod wallet;
pub mod webhook_endpoints;

use actix_web::http::header::HeaderName;
use actix_web::HttpResponseBuilder;

/// Set on the answer to a request that replayed what its idempotency key made before.
const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// A 200, saying `Idempotent-Replayed: true` when the answer is an earlier request's.
pub(crate) fn ok_replayed_if(replayed: bool) -> HttpResponseBuilder {
    replayed_if(actix_web::HttpResponse::Ok(), replayed)
}

/// `response`, saying `Idempotent-Replayed: true` when the answer is an earlier request's.
pub(crate) fn replayed_if(
    mut response: HttpResponseBuilder,
    replayed: bool,
) -> HttpResponseBuilder {
    if replayed {
        response.insert_header((IDEMPOTENT_REPLAYED, "true"));
    }
    response
}

/// The request's `Idempotency-Key` header, read as a mail send reads it (422 when it is not a
/// key); `None` without one.
pub(crate) fn idempotency_key(
    request: &actix_web::HttpRequest,
) -> Result<Option<domain::IdempotencyKey>, crate::errors::ApiError> {
    let raw = request
        .headers()
        .get(api_types::IDEMPOTENCY_KEY_HEADER)
        .map(|value| value.as_bytes());
    Ok(api_types::idempotency_key_header(raw)?)
}
