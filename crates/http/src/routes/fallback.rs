//! Answers for requests no handler takes: unknown paths and wrong methods, as JSON.

use actix_web::http::header;
use actix_web::{HttpResponse, ResponseError};

use crate::errors::ApiError;
use edge::Refusal;

pub async fn not_found() -> HttpResponse {
    ApiError::Refused(Refusal::NotFound).error_response()
}

/// The 405 of a known path; `allow` lists its methods, as RFC 9110 requires of a 405.
pub async fn method_not_allowed(allow: header::HeaderValue) -> HttpResponse {
    let mut response = ApiError::MethodNotAllowed.error_response();
    response.headers_mut().insert(header::ALLOW, allow);
    response
}
