//! Who asks, and whether a change may be made: the session behind the console's cookie, the CSRF
//! token every change carries, and the origin it must come from.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use app::ConsoleSession;
use edge::same_secret;

use crate::pages;
use crate::Console;

/// The session's cookie: `__Host-` (this host only, every path, only over a secure channel),
/// `HttpOnly`, `SameSite=Strict`; it lives as long as the browser's session, and the server ends
/// it after 30 idle minutes.
pub const SESSION_COOKIE: &str = "__Host-console-session";

/// Before a session, the sign-in and enrollment pages' CSRF token: the page carries it, this
/// cookie too, and a change must bring both alike (double submit).
pub(crate) const PRE_SESSION_CSRF_COOKIE: &str = "__Host-console-csrf";

/// Where every request that is not signed in is sent.
pub(crate) const SIGN_IN_PATH: &str = "/console/sign-in";

pub(crate) fn console_cookie<'c>(name: &'c str, value: String) -> Cookie<'c> {
    Cookie::build(name, value)
        .path("/")
        .secure(true)
        .http_only(true)
        .same_site(SameSite::Strict)
        .finish()
}

/// A cookie the browser forgets.
pub(crate) fn removed(name: &str) -> Cookie<'_> {
    let mut cookie = console_cookie(name, String::new());
    cookie.make_removal();
    cookie
}

/// The client's address: the connection's, unless it comes from a proxy the configuration
/// trusts, whose header then names the client (`domain::TrustedProxies`); never a header
/// anyone else can write.
pub(crate) fn client_address(request: &HttpRequest, console: &Console) -> Option<String> {
    let peer = request.peer_addr()?.ip();
    let address = match &console.trusted_proxies {
        Some(proxies) => {
            let values: Vec<&str> = request
                .headers()
                .get_all(proxies.header())
                .filter_map(|value| value.to_str().ok())
                .collect();
            proxies.client_address(peer, &values)
        }
        None => peer,
    };
    Some(address.to_string())
}

/// Whether the request comes from a page of the console: its `Origin` is the console's.
pub(crate) fn same_origin(request: &HttpRequest, console: &Console) -> bool {
    request
        .headers()
        .get(header::ORIGIN)
        .and_then(|origin| origin.to_str().ok())
        .is_some_and(|origin| origin == console.origin)
}

/// The signed-in operator, or the answer that sends the browser to sign in (the cookie, if any,
/// forgotten).
pub(crate) async fn signed_in(
    request: &HttpRequest,
    console: &Console,
) -> Result<ConsoleSession, HttpResponse> {
    let Some(cookie) = request.cookie(SESSION_COOKIE) else {
        return Err(to_sign_in());
    };
    match console
        .services
        .operator
        .console
        .session(cookie.value())
        .await
    {
        Ok(Some(session)) => Ok(session),
        Ok(None) => Err(to_sign_in()),
        Err(error) => Err(pages::unavailable(&error)),
    }
}

/// The session a page left open reads under by itself, which does not count as its operator's
/// activity; none once it has ended or cannot be read.
pub(crate) async fn watching(request: &HttpRequest, console: &Console) -> Option<ConsoleSession> {
    let cookie = request.cookie(SESSION_COOKIE)?;
    console
        .services
        .operator
        .console
        .watching(cookie.value())
        .await
        .ok()
        .flatten()
}

fn to_sign_in() -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, SIGN_IN_PATH))
        .cookie(removed(SESSION_COOKIE))
        .finish()
}

/// A change a signed-in operator asks for: it must come from the console's origin and carry the
/// session's CSRF token, else it is refused (403) and changes nothing.
pub(crate) async fn signed_in_change(
    request: &HttpRequest,
    console: &Console,
    sent_csrf: Option<&str>,
) -> Result<ConsoleSession, HttpResponse> {
    let session = signed_in(request, console).await?;
    let token_matches = sent_csrf.is_some_and(|sent| same_secret(sent, &session.csrf));
    if !same_origin(request, console) || !token_matches {
        return Err(pages::forbidden(
            "This change was refused: it did not come from a page of this console.",
        ));
    }
    Ok(session)
}

/// A change asked for before any session (a sign-in, an enrollment) must come from the console's
/// origin, with the token of its page in `X-CSRF-Token` and the same in the pre-session cookie:
/// the refusal of one that does not.
pub(crate) fn pre_session_refusal(
    request: &HttpRequest,
    console: &Console,
) -> Option<HttpResponse> {
    let sent = request
        .headers()
        .get("x-csrf-token")
        .and_then(|token| token.to_str().ok());
    let kept = request.cookie(PRE_SESSION_CSRF_COOKIE);
    let matches = match (sent, kept.as_ref()) {
        (Some(sent), Some(kept)) => !sent.is_empty() && same_secret(sent, kept.value()),
        _ => false,
    };
    (!same_origin(request, console) || !matches).then(|| {
        pages::json_refusal(
            HttpResponse::Forbidden(),
            "This request was refused: it did not come from a page of this console.",
        )
    })
}
