//! Bearer authentication and the scope check: `Authorization: Bearer <agent key>` on every
//! runtime route, and the scope the route table declares for it (the keys contract).
//!
//! Each scoped route is wrapped in `require_scope`, which authenticates the key once, refuses a
//! key without the route's scope (403) before the body is read or a store is touched, and leaves
//! the principal among the request's extensions, where `AuthenticatedAgent` takes it.

use actix_web::body::BoxBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use app::Principal;
use domain::keys::{AgentKeyRecord, Scope};
use domain::AgentProfile;
use std::future::{ready, Ready};
use std::sync::Arc;

use crate::errors::ApiError;
use crate::state::ApiState;
use edge::Refusal;

/// The agent the request's key belongs to, with its profile and the key's record: the one
/// principal every agent use case takes, read once per request by `require_scope`.
#[derive(Debug, Clone)]
pub struct AuthenticatedAgent {
    pub profile: Arc<AgentProfile>,
    pub key: Arc<AgentKeyRecord>,
}

impl AuthenticatedAgent {
    pub fn principal(&self) -> Principal {
        Principal {
            profile: Arc::clone(&self.profile),
            key: Arc::clone(&self.key),
        }
    }
}

impl FromRequest for AuthenticatedAgent {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    /// The principal `require_scope` authenticated; a route the table gives no scope has none,
    /// and is refused rather than served unchecked.
    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let principal = request.extensions().get::<Principal>().cloned();
        ready(
            principal
                .map(|principal| AuthenticatedAgent {
                    profile: principal.profile,
                    key: principal.key,
                })
                .ok_or_else(|| {
                    ApiError::Refused(Refusal::Internal(
                        "an agent route without a scope in the route table".into(),
                    ))
                }),
        )
    }
}

/// Authenticates the request's key and checks it holds `scope`, before the route's handler
/// reads anything; the principal goes on in the request's extensions.
pub(crate) async fn require_scope(
    scope: Scope,
    request: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    match authenticate(request.request()).await {
        Ok(principal) if principal.key.holds(scope) => {
            request.extensions_mut().insert(principal);
            next.call(request).await
        }
        Ok(_) => Ok(request.error_response(ApiError::from(Refusal::lacks_scope(scope)))),
        Err(refused) => Ok(request.error_response(refused)),
    }
}

/// The principal of the request's bearer key.
async fn authenticate(request: &HttpRequest) -> Result<Principal, ApiError> {
    let state = request
        .app_data::<web::Data<ApiState>>()
        .cloned()
        .ok_or_else(|| ApiError::Refused(Refusal::Internal("ApiState not registered".into())))?;
    let presented = bearer_token(request).ok_or(ApiError::Refused(Refusal::InvalidKey))?;
    Ok(state.services.agents.authenticate(&presented).await?)
}

/// The credential of an `Authorization: Bearer ...` header.
pub(crate) fn bearer_token(request: &HttpRequest) -> Option<String> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    api_types::bearer_credential(value).map(str::to_owned)
}
