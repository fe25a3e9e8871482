//! The console's request bodies: a passkey's answer (JSON) and the forms of its pages, each read
//! by the edge's one bounded read, within `BODY_LIMITS`, then parsed.

use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, HttpResponse};
use edge::{read_body, BodyLimits};
use serde::de::DeserializeOwned;

use crate::pages;

/// The largest body the console reads (a passkey's answer, a policy's form), and how long its
/// browser has to send it.
const BODY_LIMITS: BodyLimits = BodyLimits {
    max_bytes: 64 * 1024,
    within: Duration::from_secs(30),
};

/// A page's form, `application/x-www-form-urlencoded`.
pub(crate) struct Form<T>(T);

/// A JSON body: a passkey's answer.
pub(crate) struct Json<T>(T);

impl<T> Deref for Form<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Deref for Json<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A body the console could not read, answered as `response` says.
fn unreadable(response: HttpResponse) -> actix_web::Error {
    actix_web::error::InternalError::from_response("unreadable body", response).into()
}

fn media_type(request: &HttpRequest) -> String {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

type Reading<T> = Pin<Box<dyn Future<Output = Result<T, actix_web::Error>>>>;

impl<T: DeserializeOwned + 'static> FromRequest for Form<T> {
    type Error = actix_web::Error;
    type Future = Reading<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let is_form = media_type(request) == "application/x-www-form-urlencoded";
        let declared = edge::declared_length(request.headers());
        let payload = payload.take();
        Box::pin(async move {
            if !is_form {
                return Err(unreadable(pages::unreadable_form(
                    "it is not application/x-www-form-urlencoded",
                )));
            }
            let bytes = read_body(payload, declared, BODY_LIMITS, None)
                .await
                .map_err(|refused| unreadable(pages::unreadable_form(&refused.to_string())))?;
            serde_urlencoded::from_bytes(&bytes)
                .map(Form)
                .map_err(|error| unreadable(pages::unreadable_form(&error.to_string())))
        })
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = actix_web::Error;
    type Future = Reading<Self>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let media = media_type(request);
        let is_json = media == "application/json"
            || media
                .strip_prefix("application/")
                .is_some_and(|subtype| subtype.ends_with("+json"));
        let declared = edge::declared_length(request.headers());
        let payload = payload.take();
        Box::pin(async move {
            let refused = |why: &dyn std::fmt::Display| {
                unreadable(pages::json_refusal(
                    HttpResponse::BadRequest(),
                    &format!("The request could not be read: {why}"),
                ))
            };
            if !is_json {
                return Err(refused(&"it is not application/json"));
            }
            let bytes = read_body(payload, declared, BODY_LIMITS, None)
                .await
                .map_err(|error| refused(&error))?;
            serde_json::from_slice(&bytes)
                .map(Json)
                .map_err(|error| refused(&error))
        })
    }
}
