//! What every page of the console shares: the layout with its navigation, the signed-in
//! operator, the refusals, and how amounts and times read.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, HttpResponseBuilder};
use app::ConsoleSession;
use domain::{format_units, AtomicAmount, OperatorRole, U256};
use maud::{html, Markup, DOCTYPE};
use ports::StoreError;
use time::OffsetDateTime;

use crate::assets;
use crate::guard::signed_in;
use crate::Console;

/// USDC's decimals: every amount is shown in USDC and in atomic units.
const USDC_DECIMALS: u8 = 6;

/// An HTML answer of `status`.
pub(crate) fn html(mut response: HttpResponseBuilder, page: Markup) -> HttpResponse {
    response
        .content_type("text/html; charset=utf-8")
        .body(page.into_string())
}

/// The page around `content`, for `session`'s operator when signed in. `csrf` goes into a meta
/// tag for the script's requests before a session.
pub(crate) fn layout(
    title: &str,
    session: Option<&ConsoleSession>,
    csrf: Option<&str>,
    content: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(token) = csrf.or(session.map(|session| session.csrf.as_str())) {
                    meta name="csrf-token" content=(token);
                }
                title { (title) " · agent-runtime console" }
                link rel="stylesheet" href=(assets::STYLE_PATH);
                script src=(assets::SCRIPT_PATH) defer {}
            }
            body {
                header {
                    p.brand { a href="/console" { "agent-runtime console" } }
                    @if let Some(session) = session {
                        nav aria-label="Console" {
                            ul {
                                li { a href="/console/pending" { "Pending" } }
                                li { a href="/console/history" { "History" } }
                                @if session.operator.role.may_administer() {
                                    li { a href="/console/agents" { "Agents" } }
                                }
                                li { a href="/console/audit" { "Audit" } }
                                li { a href="/console/token" { "Token for agentctl" } }
                            }
                        }
                        form.sign-out method="post" action="/console/sign-out" {
                            span { "Signed in as " strong { (session.operator.name.as_str()) } " (" (role_name(session.operator.role)) ")" }
                            input type="hidden" name="csrf" value=(session.csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main id="main" {
                    h1 { (title) }
                    (content)
                }
            }
        }
    }
}

pub(crate) fn role_name(role: OperatorRole) -> &'static str {
    role.as_str()
}

/// `/console`: the pending list once signed in, else the sign-in page.
pub(crate) async fn home(request: HttpRequest, console: web::Data<Console>) -> HttpResponse {
    match signed_in(&request, &console).await {
        Ok(_) => HttpResponse::SeeOther()
            .insert_header((header::LOCATION, "/console/pending"))
            .finish(),
        Err(to_sign_in) => to_sign_in,
    }
}

fn refusal(status: StatusCode, title: &str, message: &str) -> HttpResponse {
    html(
        HttpResponse::build(status),
        layout(
            title,
            None,
            None,
            html! {
                p role="alert" { (message) }
                p { a href="/console" { "Back to the console" } }
            },
        ),
    )
}

pub(crate) async fn not_found() -> HttpResponse {
    refusal(
        StatusCode::NOT_FOUND,
        "Not found",
        "The console has no such page.",
    )
}

pub(crate) fn bad_request(message: &str) -> HttpResponse {
    refusal(StatusCode::BAD_REQUEST, "Refused", message)
}

pub(crate) fn forbidden(message: &str) -> HttpResponse {
    refusal(StatusCode::FORBIDDEN, "Refused", message)
}

/// A change whose form cannot be read carries no CSRF token that could be checked: no page of
/// the console sends one, so it is refused as a change from elsewhere is (403).
pub(crate) fn unreadable_form(why: &str) -> HttpResponse {
    forbidden(&format!(
        "This change was refused: it did not come from a page of this console (its form could \
         not be read: {why})."
    ))
}

pub(crate) fn unavailable(error: &StoreError) -> HttpResponse {
    tracing::warn!(%error, "the console could not reach the database");
    out_of_reach("The console cannot reach its database right now: try again in a moment.")
}

pub(crate) fn chain_unavailable() -> HttpResponse {
    out_of_reach("The console cannot reach the chain node right now: try again in a moment.")
}

/// A 503 page, with the wait the API's 503s ask for.
fn out_of_reach(message: &str) -> HttpResponse {
    let mut response = refusal(StatusCode::SERVICE_UNAVAILABLE, "Unavailable", message);
    response.headers_mut().insert(
        header::RETRY_AFTER,
        header::HeaderValue::from(edge::UNAVAILABLE_RETRY_AFTER.as_secs()),
    );
    response
}

/// A refusal to a request of the console's script, as JSON it shows.
pub(crate) fn json_refusal(mut response: HttpResponseBuilder, detail: &str) -> HttpResponse {
    response.json(serde_json::json!({ "detail": detail }))
}

/// A table's head: one column header per name.
pub(crate) fn column_heads(names: &[&str]) -> Markup {
    html! { thead { tr { @for name in names { th scope="col" { (name) } } } } }
}

/// An amount as the console shows it: in USDC, then in atomic units.
pub(crate) fn amount(value: &AtomicAmount) -> Markup {
    units(value.value())
}

/// Atomic units of USDC (a balance may be zero, which no amount is), shown as amounts are.
pub(crate) fn units(value: U256) -> Markup {
    html! {
        span.amount {
            (format_units(value, USDC_DECIMALS)) " USDC"
            span.atomic { " (" (value.to_string()) " atomic)" }
        }
    }
}

/// An instant, machine-readable in `datetime` and read as UTC.
pub(crate) fn instant(at: OffsetDateTime) -> Markup {
    let text = at
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    html! { time datetime=(text) { (text) } }
}

/// A span of time left, in minutes and hours as a person reads it.
pub(crate) fn time_left(seconds: i64) -> String {
    match seconds {
        ..=0 => "expired".to_owned(),
        1..=59 => format!("{seconds} s"),
        60..=3599 => format!("{} min", seconds / 60),
        _ => format!("{} h {} min", seconds / 3600, (seconds % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_reads_in_the_largest_units_that_fit() {
        assert_eq!(
            [-5, 0, 42, 61, 3599, 3600 + 125].map(time_left),
            ["expired", "expired", "42 s", "1 min", "59 min", "1 h 2 min"]
        );
    }

    #[test]
    fn an_amount_reads_in_usdc_and_atomic_units() {
        let shown = amount(&AtomicAmount::parse("10500000").expect("valid")).into_string();
        assert!(shown.contains("10.5 USDC"), "{shown}");
        assert!(shown.contains("(10500000 atomic)"), "{shown}");
    }
}
