//! What every page of the console shares: the layout with its navigation, the signed-in
//! operator, the refusals, and how amounts and times read.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, HttpResponseBuilder};
use app::ConsoleSession;
use domain::{
    format_units, AgentId, AgentRecord, AtomicAmount, EvmAddress, IntentId, OperatorRole,
    PolicyViolation, SpendWindow, U256,
};
use maud::{html, Markup, DOCTYPE};
use ports::StoreError;
use time::{OffsetDateTime, UtcOffset};

use crate::assets;
use crate::guard::signed_in;
use crate::Console;

/// USDC's decimals: every amount is shown in USDC and in atomic units.
pub(crate) const USDC_DECIMALS: u8 = 6;

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
                link rel="icon" type="image/svg+xml" href=(assets::ICON_PATH);
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

/// An instant to the second: in UTC as the page comes (right without a script), machine-readable
/// in `datetime`, and the same UTC value in `title`, which stays once the console's script has
/// written the instant in the operator's own time zone.
pub(crate) fn instant(at: OffsetDateTime) -> Markup {
    let at = at.to_offset(UtcOffset::UTC);
    let (date, clock) = (at.date(), at.time());
    let day = format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    );
    let second = format!(
        "{:02}:{:02}:{:02}",
        clock.hour(),
        clock.minute(),
        clock.second()
    );
    let utc = format!("{day} {second} UTC");
    html! { time.instant datetime={ (day) "T" (second) "Z" } title=(utc) { (utc) } }
}

/// A secret shown this once (`secret`, whose element has the id `target`), with a button that
/// copies it; the button is the script's, hidden until the script shows it.
pub(crate) fn shown_once(target: &str, secret: Markup) -> Markup {
    html! {
        div.secret {
            p.key { (secret) }
            p.copy {
                button.secondary type="button" data-copy=(target) hidden { "Copy" }
                " " span.copied role="status" {}
            }
        }
    }
}

/// The name of a spend window, as an operator reads it.
pub(crate) fn window_name(window: SpendWindow) -> &'static str {
    match window {
        SpendWindow::Daily => "Spending, rolling 24 h",
        SpendWindow::Weekly => "Spending, rolling 7 days",
        SpendWindow::Monthly => "Spending, rolling 30 days",
        SpendWindow::AutoConfirmDaily => "Auto-confirm, rolling 24 h",
    }
}

/// The path of an agent's own page.
pub(crate) fn agent_path(id: AgentId) -> String {
    format!("/console/agents/{id}")
}

/// An agent as every page names it: its label (its id where it has none), linking to its page.
pub(crate) fn agent_link(agent: &AgentRecord) -> Markup {
    agent_link_of(agent.id, agent.label.as_ref().map(|label| label.as_str()))
}

/// `agent_link` for an agent known by its id and label alone.
pub(crate) fn agent_link_of(id: AgentId, label: Option<&str>) -> Markup {
    html! {
        a.agent href=(agent_path(id)) data-agent-link=(id.to_string()) title={ "agent " (id.to_string()) } {
            @match label {
                Some(label) => (label),
                None => code.id { (id.to_string()) },
            }
        }
    }
}

/// An intent in a table: a link to its page, named by the end of its id (the random part of a
/// UUIDv7; its start is the time, which its neighbours share), the whole id in `title`.
pub(crate) fn intent_link(id: IntentId) -> Markup {
    let full = id.to_string();
    html! {
        a.intent href={ "/console/intents/" (full) } title={ "intent " (full) } {
            code.id { "…" (tail(&full, 12)) }
        }
    }
}

/// A transaction's hash in a table: its start and end, the whole hash in `title`.
pub(crate) fn transaction(hash: &str) -> Markup {
    let start: String = hash.chars().take(10).collect();
    html! { code.hash title=(hash) { (start) "…" (tail(hash, 8)) } }
}

/// The last `count` characters of `text` (all of it when shorter).
fn tail(text: &str, count: usize) -> &str {
    let skip = text.chars().count().saturating_sub(count);
    text.char_indices()
        .nth(skip)
        .map_or(text, |(start, _)| &text[start..])
}

/// An address on the chain, never broken across lines.
pub(crate) fn address(address: &EvmAddress) -> Markup {
    html! { code.address { (address.to_string()) } }
}

/// An address in a table of what was decided: its start and end, the whole address in `title`
/// (where a decision is taken, it is shown whole).
pub(crate) fn address_in_table(address: &EvmAddress) -> Markup {
    let full = address.to_string();
    let start: String = full.chars().take(8).collect();
    html! { code.address title=(full) { (start) "…" (tail(&full, 6)) } }
}

/// The spend policy's verdict: allowed, or the rule that refuses with what it allows, amounts in
/// USDC and windows by their names.
pub(crate) fn verdict(verdict: &Result<domain::Admitted, PolicyViolation>) -> Markup {
    html! {
        @match verdict {
            Ok(_) => span.verdict.allowed { "allowed" },
            Err(violation) => span.verdict.refused data-rule=(violation.rule()) {
                "refused: " (violation_said(violation))
            },
        }
    }
}

/// A violation of the spend policy in the console's words.
pub(crate) fn violation_said(violation: &PolicyViolation) -> Markup {
    html! {
        @match violation {
            PolicyViolation::RecipientNotAllowlisted { recipient } => {
                "the recipient " (address(recipient)) " is not on the allowlist"
            },
            PolicyViolation::ExceedsPerTransactionMax { amount: asked, max } => {
                (amount(asked)) " is over the cap per transfer of " (amount(max))
            },
            PolicyViolation::ExceedsRecipientPerTransactionMax { amount: asked, max } => {
                (amount(asked)) " is over this recipient's cap per transfer of " (amount(max))
            },
            PolicyViolation::ExceedsWindowMax { window, amount: asked, max, available } => {
                (amount(asked)) " is over the cap of " strong { (window_name(*window)) } " ("
                (amount(max)) "): " (units(*available)) " is left in it"
            },
            PolicyViolation::ExceedsRecipientDailyMax { amount: asked, max, available } => {
                (amount(asked)) " is over this recipient's cap of " strong { "Spending, rolling 24 h" }
                " (" (amount(max)) "): " (units(*available)) " is left to it"
            },
            PolicyViolation::X402Disabled => "x402 payments are turned off for this wallet",
        }
    }
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
    fn an_intent_and_a_transaction_in_a_table_are_named_by_their_distinct_part() {
        let id: IntentId = "01a22c06-cb51-7241-815b-2efa15904d1a"
            .parse()
            .expect("valid");
        let link = intent_link(id).into_string();
        assert!(link.contains(">…2efa15904d1a<"), "{link}");
        assert!(
            link.contains("title=\"intent 01a22c06-cb51-7241-815b-2efa15904d1a\""),
            "{link}"
        );
        let hash = format!("0x{}", "ab".repeat(32));
        let shown = transaction(&hash).into_string();
        assert!(shown.contains(">0xabababab…abababab<"), "{shown}");
        assert_eq!(tail("short", 12), "short");
    }

    #[test]
    fn every_window_has_a_name_of_its_own() {
        let names: Vec<&str> = SpendWindow::ALL.into_iter().map(window_name).collect();
        assert_eq!(
            names,
            [
                "Spending, rolling 24 h",
                "Spending, rolling 7 days",
                "Spending, rolling 30 days",
                "Auto-confirm, rolling 24 h"
            ]
        );
    }

    #[test]
    fn an_instant_reads_in_utc_to_the_second_without_a_script() {
        let at = OffsetDateTime::from_unix_timestamp_nanos(1_764_581_647_900_000_000)
            .expect("valid")
            .to_offset(UtcOffset::from_hms(5, 30, 0).expect("valid"));
        assert_eq!(
            instant(at).into_string(),
            "<time class=\"instant\" datetime=\"2025-12-01T09:34:07Z\" \
             title=\"2025-12-01 09:34:07 UTC\">2025-12-01 09:34:07 UTC</time>"
        );
    }

    #[test]
    fn a_refusal_names_its_window_and_its_amounts_in_usdc() {
        let said = violation_said(&PolicyViolation::ExceedsWindowMax {
            window: SpendWindow::AutoConfirmDaily,
            amount: AtomicAmount::parse("6000000").expect("valid"),
            max: AtomicAmount::parse("5000000").expect("valid"),
            available: U256::from(250_000u64),
        })
        .into_string();
        assert!(said.contains("Auto-confirm, rolling 24 h"), "{said}");
        assert!(
            said.contains("6 USDC") && said.contains("0.25 USDC"),
            "{said}"
        );
    }

    #[test]
    fn an_amount_reads_in_usdc_and_atomic_units() {
        let shown = amount(&AtomicAmount::parse("10500000").expect("valid")).into_string();
        assert!(shown.contains("10.5 USDC"), "{shown}");
        assert!(shown.contains("(10500000 atomic)"), "{shown}");
    }
}
