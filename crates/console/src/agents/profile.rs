//! An agent's own page, where every agent the console names links: what it has (inbox, number,
//! wallet), its spend policy with what each window holds, its live keys, its latest intents, how
//! much mail it has, and an admin's actions on it. Every operator reads it (they decide on its
//! intents); only an admin acts.

use actix_web::{web, HttpRequest, HttpResponse};
use app::{ConsoleSession, KeyError, PolicyUsage, ReadMailError};
use domain::keys::AgentKeyRecord;
use domain::{AgentProfile, Direction, SpendRules, SpendWindow, TransferIntentRecord};
use maud::{html, Markup};
use ports::{IntentFilter, StoreError};

use super::keys::key_table;
use super::policy_form::usage_table;
use super::{actions, profile_named, Done};
use crate::guard::signed_in;
use crate::pages::{
    address, address_in_table, amount, column_heads, html, instant, intent_link, layout,
    window_name,
};
use crate::Console;

/// How many of the agent's latest intents the page lists.
const RECENT_INTENTS: usize = 10;

/// How many messages of each direction are counted: past it, the page says "or more".
const MAIL_COUNTED: usize = 100;

/// How many messages of one direction the inbox holds, up to `MAIL_COUNTED`.
struct Counted {
    messages: usize,
    more: bool,
}

/// The agent's mail as its page counts it.
struct Mail {
    received: Counted,
    sent: Counted,
    kept_out: u64,
}

/// `GET /console/agents/{id}`.
pub(crate) async fn page(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
    done: web::Query<Done>,
) -> HttpResponse {
    let session = match signed_in(&request, &console).await {
        Ok(session) => session,
        Err(to_sign_in) => return to_sign_in,
    };
    let profile = match profile_named(&console, &id).await {
        Ok(profile) => profile,
        Err(answer) => return answer,
    };
    let agent = profile.agent.id;
    let (usage, keys, intents, mail) = futures_util::join!(
        usage_of(&console, &profile),
        console.services.keys.live(agent),
        console.services.operator.decisions.list(IntentFilter {
            agent: Some(agent),
            limit: Some(RECENT_INTENTS),
            ..IntentFilter::default()
        }),
        mail_of(&console, &profile),
    );
    let keys = keys.map_err(|error| match error {
        KeyError::Store(error) => error,
        other => StoreError::Internal(other.to_string()),
    });
    let (usage, keys, intents, mail) = match (usage, keys, intents, mail) {
        (Ok(usage), Ok(keys), Ok(intents), Ok(mail)) => (usage, keys, intents, mail),
        (Err(error), ..) | (_, Err(error), ..) | (_, _, Err(error), _) | (.., Err(error)) => {
            return crate::pages::unavailable(&error)
        }
    };
    let notice = match done.done.as_deref() {
        Some("policy") => Some("The spend policy is saved."),
        _ => None,
    };
    let title = profile
        .agent
        .label
        .as_ref()
        .map_or("Agent", |label| label.as_str());
    html(
        HttpResponse::Ok(),
        layout(
            title,
            Some(&session),
            None,
            html! {
                @if let Some(notice) = notice { p.notice role="status" { (notice) } }
                (summary(&profile))
                (policy_section(&profile, usage.as_ref(), &session))
                (keys_section(&profile, &keys, &session))
                (intents_section(&profile, &intents))
                (mail_section(mail.as_ref()))
                @if session.operator.role.may_administer() {
                    h2 { "Actions" }
                    (actions(&profile, &session))
                }
            },
        ),
    )
}

/// The policy in force with its usage, for an agent with a wallet.
async fn usage_of(
    console: &Console,
    profile: &AgentProfile,
) -> Result<Option<PolicyUsage>, StoreError> {
    if profile.wallet.is_none() {
        return Ok(None);
    }
    match console
        .services
        .operator
        .policies
        .usage(profile.agent.id)
        .await
    {
        Ok(usage) => Ok(Some(usage)),
        Err(app::PolicyError::Store(error)) => Err(error),
        Err(_) => Ok(None),
    }
}

/// The agent's mail counted, for an agent with an inbox.
async fn mail_of(console: &Console, profile: &AgentProfile) -> Result<Option<Mail>, StoreError> {
    if profile.email_inbox.is_none() {
        return Ok(None);
    }
    let mailbox = &console.services.mail.mailbox;
    let count = |direction| async move {
        mailbox
            .inbox(profile, Some(direction), None, MAIL_COUNTED)
            .await
            .map(|page| Counted {
                messages: page.items.len(),
                more: page.next_cursor.is_some(),
            })
    };
    let (received, sent, rules) = futures_util::join!(
        count(Direction::Inbound),
        count(Direction::Outbound),
        mailbox.sender_rules(profile)
    );
    let read = |error: ReadMailError| match error {
        ReadMailError::Store(error) => error,
        other => StoreError::Internal(other.to_string()),
    };
    Ok(Some(Mail {
        received: received.map_err(read)?,
        sent: sent.map_err(read)?,
        kept_out: rules.map_err(read)?.kept_out_count,
    }))
}

fn summary(profile: &AgentProfile) -> Markup {
    let agent = &profile.agent;
    html! {
        dl data-agent-id=(agent.id.to_string()) {
            dt { "Agent" } dd { code.id { (agent.id.to_string()) } }
            dt { "State" } dd { @if agent.is_active { "active" } @else { span.verdict.refused { "deactivated" } } }
            dt { "Created" } dd { (instant(agent.created_at)) }
            dt { "Email inbox" }
            dd { @match &profile.email_inbox { Some(inbox) => code.address { (inbox.address.as_str()) }, None => "none" } }
            dt { "Phone number" }
            dd { @match &profile.phone_number { Some(number) => code.address { (number.number.as_str()) }, None => "none" } }
            dt { "Wallet" }
            dd { @match &profile.wallet { Some(wallet) => (address(&wallet.address)), None => "none" } }
        }
    }
}

/// The rules in force, each as the policy's form names it.
fn rules_shown(rules: &SpendRules) -> Markup {
    let cap = |cap: Option<domain::AtomicAmount>| {
        html! { @match cap { Some(cap) => (amount(&cap)), None => "no limit" } }
    };
    html! {
        dl.rules {
            dt { "Per transfer" } dd { (cap(rules.limits.max_per_tx)) }
            @for window in [SpendWindow::Daily, SpendWindow::Weekly, SpendWindow::Monthly] {
                dt { (window_name(window)) } dd { (cap(window.cap(rules))) }
            }
            dt { "Auto-confirm up to (per transfer)" } dd { (cap(rules.auto_confirm.max)) }
            dt { (window_name(SpendWindow::AutoConfirmDaily)) } dd { (cap(rules.auto_confirm.daily)) }
            dt { "Approvals required" }
            dd {
                @match rules.quorum.required {
                    Some(count) => {
                        (count.get()) " distinct operators"
                        @if let Some(above) = rules.quorum.above { " above " (amount(&above)) }
                    },
                    None => "one operator",
                }
            }
            dt { "Allowlist" }
            dd {
                @match rules.allowlist.addresses() {
                    Some(addresses) => { (addresses.len()) " address(es): only to them" },
                    None => "none: any recipient",
                }
            }
            dt { "x402 payments" } dd { @if rules.x402_enabled { "allowed" } @else { "turned off" } }
        }
    }
}

fn policy_section(
    profile: &AgentProfile,
    usage: Option<&PolicyUsage>,
    session: &ConsoleSession,
) -> Markup {
    let id = profile.agent.id.to_string();
    html! {
        h2 { "Spend policy and usage" }
        @match usage {
            None => { p { "No wallet: nothing to spend, no policy." } },
            Some(usage) => {
                (rules_shown(&usage.policy.rules))
                (usage_table(usage))
                @if session.operator.role.may_administer() {
                    p { a href={ "/console/agents/" (id) "/policy" } { "Change the spend policy" } }
                }
            },
        }
    }
}

fn keys_section(
    profile: &AgentProfile,
    keys: &[AgentKeyRecord],
    session: &ConsoleSession,
) -> Markup {
    let id = profile.agent.id.to_string();
    html! {
        h2 { "Live keys" }
        (key_table(&id, keys, None))
        @if session.operator.role.may_administer() {
            p { a href={ "/console/agents/" (id) "/keys" } { "Manage the keys" } }
        }
    }
}

fn intents_section(profile: &AgentProfile, intents: &[TransferIntentRecord]) -> Markup {
    let id = profile.agent.id.to_string();
    html! {
        h2 { "Latest intents" }
        @if intents.is_empty() {
            p { "None yet." }
        } @else {
            div.table-scroll { table {
                (column_heads(&["Intent", "Amount", "Recipient", "Status", "Created"]))
                tbody {
                    @for intent in intents {
                        tr data-intent-id=(intent.id.to_string()) {
                            td { (intent_link(intent.id)) }
                            td { (amount(&intent.amount)) }
                            td { (address_in_table(&intent.recipient)) }
                            td { (intent.status.as_str()) }
                            td { (instant(intent.created_at)) }
                        }
                    }
                }
            } }
        }
        p { a href={ "/console/history?agent=" (id) } { "Its decided intents in the history" } }
    }
}

fn counted(counted: &Counted) -> Markup {
    html! {
        (counted.messages) @if counted.more { " or more" }
    }
}

fn mail_section(mail: Option<&Mail>) -> Markup {
    html! {
        h2 { "Mail" }
        @match mail {
            None => { p { "No inbox." } },
            Some(mail) => dl.mail {
                dt { "Received" } dd data-mail="received" { (counted(&mail.received)) }
                dt { "Sent" } dd data-mail="sent" { (counted(&mail.sent)) }
                dt { "Kept out by its sender rules" } dd data-mail="kept-out" { (mail.kept_out) }
            },
        }
    }
}
