//! The spend policy's form, for admins: every field of policy.md, read from the rules in force,
//! parsed back into the change it asks for (every problem said at once), and shown with the usage
//! of each capped window.

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use app::{ConsoleSession, PolicyError, PolicyUsage};
use domain::{
    format_units, AgentRecord, Allowlist, AllowlistChange, ApprovalCount, AtomicAmount,
    AtomicAmountError, EvmAddress, PolicyChange, RecipientLimit, RecipientLimitsChange, SpendRules,
    SpendWindow,
};
use maud::{html, Markup};
use serde::Deserialize;

use super::{admin, agent_change, profile_named, profile_of, refusal_page};
use crate::body::Form;
use crate::guard::client_address;
use crate::pages::{
    agent_link, agent_path, amount, column_heads, html, layout, units, window_name, USDC_DECIMALS,
};
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

/// An amount as the form shows it: in USDC, empty when not configured.
fn field(amount: Option<AtomicAmount>) -> String {
    amount.map(usdc).unwrap_or_default()
}

/// An amount in USDC, as a person writes it.
fn usdc(amount: AtomicAmount) -> String {
    format_units(amount.value(), USDC_DECIMALS)
}

/// An amount of USDC as the form sends it (`"10.5"`), in atomic units.
fn from_usdc(text: &str) -> Result<AtomicAmount, AtomicAmountError> {
    AtomicAmount::parse_units(text, USDC_DECIMALS)
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
                        amount.map_or_else(|| "none".to_owned(), usdc)
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
            Some(written) => match from_usdc(written) {
                Ok(amount) => Some(Some(amount)),
                Err(error) => {
                    problems.push(format!("{name}: {error}"));
                    None
                }
            },
        }
    };
    let max_per_tx = amount(PER_TRANSFER, &form.max_per_tx);
    let max_daily = amount(window_name(SpendWindow::Daily), &form.max_daily);
    let max_weekly = amount(window_name(SpendWindow::Weekly), &form.max_weekly);
    let max_monthly = amount(window_name(SpendWindow::Monthly), &form.max_monthly);
    let auto_confirm_max = amount(AUTO_CONFIRM_UP_TO, &form.auto_confirm_max);
    let auto_confirm_daily = amount(
        window_name(SpendWindow::AutoConfirmDaily),
        &form.auto_confirm_daily,
    );
    let approvals_above = amount(APPROVALS_ABOVE, &form.approvals_above);
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
            written => from_usdc(written).map(Some),
        };
        match (EvmAddress::parse(address.trim()), cap(per_tx), cap(daily)) {
            (Ok(address), Ok(max_per_tx), Ok(max_daily)) => limits.push(RecipientLimit {
                address,
                max_per_tx,
                max_daily,
            }),
            _ => problems.push(format!(
                "Recipient caps {line:?}: an address, then two amounts in USDC or none"
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

/// The form's labels, which the usage's windows share.
const PER_TRANSFER: &str = "Per transfer";
const AUTO_CONFIRM_UP_TO: &str = "Auto-confirm up to (per transfer)";
const APPROVALS_ABOVE: &str = "Approvals apply above";

/// The atomic units of what a field holds, as the page shows them beside it; empty when the field
/// holds no amount (the script writes them again as the operator types).
fn atomic_of(value: &Option<String>) -> String {
    match value
        .as_deref()
        .map(str::trim)
        .filter(|value| !value.is_empty())
    {
        None => String::new(),
        Some(written) => match from_usdc(written) {
            Ok(amount) => format!("= {amount} atomic"),
            Err(_) => "not an amount of USDC".to_owned(),
        },
    }
}

fn amount_field(name: &str, label: &str, value: &Option<String>) -> Markup {
    let atomic = format!("{name}-atomic");
    html! {
        div.field {
            label for=(name) { (label) " (USDC)" }
            span.amount-input {
                input id=(name) type="text" inputmode="decimal" name=(name) value=(value.as_deref().unwrap_or_default())
                    size="16" aria-describedby=(atomic) data-usdc="";
                " "
                output.atomic id=(atomic) for=(name) { (atomic_of(value)) }
            }
        }
    }
}

/// What each window the policy caps holds now and has left.
pub(super) fn usage_table(usage: &PolicyUsage) -> Markup {
    html! {
        @if usage.windows.is_empty() {
            p { "The policy caps no window: nothing is counted." }
        } @else {
            div.table-scroll { table.usage {
                (column_heads(&["Window", "Cap", "Spent", "Left"]))
                tbody {
                    @for window in &usage.windows {
                        tr data-window=(window.window.as_str()) {
                            th scope="row" { (window_name(window.window)) }
                            td { (amount(&window.cap)) }
                            td { (units(window.spent)) }
                            td { (units(window.remaining)) }
                        }
                    }
                }
            } }
        }
    }
}

fn policy_page(
    session: &ConsoleSession,
    agent: &AgentRecord,
    usage: Option<&PolicyUsage>,
    form: &PolicyForm,
    status: StatusCode,
    problems: &[String],
) -> HttpResponse {
    let required = form.approvals_required.as_deref().unwrap_or("1");
    let id = agent.id.to_string();
    html(
        HttpResponse::build(status),
        layout(
            "Spend policy",
            Some(session),
            None,
            html! {
                p {
                    "Of " (agent_link(agent)) ". Amounts are in USDC (up to six decimals), each "
                    "with its atomic units beside it: 1 USDC is 1000000. An empty field is no limit."
                }
                @if !problems.is_empty() {
                    div role="alert" { ul { @for problem in problems { li { (problem) } } } }
                }
                @if let Some(usage) = usage {
                    h2 { "Usage now" }
                    (usage_table(usage))
                }
                h2 { "Rules" }
                form.policy method="post" action={ "/console/agents/" (id) "/policy" } {
                    input type="hidden" name="csrf" value=(session.csrf);
                    (amount_field("max_per_tx", PER_TRANSFER, &form.max_per_tx))
                    (amount_field("max_daily", window_name(SpendWindow::Daily), &form.max_daily))
                    (amount_field("max_weekly", window_name(SpendWindow::Weekly), &form.max_weekly))
                    (amount_field("max_monthly", window_name(SpendWindow::Monthly), &form.max_monthly))
                    (amount_field("auto_confirm_max", AUTO_CONFIRM_UP_TO, &form.auto_confirm_max))
                    (amount_field("auto_confirm_daily", window_name(SpendWindow::AutoConfirmDaily), &form.auto_confirm_daily))
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
                    (amount_field("approvals_above", APPROVALS_ABOVE, &form.approvals_above))
                    div.check {
                        input #allowlist_on type="checkbox" name="allowlist_on" value="on" checked[form.allowlist_on.is_some()];
                        label for="allowlist_on" { "Only to the allowlist" }
                    }
                    div.field {
                        label for="allowlist" { "Allowlist (one address a line)" }
                        textarea id="allowlist" name="allowlist" rows="4" cols="48" { (form.allowlist.as_deref().unwrap_or_default()) }
                    }
                    div.field {
                        label for="recipient_limits" { "Recipient caps (ADDRESS:PER_TRANSFER:ROLLING_24_H a line, in USDC, none for no cap)" }
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
    let agent = match profile_named(&console, &id).await {
        Ok(profile) => profile.agent,
        Err(answer) => return answer,
    };
    match console.services.operator.policies.usage(agent.id).await {
        Ok(usage) => policy_page(
            &session,
            &agent,
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
    let (session, id) = match agent_change(&request, &console, &id, form.csrf.as_deref()).await {
        Ok(changing) => changing,
        Err(refused) => return refused,
    };
    let agent = match profile_of(&console, id).await {
        Ok(profile) => profile.agent,
        Err(answer) => return answer,
    };
    let change = match change_of(&form) {
        Ok(change) => change,
        Err(problems) => {
            return policy_page(
                &session,
                &agent,
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
        .set(id, change, &actor)
        .await
    {
        Ok(_) => HttpResponse::SeeOther()
            .insert_header((header::LOCATION, format!("{}?done=policy", agent_path(id))))
            .finish(),
        // A policy the rules refuse is said beside the form, as a field's problem is.
        Err(PolicyError::Refused(refused)) => policy_page(
            &session,
            &agent,
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
    fn the_form_takes_usdc_and_keeps_the_atomic_units_exact() {
        let form = PolicyForm {
            max_per_tx: Some("25.5".into()),
            max_daily: Some(" 0.000001 ".into()),
            recipient_limits: Some(format!("{}:1.25:none", EvmAddress::from_bytes([9; 20]))),
            ..PolicyForm::default()
        };
        let rules = change_of(&form)
            .expect("valid")
            .apply(&SpendRules::default())
            .expect("a policy");
        assert_eq!(
            rules.limits.max_per_tx,
            AtomicAmount::parse("25500000").ok()
        );
        assert_eq!(rules.limits.max_daily, AtomicAmount::parse("1").ok());
        let capped = &rules.recipient_limits.as_slice()[0];
        assert_eq!(
            (capped.max_per_tx, capped.max_daily),
            (AtomicAmount::parse("1250000").ok(), None)
        );
        let shown = form_of(&rules);
        assert_eq!(shown.max_per_tx.as_deref(), Some("25.5"));
        assert_eq!(shown.max_daily.as_deref(), Some("0.000001"));
        assert_eq!(atomic_of(&shown.max_per_tx), "= 25500000 atomic");
        assert_eq!(
            atomic_of(&Some("1.0000001".into())),
            "not an amount of USDC"
        );
        assert_eq!(atomic_of(&None), "");
    }

    #[test]
    fn an_amount_finer_than_usdc_is_refused_not_rounded() {
        let form = PolicyForm {
            max_per_tx: Some("0.0000001".into()),
            auto_confirm_daily: Some("1,5".into()),
            ..PolicyForm::default()
        };
        let problems = change_of(&form).expect_err("refused");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("Per transfer: "), "{problems:?}");
        assert!(
            problems[0].contains("6 digits after the point"),
            "{problems:?}"
        );
        assert!(
            problems[1].starts_with("Auto-confirm, rolling 24 h: "),
            "{problems:?}"
        );
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
