//! What an audited action changed, as a person reads it: the fields that differ between the
//! `before` and `after` documents the audit log keeps, each named, with its old and new value
//! (amounts in USDC), instead of the two documents.

use domain::U256;
use maud::{html, Markup};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::pages::{instant, units};

/// One field that an action changed: its path in the documents (`approvals.received`), and its
/// value before and after (`None` where the document did not hold it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldChange {
    pub(crate) field: String,
    pub(crate) before: Option<Value>,
    pub(crate) after: Option<Value>,
}

/// The fields that differ between `before` and `after`, in the order of the documents' paths.
/// Objects are compared field by field, at any depth; anything else (a list, a value) is one
/// field. A side that is missing holds nothing, so every field of the other is a change.
pub(crate) fn changed_fields(before: Option<&Value>, after: Option<&Value>) -> Vec<FieldChange> {
    let mut changes = Vec::new();
    compare("", before, after, &mut changes);
    changes
}

fn compare(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<FieldChange>) {
    match (before, after) {
        (Some(Value::Object(before)), Some(Value::Object(after))) => {
            compare_fields(path, Some(before), Some(after), out)
        }
        (Some(Value::Object(before)), None) => compare_fields(path, Some(before), None, out),
        (None, Some(Value::Object(after))) => compare_fields(path, None, Some(after), out),
        (before, after) if before == after => {}
        (before, after) => out.push(FieldChange {
            field: path.to_owned(),
            before: before.cloned(),
            after: after.cloned(),
        }),
    }
}

fn compare_fields(
    path: &str,
    before: Option<&Map<String, Value>>,
    after: Option<&Map<String, Value>>,
    out: &mut Vec<FieldChange>,
) {
    let mut names: Vec<&String> = before
        .into_iter()
        .chain(after)
        .flat_map(Map::keys)
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let field = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        compare(
            &field,
            before.and_then(|fields| fields.get(name)),
            after.and_then(|fields| fields.get(name)),
            out,
        );
    }
}

/// The name a person reads for a field of an audited document: the console's own words for the
/// fields of a spend policy and of an intent's decision, else the path in words.
pub(crate) fn field_name(field: &str) -> String {
    let known = match field {
        "status" => "Status",
        "approvals.received" => "Approvals received",
        "approvals.required" => "Approvals required",
        "max_per_tx_atomic" => "Per transfer",
        "max_daily_atomic" => "Spending, rolling 24 h",
        "max_weekly_atomic" => "Spending, rolling 7 days",
        "max_monthly_atomic" => "Spending, rolling 30 days",
        "auto_confirm_max_atomic" => "Auto-confirm up to",
        "auto_confirm_daily_atomic" => "Auto-confirm, rolling 24 h",
        "approvals_required" => "Approvals required",
        "approvals_required_above_atomic" => "Approvals apply above",
        "allowlisted_addresses" => "Allowlist",
        "recipient_limits" => "Recipient caps",
        "x402_enabled" => "x402 payments",
        "live_token" => "Live token for agentctl",
        "passkey_registered" => "Passkey registered",
        "active" => "Active",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_owned();
    }
    let words = field
        .trim_end_matches("_atomic")
        .replace(['_', '.'], " ")
        .trim()
        .to_owned();
    let mut letters = words.chars();
    match letters.next() {
        Some(first) => first.to_uppercase().chain(letters).collect(),
        None => words,
    }
}

/// Whether a field holds an amount in atomic units, which is shown in USDC.
fn holds_atomic_units(field: &str) -> bool {
    field
        .rsplit('.')
        .next()
        .unwrap_or(field)
        .ends_with("_atomic")
}

/// An amount of atomic units as the document writes it: a string or a number of digits.
fn atomic_units(value: &Value) -> Option<U256> {
    let digits = match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.as_u64()?.to_string(),
        _ => return None,
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| U256::from_str_radix(&digits, 10).ok())
        .flatten()
}

/// A value as a person reads it: nothing is "none", a switch "yes" or "no", an amount in USDC,
/// an instant as every page shows one, a list its items, an object its fields.
fn value(field: &str, shown: &Value) -> Markup {
    if holds_atomic_units(field) {
        if let Some(amount) = atomic_units(shown) {
            return units(amount);
        }
    }
    // An instant is kept as its Unix time (`expires_at`).
    if field.ends_with("_at") {
        if let Some(at) = shown
            .as_i64()
            .and_then(|seconds| OffsetDateTime::from_unix_timestamp(seconds).ok())
        {
            return instant(at);
        }
    }
    html! {
        @match shown {
            Value::Null => "none",
            Value::Bool(true) => "yes",
            Value::Bool(false) => "no",
            Value::String(text) => span.value { (text) },
            Value::Number(number) => span.value { (number.to_string()) },
            Value::Array(items) if items.is_empty() => "none",
            Value::Array(items) => {
                @for (index, item) in items.iter().enumerate() {
                    @if index > 0 { ", " }
                    (value(field, item))
                }
            },
            Value::Object(fields) => {
                @for (index, (name, item)) in fields.iter().enumerate() {
                    @if index > 0 { "; " }
                    (field_name(name)) " " (value(name, item))
                }
            },
        }
    }
}

/// The changes between an audit row's `before` and `after` (JSON text), as a list of the fields
/// that changed; nothing when neither holds anything.
pub(crate) fn changes(before: Option<&str>, after: Option<&str>) -> Markup {
    let read = |text: Option<&str>| text.and_then(|text| serde_json::from_str::<Value>(text).ok());
    let (before, after) = (read(before), read(after));
    let fields = changed_fields(before.as_ref(), after.as_ref());
    html! {
        @if !fields.is_empty() {
            ul.changes {
                @for change in &fields {
                    li data-field=(change.field) {
                        span.field { (field_name(&change.field)) } ": "
                        @match (&change.before, &change.after) {
                            (Some(before), Some(after)) => {
                                del { (value(&change.field, before)) } " → " ins { (value(&change.field, after)) }
                            },
                            (None, Some(after)) => ins { (value(&change.field, after)) },
                            (Some(before), None) => { del { (value(&change.field, before)) } " → removed" },
                            (None, None) => {},
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_the_fields_that_differ_are_changes_at_any_depth() {
        let before =
            json!({"status": "pending_confirmation", "approvals": {"required": 2, "received": 0}});
        let after =
            json!({"status": "pending_confirmation", "approvals": {"required": 2, "received": 1}});
        assert_eq!(
            changed_fields(Some(&before), Some(&after)),
            [FieldChange {
                field: "approvals.received".into(),
                before: Some(json!(0)),
                after: Some(json!(1)),
            }]
        );
        assert_eq!(changed_fields(Some(&before), Some(&before)), []);
    }

    #[test]
    fn a_field_added_or_removed_is_a_change_and_a_missing_side_holds_nothing() {
        let before = json!({"max_daily_atomic": 50000000, "allowlisted_addresses": ["0xaa"]});
        let after = json!({"max_daily_atomic": null, "allowlisted_addresses": ["0xaa", "0xbb"], "x402_enabled": true});
        let fields: Vec<(String, Option<Value>, Option<Value>)> =
            changed_fields(Some(&before), Some(&after))
                .into_iter()
                .map(|change| (change.field, change.before, change.after))
                .collect();
        assert_eq!(
            fields,
            [
                (
                    "allowlisted_addresses".into(),
                    Some(json!(["0xaa"])),
                    Some(json!(["0xaa", "0xbb"]))
                ),
                (
                    "max_daily_atomic".into(),
                    Some(json!(50000000)),
                    Some(Value::Null)
                ),
                ("x402_enabled".into(), None, Some(json!(true))),
            ]
        );
        let created = json!({"label": "payer", "wallet": true});
        assert_eq!(
            changed_fields(None, Some(&created))
                .into_iter()
                .map(|change| change.field)
                .collect::<Vec<_>>(),
            ["label", "wallet"]
        );
        assert_eq!(changed_fields(None, None), []);
    }

    #[test]
    fn changes_read_as_named_fields_with_amounts_in_usdc_not_as_documents() {
        let shown = changes(
            Some(r#"{"max_daily_atomic": 50000000, "x402_enabled": false}"#),
            Some(r#"{"max_daily_atomic": "10500000", "x402_enabled": true}"#),
        )
        .into_string();
        assert!(shown.contains("Spending, rolling 24 h"), "{shown}");
        assert!(
            shown.contains("50 USDC") && shown.contains("10.5 USDC"),
            "{shown}"
        );
        assert!(shown.contains("(10500000 atomic)"), "{shown}");
        assert!(
            shown.contains("x402 payments") && shown.contains("yes"),
            "{shown}"
        );
        assert!(
            !shown.contains('{') && !shown.contains("_atomic<") && !shown.contains("_atomic:"),
            "no document, no field's name in the store: {shown}"
        );
        assert_eq!(changes(None, None).into_string(), "");
    }

    #[test]
    fn an_instant_kept_as_unix_time_reads_as_every_page_shows_one() {
        let shown = changes(None, Some(r#"{"expires_at": 1796083200}"#)).into_string();
        assert!(shown.contains("Expires at"), "{shown}");
        assert!(shown.contains("2026-12-01 00:00:00 UTC"), "{shown}");
    }

    #[test]
    fn a_field_the_console_does_not_know_reads_as_words() {
        assert_eq!(
            field_name("approvals_required_above_atomic"),
            "Approvals apply above"
        );
        assert_eq!(field_name("revoked_key_ids"), "Revoked key ids");
        assert_eq!(field_name("limits.max_tx_atomic"), "Limits max tx");
    }
}
