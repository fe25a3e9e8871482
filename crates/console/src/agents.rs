//! Agents, for admins: the list, creation with any of an inbox, a number and a wallet (the key
//! shown once, on that page only), deactivation, a new key (shown once), and the spend policy's
//! form with every field of policy.md. Each action goes through the operator services
//! `agentctl` uses and is audited.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use app::{
    AgentLookupError, ConsoleSession, CreateAgent, CreateAgentError, IssuedKey, PolicyError,
    PolicyUsage,
};
use domain::{
    format_units, AgentId, AgentProfile, Allowlist, AllowlistChange, ApprovalCount, AtomicAmount,
    EvmAddress, Label, PolicyChange, RecipientLimit, RecipientLimitsChange, SpendRules,
};
use maud::{html, Markup};
use serde::Deserialize;

use crate::body::Form;
use crate::guard::{client_address, signed_in, signed_in_change};
use crate::pages::{column_heads, forbidden, html, layout};
use crate::Console;

#[derive(Deserialize)]
pub(crate) struct Done {
    done: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct CreateForm {
    csrf: Option<String>,
    label: Option<String>,
    inbox: Option<String>,
    number: Option<String>,
    wallet: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct CsrfOnly {
    csrf: Option<String>,
}

/// The spend policy as its form sends it: every field, empty for "not configured".
#[derive(Deserialize, Default)]
pub(crate) struct PolicyForm {
    csrf: Option<String>,
    max_per_tx: Option<String>,
    max_daily: Option<String>,
    max_weekly: Option<String>,
    max_monthly: Option<String>,
    auto_confirm_max: Option<String>,
    auto_confirm_daily: Option<String>,
    approvals_required: Option<String>,
    approvals_above: Option<String>,
    allowlist_on: Option<String>,
    allowlist: Option<String>,
    recipient_limits: Option<String>,
}

/// An admin's session, or the refusal for any other role.
async fn admin(request: &HttpRequest, console: &Console) -> Result<ConsoleSession, HttpResponse> {
    let session = signed_in(request, console).await?;
    if !session.operator.role.may_administer() {
        return Err(forbidden("Only an admin manages agents."));
    }
    Ok(session)
}

/// An admin's change, with its CSRF token and origin checked.
async fn admin_change(
    request: &HttpRequest,
    console: &Console,
    csrf: Option<&str>,
) -> Result<ConsoleSession, HttpResponse> {
    let session = signed_in_change(request, console, csrf).await?;
    if !session.operator.role.may_administer() {
        return Err(forbidden("Only an admin manages agents."));
    }
    Ok(session)
}

fn label_of(profile: &AgentProfile) -> &str {
    profile
        .agent
        .label
        .as_ref()
        .map_or("(no label)", |label| label.as_str())
}

/// `GET /console/agents`.
pub(crate) async fn list(
    request: HttpRequest,
    console: web::Data<Console>,
    done: web::Query<Done>,
) -> HttpResponse {
    let session = match admin(&request, &console).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let notice = match done.done.as_deref() {
        Some("deactivated") => Some("The agent is deactivated: its key no longer works."),
        Some("policy") => Some("The spend policy is saved."),
        _ => None,
    };
    match console.services.operator.agents.list().await {
        Ok(agents) => html(
            HttpResponse::Ok(),
            layout(
                "Agents",
                Some(&session),
                None,
                html! {
                    @if let Some(notice) = notice { p.notice role="status" { (notice) } }
                    (create_form(&session))
                    h2 { "Every agent" }
                    (agent_table(&agents, &session))
                },
            ),
        ),
        Err(error) => crate::pages::unavailable(&error),
    }
}

fn create_form(session: &ConsoleSession) -> Markup {
    html! {
        h2 { "New agent" }
        form method="post" action="/console/agents" {
            input type="hidden" name="csrf" value=(session.csrf);
            div.field {
                label for="label" { "Label" }
                input #label type="text" name="label" maxlength=(domain::MAX_LABEL_CHARS) size="40";
            }
            fieldset {
                legend { "Resources" }
                div { input #inbox type="checkbox" name="inbox" value="on"; " " label.inline-label for="inbox" { "Email inbox" } }
                div { input #number type="checkbox" name="number" value="on"; " " label.inline-label for="number" { "Phone number" } }
                div { input #wallet type="checkbox" name="wallet" value="on"; " " label.inline-label for="wallet" { "Wallet" } }
            }
            button type="submit" { "Create agent" }
        }
    }
}

fn agent_table(agents: &[AgentProfile], session: &ConsoleSession) -> Markup {
    html! {
        table {
            (column_heads(&["Agent", "State", "Inbox", "Number", "Wallet", "Actions"]))
            tbody {
                @if agents.is_empty() { tr { td colspan="6" { "No agent yet." } } }
                @for profile in agents {
                    @let id = profile.agent.id.to_string();
                    tr data-agent-id=(id) {
                        td { (label_of(profile)) br; code { (id) } }
                        td { @if profile.agent.is_active { "active" } @else { "deactivated" } }
                        td { @if let Some(inbox) = &profile.email_inbox { code { (inbox.address.as_str()) } } }
                        td { @if let Some(number) = &profile.phone_number { code { (number.number.as_str()) } } }
                        td {
                            @if let Some(wallet) = &profile.wallet {
                                code { (wallet.address.to_string()) } br;
                                a href={ "/console/agents/" (id) "/policy" } { "Spend policy" }
                            }
                        }
                        td {
                            @if profile.agent.is_active {
                                form.inline method="post" action={ "/console/agents/" (id) "/rotate" } {
                                    input type="hidden" name="csrf" value=(session.csrf);
                                    button.secondary type="submit" { "Rotate key" }
                                }
                                " "
                                form.inline method="post" action={ "/console/agents/" (id) "/deactivate" } {
                                    input type="hidden" name="csrf" value=(session.csrf);
                                    button.danger type="submit" { "Deactivate" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The page that shows an agent's key, this once.
fn key_page(session: &ConsoleSession, title: &str, issued: &IssuedKey) -> HttpResponse {
    html(
        HttpResponse::Ok(),
        layout(title, Some(session), None, issued_key(issued)),
    )
}

/// The key, and after a rotation the webhook endpoints it disabled.
fn issued_key(issued: &IssuedKey) -> Markup {
    let id = issued.profile.agent.id.to_string();
    html! {
        p role="status" {
            "The key of " strong { (label_of(&issued.profile)) } " (" code { (id) } "). It is "
            "shown this once: copy it now and hand it to the agent. It is not kept anywhere "
            "it could be shown again."
        }
        p.key { code data-agent-key="" { (issued.key.expose()) } }
        @if !issued.disabled_webhooks.is_empty() {
            h2 { "Webhook endpoints disabled" }
            p {
                "The key replaced made these endpoints: they receive nothing more. The agent's new "
                "key enables again those it wants."
            }
            ul data-disabled-webhooks="" {
                @for endpoint in &issued.disabled_webhooks {
                    li { code { (endpoint.url) } " (" code { (endpoint.id.to_string()) } ")" }
                }
            }
        }
        p { a href="/console/agents" { "Back to the agents" } }
    }
}

fn refusal_page(session: &ConsoleSession, status: StatusCode, message: &str) -> HttpResponse {
    html(
        HttpResponse::build(status),
        layout(
            "Agents",
            Some(session),
            None,
            html! {
                p role="alert" { (message) }
                p { a href="/console/agents" { "Back to the agents" } }
            },
        ),
    )
}

/// `POST /console/agents`.
pub(crate) async fn create(
    request: HttpRequest,
    console: web::Data<Console>,
    form: Form<CreateForm>,
) -> HttpResponse {
    let session = match admin_change(&request, &console, form.csrf.as_deref()).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let label = match form
        .label
        .as_deref()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        None => None,
        Some(label) => match Label::parse(label) {
            Ok(label) => Some(label),
            Err(error) => {
                return refusal_page(
                    &session,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    &format!("Not created: the {error}."),
                )
            }
        },
    };
    let request_agent = CreateAgent {
        sponsor: None,
        label,
        email: form.inbox.is_some(),
        phone: form.number.is_some(),
        wallet: form.wallet.is_some(),
    };
    let actor = session.actor(client_address(&request, &console));
    match console
        .services
        .operator
        .agents
        .create(request_agent, &actor)
        .await
    {
        Ok(issued) => key_page(&session, "Agent created", &issued),
        Err(CreateAgentError::Store(error)) => crate::pages::unavailable(&error),
        Err(error) => refusal_page(
            &session,
            StatusCode::UNPROCESSABLE_ENTITY,
            &format!("Not created: {error}"),
        ),
    }
}

/// An admin's change to one agent: the session and the agent's id, or the refusal (an id that
/// names no agent is "not found", as on every page).
async fn agent_change(
    request: &HttpRequest,
    console: &Console,
    id: &str,
    csrf: Option<&str>,
) -> Result<(ConsoleSession, AgentId), HttpResponse> {
    let session = admin_change(request, console, csrf).await?;
    match id.parse() {
        Ok(agent) => Ok((session, agent)),
        Err(_) => Err(crate::pages::not_found().await),
    }
}

/// `POST /console/agents/{id}/deactivate`.
pub(crate) async fn deactivate(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
    form: Form<CsrfOnly>,
) -> HttpResponse {
    let (session, id) = match agent_change(&request, &console, &id, form.csrf.as_deref()).await {
        Ok(changing) => changing,
        Err(refused) => return refused,
    };
    let actor = session.actor(client_address(&request, &console));
    match console
        .services
        .operator
        .agents
        .deactivate(id, &actor)
        .await
    {
        Ok(_) => HttpResponse::SeeOther()
            .insert_header((header::LOCATION, "/console/agents?done=deactivated"))
            .finish(),
        Err(AgentLookupError::NotFound(_)) => crate::pages::not_found().await,
        Err(AgentLookupError::Store(error)) => crate::pages::unavailable(&error),
    }
}

/// `POST /console/agents/{id}/rotate`: a new key, shown once.
pub(crate) async fn rotate(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
    form: Form<CsrfOnly>,
) -> HttpResponse {
    let (session, id) = match agent_change(&request, &console, &id, form.csrf.as_deref()).await {
        Ok(changing) => changing,
        Err(refused) => return refused,
    };
    let actor = session.actor(client_address(&request, &console));
    match console
        .services
        .operator
        .agents
        .rotate_key(id, &actor)
        .await
    {
        Ok(issued) => key_page(&session, "New agent key", &issued),
        Err(AgentLookupError::NotFound(_)) => crate::pages::not_found().await,
        Err(AgentLookupError::Store(error)) => crate::pages::unavailable(&error),
    }
}

/// An amount as the form shows it: atomic units, empty when not configured.
fn field(amount: Option<AtomicAmount>) -> String {
    amount.map(|amount| amount.to_string()).unwrap_or_default()
}

/// The form's values of the rules in force.
fn form_of(rules: &SpendRules) -> PolicyForm {
    PolicyForm {
        csrf: None,
        max_per_tx: Some(field(rules.limits.max_per_tx)),
        max_daily: Some(field(rules.limits.max_daily)),
        max_weekly: Some(field(rules.limits.max_weekly)),
        max_monthly: Some(field(rules.limits.max_monthly)),
        auto_confirm_max: Some(field(rules.auto_confirm.max)),
        auto_confirm_daily: Some(field(rules.auto_confirm.daily)),
        approvals_required: rules.quorum.required.map(|count| count.get().to_string()),
        approvals_above: Some(field(rules.quorum.above)),
        allowlist_on: rules.allowlist.addresses().map(|_| "on".to_owned()),
        allowlist: Some(
            rules
                .allowlist
                .addresses()
                .unwrap_or_default()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        recipient_limits: Some(
            rules
                .recipient_limits
                .as_slice()
                .iter()
                .map(|limit| {
                    let or_none = |amount: Option<AtomicAmount>| {
                        amount.map_or_else(|| "none".to_owned(), |amount| amount.to_string())
                    };
                    format!(
                        "{}:{}:{}",
                        limit.address,
                        or_none(limit.max_per_tx),
                        or_none(limit.max_daily)
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

/// The change the form asks for: every rule as the form gives it; the reasons it cannot be.
fn change_of(form: &PolicyForm) -> Result<PolicyChange, Vec<String>> {
    let mut problems = Vec::new();
    let mut amount = |name: &str, raw: &Option<String>| -> Option<Option<AtomicAmount>> {
        match raw.as_deref().map(str::trim).filter(|raw| !raw.is_empty()) {
            None => Some(None),
            Some(digits) => match AtomicAmount::parse(digits) {
                Ok(amount) => Some(Some(amount)),
                Err(error) => {
                    problems.push(format!("{name}: {error}"));
                    None
                }
            },
        }
    };
    let max_per_tx = amount("Per transfer", &form.max_per_tx);
    let max_daily = amount("Per 24 hours", &form.max_daily);
    let max_weekly = amount("Per 7 days", &form.max_weekly);
    let max_monthly = amount("Per 30 days", &form.max_monthly);
    let auto_confirm_max = amount("Confirmed by the policy up to", &form.auto_confirm_max);
    let auto_confirm_daily = amount(
        "Confirmed by the policy per 24 hours",
        &form.auto_confirm_daily,
    );
    let approvals_above = amount("Approvals apply above", &form.approvals_above);
    let approvals_required = match form.approvals_required.as_deref().map(str::trim) {
        None | Some("") | Some("1") => Some(None),
        Some(count) => match count.parse::<u8>().ok().map(ApprovalCount::quorum) {
            Some(Ok(count)) => Some(Some(count)),
            _ => {
                problems.push("Approvals required: one, or 2 to 5 operators.".to_owned());
                None
            }
        },
    };
    let allowlist = if form.allowlist_on.is_some() {
        let mut addresses = Vec::new();
        for line in form.allowlist.as_deref().unwrap_or_default().lines() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            match EvmAddress::parse(line) {
                Ok(address) => addresses.push(address),
                Err(error) => problems.push(format!("Allowlist {line:?}: {error}")),
            }
        }
        AllowlistChange::Replace(Allowlist::of(addresses))
    } else {
        AllowlistChange::Remove
    };
    let mut limits = Vec::new();
    for line in form.recipient_limits.as_deref().unwrap_or_default().lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let [address, per_tx, daily] = line.split(':').collect::<Vec<_>>()[..] else {
            problems.push(format!(
                "Recipient caps {line:?}: write ADDRESS:PER_TX:DAILY"
            ));
            continue;
        };
        let cap = |raw: &str| match raw.trim() {
            "none" | "" => Ok(None),
            digits => AtomicAmount::parse(digits).map(Some),
        };
        match (EvmAddress::parse(address.trim()), cap(per_tx), cap(daily)) {
            (Ok(address), Ok(max_per_tx), Ok(max_daily)) => limits.push(RecipientLimit {
                address,
                max_per_tx,
                max_daily,
            }),
            _ => problems.push(format!(
                "Recipient caps {line:?}: an address, then two amounts in atomic units or none"
            )),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    // Every field read (else a problem was said): each replaces its rule.
    Ok(PolicyChange {
        max_per_tx,
        max_daily,
        max_weekly,
        max_monthly,
        allowlist,
        recipient_limits: RecipientLimitsChange::Replace(limits),
        auto_confirm_max,
        auto_confirm_daily,
        approvals_required,
        approvals_above,
    })
}

fn amount_field(name: &str, label: &str, value: &Option<String>) -> Markup {
    html! {
        div.field {
            label for=(name) { (label) }
            input id=(name) type="text" inputmode="numeric" name=(name) value=(value.as_deref().unwrap_or_default()) size="24";
        }
    }
}

fn policy_page(
    session: &ConsoleSession,
    id: &str,
    usage: Option<&PolicyUsage>,
    form: &PolicyForm,
    status: StatusCode,
    problems: &[String],
) -> HttpResponse {
    let required = form.approvals_required.as_deref().unwrap_or("1");
    html(
        HttpResponse::build(status),
        layout(
            "Spend policy",
            Some(session),
            None,
            html! {
                p { "Of agent " code { (id) } ". Amounts are in atomic units: 1 USDC is 1000000. An empty field is no limit." }
                @if !problems.is_empty() {
                    div role="alert" { ul { @for problem in problems { li { (problem) } } } }
                }
                @if let Some(usage) = usage {
                    @if !usage.windows.is_empty() {
                        h2 { "Usage now" }
                        table {
                            (column_heads(&["Window", "Spent", "Left"]))
                            tbody {
                                @for window in &usage.windows {
                                    tr {
                                        td { (window.window.as_str()) }
                                        td { (format_units(window.spent, 6)) " USDC" }
                                        td { (format_units(window.remaining, 6)) " USDC" }
                                    }
                                }
                            }
                        }
                    }
                }
                h2 { "Rules" }
                form method="post" action={ "/console/agents/" (id) "/policy" } {
                    input type="hidden" name="csrf" value=(session.csrf);
                    (amount_field("max_per_tx", "Per transfer", &form.max_per_tx))
                    (amount_field("max_daily", "Per 24 hours", &form.max_daily))
                    (amount_field("max_weekly", "Per 7 days", &form.max_weekly))
                    (amount_field("max_monthly", "Per 30 days", &form.max_monthly))
                    (amount_field("auto_confirm_max", "Confirmed by the policy up to", &form.auto_confirm_max))
                    (amount_field("auto_confirm_daily", "Confirmed by the policy per 24 hours", &form.auto_confirm_daily))
                    div.field {
                        label for="approvals_required" { "Approvals required" }
                        select id="approvals_required" name="approvals_required" {
                            @for count in ["1", "2", "3", "4", "5"] {
                                option value=(count) selected[count == required] {
                                    @if count == "1" { "one operator" } @else { (count) " distinct operators" }
                                }
                            }
                        }
                    }
                    (amount_field("approvals_above", "Approvals apply above", &form.approvals_above))
                    div.field {
                        input #allowlist_on type="checkbox" name="allowlist_on" value="on" checked[form.allowlist_on.is_some()];
                        " " label.inline-label for="allowlist_on" { "Only to the allowlist" }
                    }
                    div.field {
                        label for="allowlist" { "Allowlist (one address a line)" }
                        textarea id="allowlist" name="allowlist" rows="4" cols="48" { (form.allowlist.as_deref().unwrap_or_default()) }
                    }
                    div.field {
                        label for="recipient_limits" { "Recipient caps (ADDRESS:PER_TX:DAILY a line, none for no cap)" }
                        textarea id="recipient_limits" name="recipient_limits" rows="4" cols="72" { (form.recipient_limits.as_deref().unwrap_or_default()) }
                    }
                    button type="submit" { "Save policy" }
                }
            },
        ),
    )
}

async fn policy_refused(session: &ConsoleSession, error: PolicyError) -> HttpResponse {
    match error {
        PolicyError::Store(error) => crate::pages::unavailable(&error),
        PolicyError::AgentNotFound(_) => crate::pages::not_found().await,
        other => refusal_page(
            session,
            StatusCode::UNPROCESSABLE_ENTITY,
            &other.to_string(),
        ),
    }
}

/// `GET /console/agents/{id}/policy`.
pub(crate) async fn policy(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
) -> HttpResponse {
    let session = match admin(&request, &console).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let Ok(agent) = id.parse::<AgentId>() else {
        return crate::pages::not_found().await;
    };
    match console.services.operator.policies.usage(agent).await {
        Ok(usage) => policy_page(
            &session,
            &id,
            Some(&usage),
            &form_of(&usage.policy.rules),
            StatusCode::OK,
            &[],
        ),
        Err(error) => policy_refused(&session, error).await,
    }
}

/// `POST /console/agents/{id}/policy`: every rule as the form sends it.
pub(crate) async fn save_policy(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
    form: Form<PolicyForm>,
) -> HttpResponse {
    let (session, agent) = match agent_change(&request, &console, &id, form.csrf.as_deref()).await {
        Ok(changing) => changing,
        Err(refused) => return refused,
    };
    let change = match change_of(&form) {
        Ok(change) => change,
        Err(problems) => {
            return policy_page(
                &session,
                &id,
                None,
                &form,
                StatusCode::UNPROCESSABLE_ENTITY,
                &problems,
            )
        }
    };
    let actor = session.actor(client_address(&request, &console));
    match console
        .services
        .operator
        .policies
        .set(agent, change, &actor)
        .await
    {
        Ok(_) => HttpResponse::SeeOther()
            .insert_header((header::LOCATION, "/console/agents?done=policy"))
            .finish(),
        // A policy the rules refuse is said beside the form, as a field's problem is.
        Err(PolicyError::Refused(refused)) => policy_page(
            &session,
            &id,
            None,
            &form,
            StatusCode::UNPROCESSABLE_ENTITY,
            &[refused.to_string()],
        ),
        Err(error) => policy_refused(&session, error).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AgentKey, WebhookEndpointRecord};

    #[test]
    fn a_rotated_key_names_the_webhook_endpoints_it_disabled() {
        let disabled = WebhookEndpointRecord {
            url: "https://hooks.example.com/codes".into(),
            enabled: false,
            ..WebhookEndpointRecord::fixture()
        };
        let mut issued = IssuedKey {
            key: AgentKey::from_random_bytes([7; 32]),
            profile: AgentProfile::fixture(),
            disabled_webhooks: vec![disabled.clone()],
        };
        let shown = issued_key(&issued).into_string();
        assert!(shown.contains("Webhook endpoints disabled"), "{shown}");
        assert!(shown.contains("https://hooks.example.com/codes"), "{shown}");
        assert!(shown.contains(&disabled.id.to_string()), "{shown}");
        issued.disabled_webhooks.clear();
        let none = issued_key(&issued).into_string();
        assert!(!none.contains("Webhook endpoints disabled"), "{none}");
    }

    #[test]
    fn the_form_of_a_policy_reads_back_as_the_same_rules() {
        let rules = SpendRules {
            limits: domain::SpendLimits {
                max_per_tx: AtomicAmount::parse("25000000").ok(),
                max_daily: AtomicAmount::parse("50000000").ok(),
                ..domain::SpendLimits::default()
            },
            allowlist: Allowlist::of([EvmAddress::from_bytes([7; 20])]),
            ..SpendRules::default()
        };
        let change = change_of(&form_of(&rules)).expect("valid");
        assert_eq!(change.apply(&SpendRules::default()), Ok(rules));
    }

    #[test]
    fn every_bad_field_is_said_and_nothing_is_changed() {
        let form = PolicyForm {
            max_daily: Some("ten".into()),
            approvals_required: Some("9".into()),
            allowlist_on: Some("on".into()),
            allowlist: Some("0xnope".into()),
            recipient_limits: Some("0x1111111111111111111111111111111111111111:5".into()),
            ..PolicyForm::default()
        };
        let problems = change_of(&form).expect_err("refused");
        assert_eq!(problems.len(), 4, "{problems:?}");
    }
}
