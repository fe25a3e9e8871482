//! The signed-in operator's personal token for `agentctl`: what proves them on the control
//! plane, so their approval there counts toward a quorum as one here does. Only they can issue
//! it, from their own passkey session; it is shown once, on the page that issued it.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use app::{ConsoleSession, RevokeTokenError, TokenError};
use domain::OperatorToken;
use maud::{html, Markup};
use ports::TokenRecord;
use serde::Deserialize;

use crate::access::CsrfForm;
use crate::body::Form;
use crate::guard::{client_address, signed_in, signed_in_change};
use crate::pages::{html, instant, layout, shown_once};
use crate::Console;

#[derive(Deserialize)]
pub(crate) struct Shown {
    done: Option<String>,
}

fn token_page(
    session: &ConsoleSession,
    status: StatusCode,
    live: Option<TokenRecord>,
    issued: Option<&OperatorToken>,
    notice: Option<&str>,
) -> HttpResponse {
    html(
        HttpResponse::build(status),
        layout(
            "Token for agentctl",
            Some(session),
            None,
            content(session, live, issued, notice),
        ),
    )
}

fn content(
    session: &ConsoleSession,
    live: Option<TokenRecord>,
    issued: Option<&OperatorToken>,
    notice: Option<&str>,
) -> Markup {
    let name = session.operator.name.as_str();
    html! {
        @if let Some(notice) = notice { p.notice role="status" { (notice) } }
        @if !session.operator.role.may_decide() {
            p { "Viewers approve nothing: they have no token for agentctl." }
        } @else {
            p {
                "On the control plane, " code { "agentctl intents confirm" } " counts an approval "
                "as yours only with this token: without it, the approval is the control plane's "
                "one. Export it as " code { "AGENTCTL_OPERATOR_TOKEN" } " (or pass "
                code { "--operator-token" } "). Issuing a new one revokes the one before; "
                "disabling your account makes it worthless."
            }
            @if let Some(token) = issued {
                p role="status" { "Your new token, shown this once: copy it now." }
                (shown_once("operator-token", html! { code #operator-token data-operator-token { (token.expose()) } }))
                pre { "export AGENTCTL_OPERATOR_TOKEN=" (token.expose()) "\nagentctl intents confirm INTENT_ID --operator " (name) }
            }
            @match live {
                Some(live) => {
                    p {
                        "You have a token, issued " (instant(live.created_at))
                        @if let Some(used) = live.last_used_at { ", last used " (instant(used)) }
                        @else { ", never used" }
                        "."
                    }
                    form method="post" action="/console/token/revoke" {
                        input type="hidden" name="csrf" value=(session.csrf);
                        button type="submit" { "Revoke the token" }
                    }
                }
                None => p { "You have no token." },
            }
            form method="post" action="/console/token" {
                input type="hidden" name="csrf" value=(session.csrf);
                button type="submit" { "Issue a token" }
            }
        }
    }
}

/// The page as it stands for `session`'s operator, with `issued` shown once when just issued.
async fn shown(
    console: &Console,
    session: &ConsoleSession,
    issued: Option<&OperatorToken>,
    notice: Option<&str>,
) -> HttpResponse {
    match console
        .services
        .operator
        .console
        .token_of(session.operator.id)
        .await
    {
        Ok(live) => token_page(session, StatusCode::OK, live, issued, notice),
        Err(error) => crate::pages::unavailable(&error),
    }
}

/// `GET /console/token`.
pub(crate) async fn page(
    request: HttpRequest,
    console: web::Data<Console>,
    done: web::Query<Shown>,
) -> HttpResponse {
    let session = match signed_in(&request, &console).await {
        Ok(session) => session,
        Err(to_sign_in) => return to_sign_in,
    };
    let notice = (done.done.as_deref() == Some("revoked")).then_some("Your token is revoked.");
    shown(&console, &session, None, notice).await
}

/// `POST /console/token`: a new token, shown on the answer and nowhere else.
pub(crate) async fn issue(
    request: HttpRequest,
    console: web::Data<Console>,
    form: Form<CsrfForm>,
) -> HttpResponse {
    let session = match signed_in_change(&request, &console, form.csrf()).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    match console
        .services
        .operator
        .console
        .issue_token(&session, client_address(&request, &console))
        .await
    {
        Ok(token) => shown(&console, &session, Some(&token), None).await,
        Err(TokenError::Store(error)) => crate::pages::unavailable(&error),
        Err(refused) => crate::pages::forbidden(&refused.to_string()),
    }
}

/// `POST /console/token/revoke`.
pub(crate) async fn revoke(
    request: HttpRequest,
    console: web::Data<Console>,
    form: Form<CsrfForm>,
) -> HttpResponse {
    let session = match signed_in_change(&request, &console, form.csrf()).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let actor = session.actor(client_address(&request, &console));
    match console
        .services
        .operator
        .console
        .revoke_token(session.operator.name.clone(), &actor)
        .await
    {
        Ok(_) => HttpResponse::SeeOther()
            .insert_header((header::LOCATION, "/console/token?done=revoked"))
            .finish(),
        Err(RevokeTokenError::Store(error)) => crate::pages::unavailable(&error),
        Err(RevokeTokenError::NotFound(_)) => crate::pages::not_found().await,
    }
}
