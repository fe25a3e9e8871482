//! Bearer authentication: `Authorization: Bearer <agent key>` on every runtime route.

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use domain::AgentProfile;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::errors::ApiError;
use crate::state::ApiState;
use edge::Refusal;

/// The agent the request's key belongs to, with its profile: the one principal every agent use
/// case takes, read once per request. Extracting it is what authenticates a route.
#[derive(Debug, Clone)]
pub struct AuthenticatedAgent {
    pub profile: Arc<AgentProfile>,
}

impl FromRequest for AuthenticatedAgent {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let presented = bearer_token(request);
        let state = request.app_data::<web::Data<ApiState>>().cloned();
        Box::pin(async move {
            let state = state.ok_or_else(|| {
                ApiError::Refused(Refusal::Internal("ApiState not registered".into()))
            })?;
            let presented = presented.ok_or(ApiError::Refused(Refusal::InvalidKey))?;
            Ok(AuthenticatedAgent {
                profile: state.services.agents.authenticate(&presented).await?,
            })
        })
    }
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
