//! Into the console and out of it: an enrollment link registers a passkey, the passkey signs its
//! operator in to a session, and signing out ends it. The ceremonies' two steps are requests of
//! the page's script, each guarded by the page's CSRF token and the console's origin.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use app::AccessError;
use domain::OneTimeSecret;
use maud::html;
use serde::Deserialize;

use crate::body::{Form, Json};
use crate::guard::{
    client_address, console_cookie, pre_session_refusal, removed, signed_in, signed_in_change,
    PRE_SESSION_CSRF_COOKIE, SESSION_COOKIE, SIGN_IN_PATH,
};
use crate::pages::{html, json_refusal, layout, role_name};
use crate::Console;

/// The browser's answer to a ceremony: the ceremony it answers (a registration's id, a
/// sign-in's sealed challenge) and the credential it made.
#[derive(Deserialize)]
pub(crate) struct Answer {
    ceremony: String,
    credential: serde_json::Value,
}

/// A form's CSRF token.
#[derive(Deserialize)]
pub(crate) struct CsrfForm {
    csrf: Option<String>,
}

impl CsrfForm {
    pub(crate) fn csrf(&self) -> Option<&str> {
        self.csrf.as_deref()
    }
}

/// The pre-session CSRF token of a page: the browser's, when it has one, else a new one it is
/// given.
fn pre_session_token(request: &HttpRequest) -> (String, bool) {
    match request.cookie(PRE_SESSION_CSRF_COOKIE) {
        Some(cookie) if OneTimeSecret::parse(cookie.value()).is_some() => {
            (cookie.value().to_owned(), false)
        }
        _ => (app::new_csrf_token(), true),
    }
}

/// A page before any session, with its CSRF token set in the browser when it is new.
fn pre_session_page(
    request: &HttpRequest,
    mut response: actix_web::HttpResponseBuilder,
    title: &str,
    content: impl FnOnce(&str) -> maud::Markup,
) -> HttpResponse {
    let (token, new) = pre_session_token(request);
    if new {
        response.cookie(console_cookie(PRE_SESSION_CSRF_COOKIE, token.clone()));
    }
    html(response, layout(title, None, Some(&token), content(&token)))
}

/// How a refused step of a ceremony is answered to the page's script.
fn refused(error: &AccessError) -> HttpResponse {
    let detail = error.to_string();
    match error {
        AccessError::TooManyAttempts { retry_after } => {
            let mut response = HttpResponse::TooManyRequests();
            response.insert_header((
                header::RETRY_AFTER,
                retry_after.as_secs().max(1).to_string(),
            ));
            json_refusal(response, &detail)
        }
        AccessError::LinkClosed => json_refusal(HttpResponse::Gone(), &detail),
        AccessError::Store(error) => {
            tracing::warn!(%error, "a passkey ceremony failed");
            json_refusal(
                HttpResponse::ServiceUnavailable(),
                "The console cannot complete this step right now: try again in a moment.",
            )
        }
        _ => json_refusal(HttpResponse::BadRequest(), &detail),
    }
}

/// A ceremony begun, for the page's script.
fn begun(ceremony: &str, options: &str) -> HttpResponse {
    match serde_json::from_str::<serde_json::Value>(options) {
        Ok(options) => HttpResponse::Ok().json(serde_json::json!({
            "ceremony": ceremony,
            "options": options,
        })),
        Err(error) => {
            tracing::error!(%error, "passkey options that are not JSON");
            json_refusal(
                HttpResponse::InternalServerError(),
                "The console could not begin this step.",
            )
        }
    }
}

/// `GET /console/sign-in`.
pub(crate) async fn sign_in_page(
    request: HttpRequest,
    console: web::Data<Console>,
) -> HttpResponse {
    if signed_in(&request, &console).await.is_ok() {
        return HttpResponse::SeeOther()
            .insert_header((header::LOCATION, "/console/pending"))
            .finish();
    }
    let enrolled = request.query_string().contains("enrolled=1");
    pre_session_page(&request, HttpResponse::Ok(), "Sign in", |_| {
        html! {
            @if enrolled {
                p.notice role="status" { "Your passkey is registered: sign in with it." }
            }
            p { "Operators sign in with the passkey they registered through their enrollment link." }
            button id="sign-in" type="button" { "Sign in with a passkey" }
            p id="message" role="alert" {}
        }
    })
}

/// `POST /console/sign-in/options`: begins a sign-in; nothing is kept until the browser answers.
pub(crate) async fn sign_in_options(
    request: HttpRequest,
    console: web::Data<Console>,
) -> HttpResponse {
    if let Some(refusal) = pre_session_refusal(&request, &console) {
        return refusal;
    }
    match console.services.operator.console.sign_in_options().await {
        Ok(start) => begun(&start.ceremony, &start.options),
        Err(error) => refused(&error),
    }
}

/// `POST /console/sign-in`: the passkey's answer; a session on success.
pub(crate) async fn sign_in(
    request: HttpRequest,
    console: web::Data<Console>,
    answer: Json<Answer>,
) -> HttpResponse {
    if let Some(refusal) = pre_session_refusal(&request, &console) {
        return refusal;
    }
    let credential = answer.credential.to_string();
    match console
        .services
        .operator
        .console
        .sign_in(
            &answer.ceremony,
            &credential,
            client_address(&request, &console),
        )
        .await
    {
        Ok(signed_in) => HttpResponse::Ok()
            .cookie(console_cookie(
                SESSION_COOKIE,
                signed_in.cookie.expose().to_owned(),
            ))
            .cookie(removed(PRE_SESSION_CSRF_COOKIE))
            .json(serde_json::json!({ "next": "/console/pending" })),
        Err(error) => refused(&error),
    }
}

/// `POST /console/sign-out`.
pub(crate) async fn sign_out(
    request: HttpRequest,
    console: web::Data<Console>,
    form: Form<CsrfForm>,
) -> HttpResponse {
    if let Err(refusal) = signed_in_change(&request, &console, form.csrf.as_deref()).await {
        return refusal;
    }
    if let Some(cookie) = request.cookie(SESSION_COOKIE) {
        if let Err(error) = console
            .services
            .operator
            .console
            .sign_out(cookie.value(), client_address(&request, &console))
            .await
        {
            return crate::pages::unavailable(&error);
        }
    }
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, SIGN_IN_PATH))
        .cookie(removed(SESSION_COOKIE))
        .finish()
}

/// `GET /console/enroll/{token}`: the page that registers the operator's passkey.
pub(crate) async fn enroll_page(
    request: HttpRequest,
    console: web::Data<Console>,
    token: web::Path<String>,
) -> HttpResponse {
    match console.services.operator.console.enrollment(&token).await {
        Ok(operator) => {
            let path = format!("/console/enroll/{}", token.as_str());
            pre_session_page(&request, HttpResponse::Ok(), "Enroll", |_| {
                html! {
                    p {
                        "You were invited to the console as " strong { (operator.name.as_str()) }
                        ", " (role_name(operator.role)) ". Register a passkey on this device: it "
                        "is how you will sign in. This link works once."
                    }
                    button id="register-passkey" type="button" data-enroll-path=(path) {
                        "Register a passkey"
                    }
                    p id="message" role="alert" {}
                }
            })
        }
        Err(AccessError::Store(error)) => crate::pages::unavailable(&error),
        Err(error) => html(
            HttpResponse::Gone(),
            layout(
                "Enroll",
                None,
                None,
                html! {
                    p role="alert" { (error.to_string()) }
                    p { "Ask an operator with access to the control plane for a new invitation." }
                },
            ),
        ),
    }
}

/// `POST /console/enroll/{token}/options`.
pub(crate) async fn enroll_options(
    request: HttpRequest,
    console: web::Data<Console>,
    token: web::Path<String>,
) -> HttpResponse {
    if let Some(refusal) = pre_session_refusal(&request, &console) {
        return refusal;
    }
    match console
        .services
        .operator
        .console
        .registration_options(&token)
        .await
    {
        Ok(start) => begun(&start.ceremony, &start.options),
        Err(error) => refused(&error),
    }
}

/// `POST /console/enroll/{token}`: the new passkey; the link is used up.
pub(crate) async fn enroll(
    request: HttpRequest,
    console: web::Data<Console>,
    answer: Json<Answer>,
) -> HttpResponse {
    if let Some(refusal) = pre_session_refusal(&request, &console) {
        return refusal;
    }
    let credential = answer.credential.to_string();
    match console
        .services
        .operator
        .console
        .register(
            &answer.ceremony,
            &credential,
            client_address(&request, &console),
        )
        .await
    {
        Ok(_) => HttpResponse::Ok().json(serde_json::json!({
            "next": format!("{SIGN_IN_PATH}?enrolled=1")
        })),
        Err(error) => refused(&error),
    }
}
