//! What was decided and who did what: the history of intents no longer pending, filtered by
//! agent and status, the download of an agent's signed receipts for a range (what `agentctl
//! intents export` gives), and the audit log of every operator action, newest first.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use app::ReceiptError;
use domain::receipts::{export_csv, export_json, ExportRange};
use domain::{AgentId, AuditAction, IntentId, IntentStatus};
use maud::{html, Markup};
use ports::IntentFilter;
use serde::Deserialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::changes::changes;
use crate::guard::signed_in;
use crate::labels::Agents;
use crate::pages::{
    address_in_table, amount, column_heads, html, instant, intent_link, layout, transaction,
};
use crate::Console;

/// The most rows a page of either shows.
const ROWS: usize = 200;

#[derive(Deserialize)]
pub(crate) struct HistoryQuery {
    agent: Option<String>,
    status: Option<String>,
}

/// The statuses of a decided intent, which the history lists.
const DECIDED: [IntentStatus; 7] = [
    IntentStatus::Confirmed,
    IntentStatus::Authorized,
    IntentStatus::Submitted,
    IntentStatus::Executed,
    IntentStatus::Failed,
    IntentStatus::Rejected,
    IntentStatus::Expired,
];

/// `GET /console/history`.
pub(crate) async fn history(
    request: HttpRequest,
    console: web::Data<Console>,
    query: web::Query<HistoryQuery>,
) -> HttpResponse {
    let session = match signed_in(&request, &console).await {
        Ok(session) => session,
        Err(to_sign_in) => return to_sign_in,
    };
    let agent_text = query.agent.as_deref().map(str::trim).unwrap_or_default();
    let agent = agent_text.parse::<AgentId>().ok();
    let status = query
        .status
        .as_deref()
        .and_then(IntentStatus::parse)
        .filter(|status| DECIDED.contains(status));
    let listed = console
        .services
        .operator
        .decisions
        .list(IntentFilter {
            agent,
            status,
            decided: true,
            limit: Some(ROWS),
            ..IntentFilter::default()
        })
        .await;
    let intents = match listed {
        Ok(intents) => intents,
        Err(error) => return crate::pages::unavailable(&error),
    };
    let named = intents.iter().map(|intent| intent.agent_id).chain(agent);
    let agents = match Agents::read(&console, named).await {
        Ok(agents) => agents,
        Err(error) => return crate::pages::unavailable(&error),
    };
    html(
        HttpResponse::Ok(),
        layout(
            "History",
            Some(&session),
            None,
            html! {
                form.filters method="get" action="/console/history" {
                    div.field {
                        label for="agent" { "Agent id" }
                        input #agent type="text" name="agent" value=(agent_text) size="40";
                    }
                    div.field {
                        label for="status" { "Status" }
                        select #status name="status" {
                            option value="" selected[status.is_none()] { "any decided" }
                            @for each in DECIDED {
                                option value=(each.as_str()) selected[status == Some(each)] { (each.as_str()) }
                            }
                        }
                    }
                    div.field { button type="submit" { "Filter" } }
                }
                @if !agent_text.is_empty() && agent.is_none() {
                    p role="alert" { "That is not an agent id: every agent is listed." }
                }
                @if let Some(agent) = agent {
                    p { "The decided intents of " (agents.link(agent)) "." }
                }
                (export_form(agent_text))
                div.table-scroll { table {
                    (column_heads(&["Intent", "Agent", "Amount", "Recipient", "Outcome", "Updated"]))
                    tbody {
                        @if intents.is_empty() { tr { td colspan="6" { "No decided intent." } } }
                        @for intent in &intents {
                            @let id = intent.id.to_string();
                            tr data-intent-id=(id) {
                                td { (intent_link(intent.id)) }
                                td { (agents.link(intent.agent_id)) }
                                td { (amount(&intent.amount)) }
                                td { (address_in_table(&intent.recipient)) }
                                td.outcome {
                                    (intent.status.as_str())
                                    @if let Some(by) = &intent.decided_by { br; span.by { "by " (by.to_string()) } }
                                    @if let Some(hash) = &intent.tx_hash { br; "tx " (transaction(hash)) }
                                }
                                td { (instant(intent.updated_at)) }
                            }
                        }
                    }
                } }
            },
        ),
    )
}

/// The receipts download: an agent, the first and last days, and the format.
fn export_form(agent: &str) -> maud::Markup {
    let today = OffsetDateTime::now_utc().date().to_string();
    html! {
        details #export {
            summary { "Export receipts" }
            p { "The signed receipts of an agent's executed transfers and x402 payments, oldest first, for reconciliation. Days are in UTC; both are included." }
            form.filters method="get" action="/console/history/export" {
                div.field {
                    label for="export-agent" { "Agent id" }
                    input #export-agent type="text" name="agent" value=(agent) size="40" required;
                }
                div.field {
                    label for="export-from" { "From" }
                    input #export-from type="date" name="from" value=(today) required;
                }
                div.field {
                    label for="export-to" { "To" }
                    input #export-to type="date" name="to" value=(today) required;
                }
                div.field {
                    label for="export-format" { "Format" }
                    select #export-format name="format" {
                        option value="csv" selected { "CSV" }
                        option value="json" { "JSON" }
                    }
                }
                div.field { button type="submit" { "Download" } }
            }
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct ExportQuery {
    agent: Option<String>,
    from: Option<String>,
    to: Option<String>,
    format: Option<String>,
}

/// `GET /console/history/export`: the file `agentctl intents export` prints, as a download.
pub(crate) async fn export(
    request: HttpRequest,
    console: web::Data<Console>,
    query: web::Query<ExportQuery>,
) -> HttpResponse {
    if let Err(to_sign_in) = signed_in(&request, &console).await {
        return to_sign_in;
    }
    let Some(agent) = query
        .agent
        .as_deref()
        .and_then(|text| text.trim().parse::<AgentId>().ok())
    else {
        return crate::pages::bad_request("Give the id of the agent whose receipts to export.");
    };
    let range = match ExportRange::parse(
        query.from.as_deref().unwrap_or_default(),
        query.to.as_deref().unwrap_or_default(),
    ) {
        Ok(range) => range,
        Err(refused) => return crate::pages::bad_request(&format!("{refused}.")),
    };
    let csv = match query.format.as_deref() {
        None | Some("csv") => true,
        Some("json") => false,
        Some(_) => return crate::pages::bad_request("The format is csv or json."),
    };
    let profile = match console.services.operator.agents.show(agent).await {
        Ok(profile) => profile,
        Err(app::AgentLookupError::NotFound(_)) => return crate::pages::not_found().await,
        Err(app::AgentLookupError::Store(error)) => return crate::pages::unavailable(&error),
    };
    let receipts = match console
        .services
        .wallets
        .export_receipts(&profile, range)
        .await
    {
        Ok(receipts) => receipts,
        Err(ReceiptError::Store(error)) => return crate::pages::unavailable(&error),
        Err(ReceiptError::Chain(error)) => {
            tracing::warn!(%error, "the console could not learn the chain id");
            return crate::pages::chain_unavailable();
        }
        Err(refused @ (ReceiptError::NotProvisioned(_) | ReceiptError::TooMany)) => {
            return crate::pages::bad_request(&format!("{refused}."))
        }
        Err(failed) => {
            tracing::warn!(error = %failed, "a receipts export failed");
            return crate::pages::bad_request(&format!("The export failed: {failed}."));
        }
    };
    let (body, media_type, extension) = if csv {
        match export_csv(&receipts) {
            Ok(text) => (text, "text/csv; charset=utf-8", "csv"),
            Err(failed) => {
                return crate::pages::bad_request(&format!("The export failed: {failed}."))
            }
        }
    } else {
        (
            export_json(&receipts).to_string(),
            "application/json",
            "json",
        )
    };
    let day = |at: OffsetDateTime| at.date().to_string();
    // The last day included: the range ends before `to`.
    let last = range.to - time::Duration::NANOSECOND;
    HttpResponse::Ok()
        .content_type(media_type)
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!(
                "attachment; filename=\"receipts-{agent}-{}-to-{}.{extension}\"",
                day(range.from),
                day(last.max(range.from)),
            ),
        ))
        .body(body)
}

#[derive(Deserialize)]
pub(crate) struct AuditQuery {
    /// The last row of the page before, as `<unix nanoseconds>_<id>`.
    before: Option<String>,
}

fn cursor(at: OffsetDateTime, id: Uuid) -> String {
    format!("{}_{}", at.unix_timestamp_nanos(), id)
}

fn read_cursor(text: &str) -> Option<(OffsetDateTime, Uuid)> {
    let (nanos, id) = text.split_once('_')?;
    let at = OffsetDateTime::from_unix_timestamp_nanos(nanos.parse().ok()?).ok()?;
    Some((at, id.parse().ok()?))
}

/// `GET /console/audit`.
pub(crate) async fn audit(
    request: HttpRequest,
    console: web::Data<Console>,
    query: web::Query<AuditQuery>,
) -> HttpResponse {
    let session = match signed_in(&request, &console).await {
        Ok(session) => session,
        Err(to_sign_in) => return to_sign_in,
    };
    let before = query.before.as_deref().and_then(read_cursor);
    let rows = match console.services.operator.console.audit(before, ROWS).await {
        Ok(rows) => rows,
        Err(error) => return crate::pages::unavailable(&error),
    };
    let older = (rows.len() == ROWS)
        .then(|| rows.last().map(|(id, row)| cursor(row.at, *id)))
        .flatten();
    let named = rows
        .iter()
        .filter_map(|(_, row)| match target_of(row.target.as_deref()) {
            Some(Target::Agent(agent)) => Some(agent),
            _ => None,
        });
    let agents = match Agents::read(&console, named).await {
        Ok(agents) => agents,
        Err(error) => return crate::pages::unavailable(&error),
    };
    html(
        HttpResponse::Ok(),
        layout(
            "Audit",
            Some(&session),
            None,
            html! {
                p { "Every operator action, newest first. The log is append-only: nothing in it is ever changed or removed." }
                div.table-scroll { table {
                    (column_heads(&["Time", "Operator", "Action", "Target", "What changed, and why"]))
                    tbody {
                        @if rows.is_empty() { tr { td colspan="5" { "Nothing recorded yet." } } }
                        @for (id, row) in &rows {
                            tr data-audit-id=(id.to_string()) data-action=(row.action.as_str())
                                data-target=[row.target.as_deref()] {
                                td { (instant(row.at)) }
                                td {
                                    (row.operator)
                                    @if let Some(address) = &row.address { br; span.from { "from " code.address { (address) } } }
                                }
                                td { (action_name(row.action)) }
                                td { (target(row.target.as_deref(), &agents)) }
                                td {
                                    (changes(row.before.as_deref(), row.after.as_deref()))
                                    @if let Some(reason) = &row.reason { p.reason { "Reason: " (reason) } }
                                }
                            }
                        }
                    }
                } }
                @if let Some(older) = older {
                    p { a href={ "/console/audit?before=" (older) } { "Older actions" } }
                }
            },
        ),
    )
}

/// What an audit row's `target` names.
enum Target<'a> {
    Agent(AgentId),
    Intent(IntentId),
    Other(&'a str),
}

fn target_of(target: Option<&str>) -> Option<Target<'_>> {
    let target = target?;
    Some(match target.split_once(':') {
        Some(("agent", id)) => match id.parse() {
            Ok(agent) => Target::Agent(agent),
            Err(_) => Target::Other(target),
        },
        Some(("intent", id)) => match id.parse() {
            Ok(intent) => Target::Intent(intent),
            Err(_) => Target::Other(target),
        },
        _ => Target::Other(target),
    })
}

/// A row's target: an agent by its label, an intent by its id, both linking to their page.
fn target(target: Option<&str>, agents: &Agents) -> Markup {
    html! {
        @match target_of(target) {
            Some(Target::Agent(agent)) => (agents.link(agent)),
            Some(Target::Intent(id)) => { "intent " (intent_link(id)) },
            Some(Target::Other(other)) => code { (other) },
            None => {},
        }
    }
}

/// An action as the log's reader says it.
fn action_name(action: AuditAction) -> &'static str {
    match action {
        AuditAction::LoginFailed => "failed sign-in",
        AuditAction::PolicyChange => "policy change",
        AuditAction::TokenIssue => "token issued",
        AuditAction::TokenRevoke => "token revoked",
        AuditAction::TokenUse => "token used",
        AuditAction::KeyCreate => "key made",
        AuditAction::KeyRevoke => "key revoked",
        other => other.as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_audit_cursor_reads_back_and_nothing_else_does() {
        let at =
            OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_123_456_000).expect("valid");
        let id = Uuid::now_v7();
        assert_eq!(read_cursor(&cursor(at, id)), Some((at, id)));
        for garbage in ["", "_", "12_nope", "nope_01a2"] {
            assert_eq!(read_cursor(garbage), None, "{garbage:?}");
        }
    }
}
