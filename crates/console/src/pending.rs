//! The pending list: transfer intents awaiting a decision, oldest first, each with the policy's
//! verdict recomputed now. It follows every change live: a stream tells the page something
//! moved, and the page reads its rows again.

use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use app::{ConsoleSession, RecipientStanding, Review};
use domain::IntentKind;
use edge::SseSettings;
use futures_util::stream;
use maud::{html, Markup};
use ports::Wakeup;
use time::OffsetDateTime;

use crate::decisions::{counting, reject_form, waiting_after_yours, waiting_note};
use crate::guard::{signed_in, watching};
use crate::pages::{address, agent_link, amount, column_heads, html, layout, time_left, verdict};
use crate::Console;

/// The most intents one page lists.
pub(crate) const PAGE: usize = 100;

/// How often a live list checks its operator's session.
const SESSION_CHECK: Duration = Duration::from_secs(5);

/// How a live list is written: it says it is still there as often as it checks the session, and
/// lasts an hour before its browser reconnects. Its events are a few bytes each.
const LIVE_LIST: SseSettings = SseSettings {
    retry: Duration::from_millis(3000),
    keep_alive: SESSION_CHECK,
    lifetime: Duration::from_secs(60 * 60),
    buffer_bytes: 16 * 1024,
    stall: Duration::from_secs(30),
};

/// `GET /console/pending`.
pub(crate) async fn page(request: HttpRequest, console: web::Data<Console>) -> HttpResponse {
    let session = match signed_in(&request, &console).await {
        Ok(session) => session,
        Err(to_sign_in) => return to_sign_in,
    };
    match console.services.operator.decisions.pending(PAGE).await {
        Ok(reviews) => html(
            HttpResponse::Ok(),
            layout(
                "Pending",
                Some(&session),
                None,
                html! {
                    p {
                        "Transfers awaiting a decision, oldest first (at most " (PAGE) "), each "
                        "judged by the spend policy as it stands now. The list follows every "
                        "change."
                    }
                    table id="pending" {
                        (column_heads(&[
                            "Agent", "Amount", "Recipient", "Verdict now", "Approvals", "Expires in",
                            "Decision",
                        ]))
                        tbody id="pending-rows" { (rows_of(&reviews, &session)) }
                    }
                },
            ),
        ),
        Err(error) => crate::pages::unavailable(&error),
    }
}

/// `GET /console/pending/rows`: the rows alone, for the live page, which reads them by itself:
/// not the operator's activity, so an unattended page does not keep its session alive.
pub(crate) async fn rows(request: HttpRequest, console: web::Data<Console>) -> HttpResponse {
    let Some(session) = watching(&request, &console).await else {
        return HttpResponse::Unauthorized().finish();
    };
    match console.services.operator.decisions.pending(PAGE).await {
        Ok(reviews) => html(HttpResponse::Ok(), rows_of(&reviews, &session)),
        Err(error) => crate::pages::unavailable(&error),
    }
}

fn rows_of(reviews: &[Review], session: &ConsoleSession) -> Markup {
    let now = OffsetDateTime::now_utc();
    html! {
        @if reviews.is_empty() {
            tr { td colspan="7" { "Nothing awaits a decision." } }
        }
        @for review in reviews {
            (row(review, session, now))
        }
    }
}

fn row(review: &Review, session: &ConsoleSession, now: OffsetDateTime) -> Markup {
    let intent = &review.intent;
    let id = intent.id.to_string();
    html! {
        tr data-intent-id=(id) {
            td {
                (agent_link(&review.agent))
                @if !review.agent.is_active { " " span.mark.new-recipient { "deactivated" } }
            }
            td {
                (amount(&intent.amount))
                @if intent.kind == IntentKind::X402 { " " span.mark.x402 { "x402" } }
            }
            td {
                (address(&intent.recipient))
                " " (standing(review.recipient))
            }
            td { (verdict(&review.verdict)) }
            td { (counting(&review.approvals)) " of " (intent.approvals.required) }
            td { (time_left((review.expires_at - now).whole_seconds())) }
            td.decision {
                @if session.operator.role.may_decide() {
                    @match waiting_after_yours(&review.approvals, intent.approvals.required, session) {
                        Some(waiting) => (waiting_note(waiting)),
                        None => form.inline method="post" action={ "/console/intents/" (id) "/approve" } {
                            input type="hidden" name="csrf" value=(session.csrf);
                            button type="submit" { "Approve" }
                        },
                    }
                    details.reject {
                        summary { "Reject…" }
                        (reject_form(&id, session, &format!("reason-{id}")))
                    }
                }
                a href={ "/console/intents/" (id) } { "Review" }
            }
        }
    }
}

pub(crate) fn standing(standing: RecipientStanding) -> Markup {
    html! {
        @match standing {
            RecipientStanding::Allowlisted => span.mark.allowlisted { "allowlisted" },
            RecipientStanding::New => span.mark.new-recipient { "new recipient" },
            RecipientStanding::Paid => {},
        }
    }
}

/// `GET /console/pending/stream`: an event `changed` whenever an agent's intents may have
/// moved; `signed-out` once the operator's session has ended. The page opens it by itself, so it
/// does not count as the operator's activity. Each list holds one of its operator's live-list
/// places and ends, like every live stream, when the instance stops.
pub(crate) async fn stream(request: HttpRequest, console: web::Data<Console>) -> HttpResponse {
    let Some(session) = watching(&request, &console).await else {
        return HttpResponse::Ok()
            .content_type("text/event-stream")
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .body(event("signed-out"));
    };
    let Some(place) = console
        .services
        .long_lived
        .enter_live_list(session.operator.id)
    else {
        return HttpResponse::TooManyRequests()
            .insert_header((header::RETRY_AFTER, "5"))
            .finish();
    };
    let cookie = request
        .cookie(crate::guard::SESSION_COOKIE)
        .map(|cookie| cookie.value().to_owned())
        .unwrap_or_default();
    // Subscribed before the first event tells the page to read its rows: no change falls
    // between the page's first reading and the list's following.
    let follow = Follow {
        changed: console.services.operator.decisions.watch(),
        console: console.into_inner(),
        cookie,
        greeted: false,
        done: false,
    };
    drop(session);
    let frames = stream::unfold(follow, |mut follow| async move {
        let frame = follow.next().await?;
        Some((frame, follow))
    });
    let mut response = edge::sse_response(frames, LIVE_LIST, place, Arc::new(()));
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}

fn event(name: &str) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: \n\n"))
}

/// One live list: it waits for a change, checking its operator's session now and then.
struct Follow {
    console: Arc<Console>,
    /// Wakes at the next change; always subscribed before the page is told to read its rows.
    changed: Wakeup,
    cookie: String,
    /// Whether the page was told to read its rows once the list began to follow, which covers
    /// whatever changed between the page's rendering (or the last connection) and now.
    greeted: bool,
    done: bool,
}

impl Follow {
    /// The next event for the page; `None` once the operator's session has ended.
    async fn next(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        if !self.greeted {
            self.greeted = true;
            return Some(event("changed"));
        }
        loop {
            let woken = tokio::select! {
                () = &mut self.changed => {
                    self.changed = self.console.services.operator.decisions.watch();
                    true
                }
                () = tokio::time::sleep(SESSION_CHECK) => false,
            };
            // Whoever was disabled, or went idle, is told at once.
            let live = self
                .console
                .services
                .operator
                .console
                .watching(&self.cookie)
                .await;
            if !matches!(live, Ok(Some(_))) {
                self.done = true;
                return Some(event("signed-out"));
            }
            if woken {
                return Some(event("changed"));
            }
        }
    }
}
