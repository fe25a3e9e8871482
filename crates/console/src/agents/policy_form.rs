//! The spend policy's form, for admins: every field of policy.md, read from the rules in force,
//! parsed back into the change it asks for (every problem said at once), and shown with the usage
//! of each capped window.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use app::{ConsoleSession, PolicyError, PolicyUsage};
use domain::{
    format_units, AgentId, Allowlist, AllowlistChange, ApprovalCount, AtomicAmount, EvmAddress,
    PolicyChange, RecipientLimit, RecipientLimitsChange, SpendRules,
};
use maud::{html, Markup};
use serde::Deserialize;

use super::{admin, agent_change, refusal_page};
use crate::body::Form;
use crate::guard::client_address;
use crate::pages::{column_heads, html, layout};
use crate::Console;

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
        // The form does not show the switch yet: it keeps what `agentctl policy set --x402` set.
        x402_enabled: None,
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
