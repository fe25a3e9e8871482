//! One transfer intent and the decisions on it: approve (re-judged as things are now, once per
//! operator, a quorum of distinct operators above the policy's threshold) and reject (with a
//! reason). Both go through the operator services `agentctl` uses, and both are audited.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use app::{BalanceCheck, ConfirmError, ConsoleSession, Inspection};
use domain::{AuditRecord, IntentId, IntentStatus, TransferIntentRecord};
use maud::{html, Markup};
use ports::{IntentApproval, TransitionError};
use serde::Deserialize;
use time::OffsetDateTime;

use crate::body::Form;
use crate::changes::changes;
use crate::guard::{client_address, signed_in, signed_in_change};
use crate::labels::Agents;
use crate::pages::{
    address, amount, column_heads, forbidden, html, instant, intent_link, layout, time_left, units,
    verdict,
};
use crate::pending::standing;
use crate::Console;

/// How many of the decisions on an intent its page shows, newest first.
const DECISIONS_SHOWN: usize = 50;

/// The longest reason a rejection keeps.
const MAX_REASON_CHARS: usize = 500;

#[derive(Deserialize)]
pub(crate) struct DecisionForm {
    csrf: Option<String>,
    reason: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct Shown {
    done: Option<String>,
}

fn intent_id(id: &str) -> Option<IntentId> {
    id.parse().ok()
}

/// A decision on one intent: the deciding operator's session and the intent's id, or the
/// refusal (`not_decider` for a role that does not decide; "not found" for an id that names no
/// intent).
async fn decision_change(
    request: &HttpRequest,
    console: &Console,
    id: &str,
    csrf: Option<&str>,
    not_decider: &str,
) -> Result<(ConsoleSession, IntentId), HttpResponse> {
    let session = signed_in_change(request, console, csrf).await?;
    if !session.operator.role.may_decide() {
        return Err(forbidden(not_decider));
    }
    match intent_id(id) {
        Some(intent) => Ok((session, intent)),
        None => Err(crate::pages::not_found().await),
    }
}

/// `GET /console/intents/{id}`.
pub(crate) async fn intent_page(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
    shown: web::Query<Shown>,
) -> HttpResponse {
    let session = match signed_in(&request, &console).await {
        Ok(session) => session,
        Err(to_sign_in) => return to_sign_in,
    };
    let notice = match shown.done.as_deref() {
        Some("approved") => Some("Your approval is recorded."),
        Some("confirmed") => Some("Approved: the transfer is confirmed and goes to execution."),
        Some("rejected") => Some("Rejected: the transfer will not be made."),
        _ => None,
    };
    render(&console, &session, &id, StatusCode::OK, notice, None).await
}

/// The intent's page, with a notice of what was done or why it was refused.
async fn render(
    console: &Console,
    session: &ConsoleSession,
    id: &str,
    status: StatusCode,
    notice: Option<&str>,
    refusal: Option<&str>,
) -> HttpResponse {
    let Some(id) = intent_id(id) else {
        return crate::pages::not_found().await;
    };
    let operator = &console.services.operator;
    let (inspection, decisions) = futures_util::join!(
        operator.decisions.inspect(id),
        operator.console.decisions_on(id, DECISIONS_SHOWN)
    );
    let agents = match &inspection {
        Ok(inspection) => Agents::read(console, [inspection.intent.agent_id]).await,
        Err(_) => Ok(Agents::default()),
    };
    let inspection = match inspection {
        Ok(inspection) => inspection,
        Err(TransitionError::Store(error)) => return crate::pages::unavailable(&error),
        Err(_) => return crate::pages::not_found().await,
    };
    let (decisions, agents) = match (decisions, agents) {
        (Ok(decisions), Ok(agents)) => (decisions, agents),
        (Err(error), _) | (_, Err(error)) => return crate::pages::unavailable(&error),
    };
    let intent = &inspection.intent;
    html(
        actix_web::HttpResponse::build(status),
        layout(
            "Transfer intent",
            Some(session),
            None,
            html! {
                @if let Some(notice) = notice { p.notice role="status" { (notice) } }
                @if let Some(refusal) = refusal { p role="alert" { (refusal) } }
                (details(&inspection, &agents))
                @if intent.status == IntentStatus::PendingConfirmation && session.operator.role.may_decide() {
                    (decision_forms(intent, &inspection.approvals, session))
                }
                h2 { "Decision history" }
                (decision_history(&decisions))
                h2 { "The agent's latest intents to this recipient" }
                (to_same_recipient(&inspection.to_same_recipient))
            },
        ),
    )
}

fn details(inspection: &Inspection, agents: &Agents) -> Markup {
    let now = OffsetDateTime::now_utc();
    let intent = &inspection.intent;
    let review = inspection.review.as_ref();
    html! {
        dl data-intent-id=(intent.id.to_string()) {
            dt { "Intent" } dd { code.id { (intent.id.to_string()) } }
            dt { "Agent" }
            dd { (agents.link(intent.agent_id)) }
            dt { "Amount" } dd { (amount(&intent.amount)) }
            @if let Some(payment) = &intent.x402 {
                dt { "Pays for" }
                dd.x402 {
                    "an x402 payment of "
                    @match &payment.resource.resource_url {
                        Some(url) => code { (url) },
                        None => "a resource it did not name",
                    }
                    " on " code { (payment.resource.network) }
                }
            }
            dt { "Recipient" }
            dd {
                (address(&intent.recipient))
                @if let Some(review) = review { " " (standing(review.recipient)) }
            }
            dt { "Status" } dd { (intent.status.as_str()) }
            dt { "Verdict at creation" } dd { (admitted_as(intent.admitted_as())) }
            @if let Some(review) = review {
                dt { "Verdict now" } dd { (verdict(&review.verdict)) }
                dt { "Expires in" } dd { (time_left((review.expires_at - now).whole_seconds())) }
            }
            dt { "Wallet balance" }
            dd {
                @match &inspection.balance {
                    Ok(balance) => (units(*balance)),
                    Err(error) => span.verdict.refused { "cannot be read from the chain now: " (error.to_string()) },
                }
            }
            dt { "Approvals" }
            dd {
                (approvals_counted(inspection)) " of " (intent.approvals.required)
                @if !inspection.approvals.is_empty() {
                    ul.approvals {
                        @for approval in &inspection.approvals {
                            li data-approver=(approval.approver.to_string()) data-counts=(approval.counts) {
                                (approval.approver.to_string()) ", " (instant(approval.approved_at))
                                @if !approval.counts {
                                    " · " span.verdict.refused {
                                        "does not count: its operator was disabled since, or is no operator of this console"
                                    }
                                }
                            }
                        }
                    }
                }
            }
            dt { "Created" } dd { (instant(intent.created_at)) }
            @if let Some(key) = intent.key_id {
                dt { "Asked with the key" } dd { code data-key-id=(key.to_string()) { (key.to_string()) } }
            }
            @if let Some(decided_by) = &intent.decided_by {
                dt { "Last decided by" } dd { (decided_by.to_string()) }
            }
            @if let Some(reason) = &intent.failure_reason {
                dt { "Reason" } dd { (reason) }
            }
            @if let Some(hash) = &intent.tx_hash {
                dt { "Transaction" } dd { code.hash { (hash) } }
            }
        }
    }
}

/// The approvals an intent has toward its quorum: while it is pending, those that count now
/// (one of an operator disabled since does not, and is not counted at the next approval);
/// once decided, those it was decided with.
fn approvals_counted(inspection: &Inspection) -> usize {
    if inspection.intent.status == IntentStatus::PendingConfirmation {
        counting(&inspection.approvals)
    } else {
        usize::from(inspection.intent.approvals.received)
    }
}

/// The spend policy's verdict when the intent was created, as `POST /v1/wallet/check` gives
/// one: every intent there is, it allowed; `would_be` is where it put it.
fn admitted_as(status: IntentStatus) -> Markup {
    html! {
        span.verdict.allowed { "allowed" }
        @if status == IntentStatus::Confirmed {
            ", confirmed by the policy's auto-confirm tier"
        } @else {
            ", to await operators' approval"
        }
    }
}

fn decision_history(decisions: &[AuditRecord]) -> Markup {
    html! {
        @if decisions.is_empty() {
            p { "No operator has decided on it yet." }
        } @else {
            div.table-scroll { table {
                (column_heads(&["Time", "Operator", "Action", "What changed", "Reason"]))
                tbody {
                    @for decision in decisions {
                        tr data-action=(decision.action.as_str()) {
                            td { (instant(decision.at)) }
                            td { (decision.operator) }
                            td { (decision.action.as_str()) }
                            td { (changes(decision.before.as_deref(), decision.after.as_deref())) }
                            td { @if let Some(reason) = &decision.reason { (reason) } }
                        }
                    }
                }
            } }
        }
    }
}

fn to_same_recipient(intents: &[TransferIntentRecord]) -> Markup {
    html! {
        @if intents.is_empty() {
            p { "None: this is the agent's first intent to this recipient." }
        } @else {
            div.table-scroll { table {
                (column_heads(&["Intent", "Amount", "Status", "Created"]))
                tbody {
                    @for intent in intents {
                        @let id = intent.id.to_string();
                        tr data-intent-id=(id) {
                            td { (intent_link(intent.id)) }
                            td { (amount(&intent.amount)) }
                            td { (intent.status.as_str()) }
                            td { (instant(intent.created_at)) }
                        }
                    }
                }
            } }
        }
    }
}

/// The approvals that count toward the quorum now: one of an operator disabled since does not.
pub(crate) fn counting(approvals: &[IntentApproval]) -> usize {
    approvals.iter().filter(|approval| approval.counts).count()
}

/// How many more approvals the intent awaits once the signed-in operator's is in; `None` while
/// theirs is not.
pub(crate) fn waiting_after_yours(
    approvals: &[IntentApproval],
    required: u8,
    session: &ConsoleSession,
) -> Option<usize> {
    let yours = session.operator.principal();
    approvals
        .iter()
        .any(|approval| approval.counts && approval.approver == yours)
        .then(|| usize::from(required).saturating_sub(counting(approvals)))
}

/// What an operator who approved sees instead of the Approve button: a second approval of theirs
/// would not count.
pub(crate) fn waiting_note(waiting: usize) -> Markup {
    html! {
        p.quorum-wait role="status" data-waiting-for=(waiting) {
            "You approved; waiting for " (waiting) " more "
            @if waiting == 1 { "approval" } @else { "approvals" }
            " by other operators."
        }
    }
}

/// The rejection's form: a reason, required, in the field `input_id` (one per intent where a
/// page shows several).
pub(crate) fn reject_form(id: &str, session: &ConsoleSession, input_id: &str) -> Markup {
    html! {
        form.reject method="post" action={ "/console/intents/" (id) "/reject" } {
            input type="hidden" name="csrf" value=(session.csrf);
            div.field {
                label for=(input_id) { "Reason" }
                input id=(input_id) type="text" name="reason" required maxlength=(MAX_REASON_CHARS) size="40";
            }
            button.danger type="submit" { "Reject" }
        }
    }
}

fn decision_forms(
    intent: &TransferIntentRecord,
    approvals: &[IntentApproval],
    session: &ConsoleSession,
) -> Markup {
    let id = intent.id.to_string();
    html! {
        h2 { "Decide" }
        @match waiting_after_yours(approvals, intent.approvals.required, session) {
            Some(waiting) => (waiting_note(waiting)),
            None => form method="post" action={ "/console/intents/" (id) "/approve" } {
                input type="hidden" name="csrf" value=(session.csrf);
                button type="submit" { "Approve" }
            },
        }
        (reject_form(&id, session, "reason"))
    }
}

fn back_to(id: &str, done: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((
            header::LOCATION,
            format!("/console/intents/{id}?done={done}"),
        ))
        .finish()
}

/// `POST /console/intents/{id}/approve`.
pub(crate) async fn approve(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
    form: Form<DecisionForm>,
) -> HttpResponse {
    let (session, intent) = match decision_change(
        &request,
        &console,
        &id,
        form.csrf.as_deref(),
        "Your role does not approve transfers.",
    )
    .await
    {
        Ok(deciding) => deciding,
        Err(refused) => return refused,
    };
    let actor = session.actor(client_address(&request, &console));
    match console
        .services
        .operator
        .decisions
        .confirm(intent, false, BalanceCheck::Required, &actor)
        .await
    {
        Ok(confirmation) => {
            let done = if confirmation.intent.status == IntentStatus::Confirmed {
                "confirmed"
            } else {
                "approved"
            };
            back_to(&id, done)
        }
        Err(ConfirmError::Store(error)) => crate::pages::unavailable(&error),
        Err(ConfirmError::NotFound(_)) => crate::pages::not_found().await,
        Err(refused) => {
            let why = format!("Not approved: {refused}");
            render(
                &console,
                &session,
                &id,
                StatusCode::CONFLICT,
                None,
                Some(&why),
            )
            .await
        }
    }
}

/// `POST /console/intents/{id}/reject`: a reason is required.
pub(crate) async fn reject(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
    form: Form<DecisionForm>,
) -> HttpResponse {
    let (session, intent) = match decision_change(
        &request,
        &console,
        &id,
        form.csrf.as_deref(),
        "Your role does not reject transfers.",
    )
    .await
    {
        Ok(deciding) => deciding,
        Err(refused) => return refused,
    };
    let reason = form
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|reason| !reason.is_empty());
    let Some(reason) = reason else {
        return render(
            &console,
            &session,
            &id,
            StatusCode::UNPROCESSABLE_ENTITY,
            None,
            Some("Not rejected: say why in the Reason field."),
        )
        .await;
    };
    if reason.chars().count() > MAX_REASON_CHARS || reason.chars().any(char::is_control) {
        return render(
            &console,
            &session,
            &id,
            StatusCode::UNPROCESSABLE_ENTITY,
            None,
            Some("Not rejected: the reason must be one line of at most 500 characters."),
        )
        .await;
    }
    let actor = session.actor(client_address(&request, &console));
    match console
        .services
        .operator
        .decisions
        .reject(intent, Some(reason.to_owned()), &actor)
        .await
    {
        Ok(_) => back_to(&id, "rejected"),
        Err(TransitionError::Store(error)) => crate::pages::unavailable(&error),
        Err(TransitionError::NotFound(_)) => crate::pages::not_found().await,
        Err(refused @ (TransitionError::Judged(_) | TransitionError::Refused(_))) => {
            let why = format!("Not rejected: {refused}");
            render(
                &console,
                &session,
                &id,
                StatusCode::CONFLICT,
                None,
                Some(&why),
            )
            .await
        }
    }
}
