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
    let mut response = actix_web::HttpResponse::Ok();
    if replayed {
        response.insert_header((IDEMPOTENT_REPLAYED, "true"));
    }
    response
}
