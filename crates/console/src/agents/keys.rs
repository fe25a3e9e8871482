//! An agent's keys, for admins: every live key (label, scopes, expiry, last use, the key that
//! made it) with a Revoke button, which revokes it and every key made from it. Revocations go
//! through the key service `agentctl keys` uses, and are audited.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use app::KeyError;
use domain::keys::{AgentKeyRecord, KeyId, Scope};
use maud::{html, Markup};

use super::{admin, agent_change, profile_named, CsrfOnly, Done};
use crate::body::Form;
use crate::guard::client_address;
use crate::pages::{agent_link, agent_path, column_heads, html, instant, layout};
use crate::Console;

/// `GET /console/agents/{id}/keys`.
pub(crate) async fn keys(
    request: HttpRequest,
    console: web::Data<Console>,
    id: web::Path<String>,
    done: web::Query<Done>,
) -> HttpResponse {
    let session = match admin(&request, &console).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let profile = match profile_named(&console, &id).await {
        Ok(profile) => profile,
        Err(answer) => return answer,
    };
    let agent = profile.agent.id;
    let live = match console.services.keys.live(agent).await {
        Ok(live) => live,
        Err(KeyError::Store(error)) => return crate::pages::unavailable(&error),
        Err(_) => return crate::pages::not_found().await,
    };
    let notice = (done.done.as_deref() == Some("revoked"))
        .then_some("The key is revoked, with every key made from it.");
    let id = agent.to_string();
    html(
        HttpResponse::Ok(),
        layout(
            "Agent keys",
            Some(&session),
            None,
            html! {
                @if let Some(notice) = notice { p.notice role="status" { (notice) } }
                p { "The live keys of " (agent_link(&profile.agent)) "." }
                (key_table(&id, &live, Some(&session.csrf)))
                p { a href=(agent_path(agent)) { "Back to the agent" } }
            },
        ),
    )
}

/// The agent's live keys, each with a Revoke button when `csrf` (an admin's session's) is given.
pub(super) fn key_table(agent: &str, live: &[AgentKeyRecord], csrf: Option<&str>) -> Markup {
    let heads: &[&str] = if csrf.is_some() {
        &[
            "Key",
            "Scopes",
            "Expires",
            "Last used",
            "Made by",
            "Actions",
        ]
    } else {
        &["Key", "Scopes", "Expires", "Last used", "Made by"]
    };
    html! {
        div.table-scroll { table {
            (column_heads(heads))
            tbody {
                @if live.is_empty() { tr { td colspan=(heads.len()) { "No live key." } } }
                @for key in live {
                    @let key_id = key.id.to_string();
                    tr data-key-id=(key_id) {
                        td {
                            (key.label.as_ref().map_or("(no label)", |label| label.as_str()))
                            br; code { (key_id) }
                        }
                        td { (scope_names(key)) }
                        td { @match key.grant.expires_at { Some(at) => (instant(at)), None => "never" } }
                        td { @match key.last_used_at { Some(at) => (instant(at)), None => "never" } }
                        td {
                            @match key.parent {
                                Some(parent) => code { (parent.to_string()) },
                                None if key.first => "the agent's creation or rotation",
                                None => "an operator",
                            }
                        }
                        @if let Some(csrf) = csrf {
                            td {
                                form.inline method="post" action={ "/console/agents/" (agent) "/keys/" (key_id) "/revoke" } {
                                    input type="hidden" name="csrf" value=(csrf);
                                    button.danger type="submit" { "Revoke" }
                                }
                            }
                        }
                    }
                }
            }
        } }
    }
}

fn scope_names(key: &AgentKeyRecord) -> String {
    key.scopes()
        .iter()
        .map(Scope::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `POST /console/agents/{id}/keys/{key_id}/revoke`.
pub(crate) async fn revoke(
    request: HttpRequest,
    console: web::Data<Console>,
    path: web::Path<(String, String)>,
    form: Form<CsrfOnly>,
) -> HttpResponse {
    let (id, key) = path.into_inner();
    let (session, agent) = match agent_change(&request, &console, &id, form.csrf.as_deref()).await {
        Ok(changing) => changing,
        Err(refused) => return refused,
    };
    let Ok(key) = key.parse::<KeyId>() else {
        return crate::pages::not_found().await;
    };
    let actor = session.actor(client_address(&request, &console));
    match console
        .services
        .keys
        .revoke_for_operator(agent, key, &actor)
        .await
    {
        Ok(_) => HttpResponse::SeeOther()
            .insert_header((
                header::LOCATION,
                format!("/console/agents/{agent}/keys?done=revoked"),
            ))
            .finish(),
        Err(KeyError::Store(error)) => crate::pages::unavailable(&error),
        Err(_) => crate::pages::not_found().await,
    }
}
