//! One transfer intent and the decisions on it: approve (re-judged as things are now, once per
//! operator, a quorum of distinct operators above the policy's threshold) and reject (with a
//! reason). Both go through the operator services `agentctl` uses, and both are audited.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use app::{ConfirmError, ConsoleSession, Review};
use domain::{IntentId, IntentStatus, TransferIntentRecord};
use maud::{html, Markup};
use ports::TransitionError;
use serde::Deserialize;
use time::OffsetDateTime;

use crate::guard::{client_address, signed_in, signed_in_change};
use crate::pages::{amount, forbidden, html, instant, layout, time_left};
use crate::pending::{standing, verdict};
use crate::Console;

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
    let decisions = &console.services.operator.decisions;
    let intent = match decisions.show(id).await {
        Ok(intent) => intent,
        Err(TransitionError::NotFound(_)) => return crate::pages::not_found().await,
        Err(TransitionError::Store(error)) => return crate::pages::unavailable(&error),
        Err(TransitionError::Refused(_)) => return crate::pages::not_found().await,
    };
    let review = if intent.status == IntentStatus::PendingConfirmation {
        match decisions.reviews(vec![intent.clone()]).await {
            Ok(mut reviews) => reviews.pop(),
            Err(error) => return crate::pages::unavailable(&error),
        }
    } else {
        None
    };
    html(
        actix_web::HttpResponse::build(status),
        layout(
            "Transfer intent",
            Some(session),
            None,
            html! {
                @if let Some(notice) = notice { p.notice role="status" { (notice) } }
                @if let Some(refusal) = refusal { p role="alert" { (refusal) } }
                (details(&intent, review.as_ref()))
                @if intent.status == IntentStatus::PendingConfirmation && session.operator.role.may_decide() {
                    (decision_forms(&intent, session))
                }
            },
        ),
    )
}

fn details(intent: &TransferIntentRecord, review: Option<&Review>) -> Markup {
    let now = OffsetDateTime::now_utc();
    html! {
        dl data-intent-id=(intent.id.to_string()) {
            dt { "Intent" } dd { code { (intent.id.to_string()) } }
            dt { "Agent" }
            dd {
                @if let Some(review) = review {
                    (review.agent.label.as_ref().map_or("(no label)", |label| label.as_str())) " · "
                }
                code { (intent.agent_id.to_string()) }
            }
            dt { "Amount" } dd { (amount(&intent.amount)) }
            dt { "Recipient" }
            dd {
                code { (intent.recipient.to_string()) }
                @if let Some(review) = review { " " (standing(review.recipient)) }
            }
            dt { "Status" } dd { (intent.status.as_str()) }
            @if let Some(review) = review {
                dt { "Verdict now" } dd { (verdict(&review.verdict)) }
                dt { "Expires in" } dd { (time_left((review.expires_at - now).whole_seconds())) }
            }
            dt { "Approvals" } dd { (intent.approvals.received) " of " (intent.approvals.required) }
            dt { "Created" } dd { (instant(intent.created_at)) }
            @if let Some(decided_by) = &intent.decided_by {
                dt { "Last decided by" } dd { (decided_by.to_string()) }
            }
            @if let Some(reason) = &intent.failure_reason {
                dt { "Reason" } dd { (reason) }
            }
            @if let Some(hash) = &intent.tx_hash {
                dt { "Transaction" } dd { code { (hash) } }
            }
        }
    }
}

fn decision_forms(intent: &TransferIntentRecord, session: &ConsoleSession) -> Markup {
    let id = intent.id.to_string();
    html! {
        h2 { "Decide" }
        form method="post" action={ "/console/intents/" (id) "/approve" } {
            input type="hidden" name="csrf" value=(session.csrf);
            button type="submit" { "Approve" }
        }
        form method="post" action={ "/console/intents/" (id) "/reject" } {
            input type="hidden" name="csrf" value=(session.csrf);
            div.field {
                label for="reason" { "Reason" }
                input #reason type="text" name="reason" required maxlength=(MAX_REASON_CHARS) size="60";
            }
            button.danger type="submit" { "Reject" }
        }
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
    form: web::Form<DecisionForm>,
) -> HttpResponse {
    let session = match signed_in_change(&request, &console, form.csrf.as_deref()).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    if !session.operator.role.may_decide() {
        return forbidden("Your role does not approve transfers.");
    }
    let Some(intent) = intent_id(&id) else {
        return crate::pages::not_found().await;
    };
    let actor = session.actor(client_address(&request));
    match console
        .services
        .operator
        .decisions
        .confirm(intent, false, &actor)
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
    form: web::Form<DecisionForm>,
) -> HttpResponse {
    let session = match signed_in_change(&request, &console, form.csrf.as_deref()).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    if !session.operator.role.may_decide() {
        return forbidden("Your role does not reject transfers.");
    }
    let Some(intent) = intent_id(&id) else {
        return crate::pages::not_found().await;
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
    let actor = session.actor(client_address(&request));
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
        Err(TransitionError::Refused(refused)) => {
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
