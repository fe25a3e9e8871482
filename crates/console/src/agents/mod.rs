//! Agents, for admins: the list, creation with any of an inbox, a number and a wallet (the key
//! shown once, on that page only), deactivation, a new key (shown once), and the spend policy's
//! form with every field of policy.md. Each action goes through the operator services
//! `agentctl` uses and is audited.

mod keys;
mod policy_form;
mod profile;

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use app::{AgentLookupError, ConsoleSession, CreateAgent, CreateAgentError, IssuedKey};
use domain::{AgentId, AgentProfile, Label};
use maud::{html, Markup};
use serde::Deserialize;

use crate::body::Form;
use crate::guard::{client_address, signed_in, signed_in_change};
use crate::pages::{
    address_in_table, agent_link, agent_path, column_heads, forbidden, html, layout, shown_once,
};
use crate::Console;

pub(crate) use keys::{keys, revoke};
pub(crate) use policy_form::{policy, save_policy};
pub(crate) use profile::page;

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
                div.check { input #inbox type="checkbox" name="inbox" value="on"; label for="inbox" { "Email inbox" } }
                div.check { input #number type="checkbox" name="number" value="on"; label for="number" { "Phone number" } }
                div.check { input #wallet type="checkbox" name="wallet" value="on"; label for="wallet" { "Wallet" } }
            }
            button type="submit" { "Create agent" }
        }
    }
}

fn agent_table(agents: &[AgentProfile], session: &ConsoleSession) -> Markup {
    html! {
        div.table-scroll { table {
            (column_heads(&["Agent", "State", "Resources", "Actions"]))
            tbody {
                @if agents.is_empty() { tr { td colspan="4" { "No agent yet." } } }
                @for profile in agents {
                    @let id = profile.agent.id.to_string();
                    tr data-agent-id=(id) {
                        td { (agent_link(&profile.agent)) }
                        td { @if profile.agent.is_active { "active" } @else { "deactivated" } }
                        td {
                            ul.resources {
                                @if let Some(inbox) = &profile.email_inbox {
                                    li { "Inbox " code.address { (inbox.address.as_str()) } }
                                }
                                @if let Some(number) = &profile.phone_number {
                                    li { "Number " code.address { (number.number.as_str()) } }
                                }
                                @if let Some(wallet) = &profile.wallet {
                                    li {
                                        "Wallet " (address_in_table(&wallet.address)) " · "
                                        a href={ "/console/agents/" (id) "/policy" } { "Spend policy" }
                                    }
                                }
                            }
                        }
                        td { (actions(profile, session)) }
                    }
                }
            }
        } }
    }
}

/// An admin's actions on an agent: its keys, and while it is active a new key or deactivation.
fn actions(profile: &AgentProfile, session: &ConsoleSession) -> Markup {
    let id = profile.agent.id.to_string();
    html! {
        div.actions {
            a href={ "/console/agents/" (id) "/keys" } { "Keys" }
            @if profile.agent.is_active {
                form.inline method="post" action={ "/console/agents/" (id) "/rotate" } {
                    input type="hidden" name="csrf" value=(session.csrf);
                    button.secondary type="submit" { "Rotate key" }
                }
                form.inline method="post" action={ "/console/agents/" (id) "/deactivate" } {
                    input type="hidden" name="csrf" value=(session.csrf);
                    button.danger type="submit" { "Deactivate" }
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
    html! {
        p role="status" {
            "The key of " (agent_link(&issued.profile.agent)) ". It is shown this once: copy it "
            "now and hand it to the agent. It is not kept anywhere it could be shown again."
        }
        (shown_once("agent-key", html! { code #agent-key data-agent-key="" { (issued.key.expose()) } }))
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
        p { a href=(agent_path(issued.profile.agent.id)) { "The agent's page" } " · " a href="/console/agents" { "Back to the agents" } }
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

/// The agent `id` names, or the answer for one that names none ("not found", as on every page).
async fn profile_of(console: &Console, id: AgentId) -> Result<AgentProfile, HttpResponse> {
    match console.services.operator.agents.show(id).await {
        Ok(profile) => Ok(profile),
        Err(AgentLookupError::NotFound(_)) => Err(crate::pages::not_found().await),
        Err(AgentLookupError::Store(error)) => Err(crate::pages::unavailable(&error)),
    }
}

/// The agent a page's path names by `id`, or the answer for a path that names none.
async fn profile_named(console: &Console, id: &str) -> Result<AgentProfile, HttpResponse> {
    match id.parse() {
        Ok(agent) => profile_of(console, agent).await,
        Err(_) => Err(crate::pages::not_found().await),
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
        let key = AgentKey::from_random_bytes([7; 32]);
        let mut issued = IssuedKey {
            first_key: domain::keys::AgentKeyRecord::fixture(key.hash()),
            key,
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
}
