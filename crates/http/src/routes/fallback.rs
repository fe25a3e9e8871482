//! Answers for requests no handler takes: unknown paths and wrong methods, as JSON.

use actix_web::{HttpResponse, ResponseError};

use crate::errors::ApiError;

pub async fn not_found() -> HttpResponse {
    ApiError::NotFound.error_response()
}

pub async fn method_not_allowed() -> HttpResponse {
    ApiError::MethodNotAllowed.error_response()
}
