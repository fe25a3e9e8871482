//! What `agentctl` prints beyond the API's shapes: a key it issued, and transfer intents as the
//! API shows them plus what only an operator needs (whose it is, its idempotency key, who decided
//! on it, its transactions).

use domain::{AgentKey, EventRecord, PolicyViolation, TransferIntentRecord, WebhookEndpointRecord};
use serde::Serialize;
use uuid::Uuid;

use crate::{AgentResponse, EventOut, TransferIntentOut, WebhookOut};

/// A key issued to the operator, printed this once with the agent it opens. No `Debug`: it holds
/// the key itself, which no log may show.
#[derive(Serialize)]
pub struct OperatorIssuedKey {
    pub agent_key: String,
    pub agent: AgentResponse,
    /// After a rotation, the webhook endpoints it disabled (made by the key it replaced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_webhooks: Option<Vec<WebhookOut>>,
}

impl OperatorIssuedKey {
    pub fn new(key: &AgentKey, agent: AgentResponse) -> Self {
        Self {
            agent_key: key.expose().to_owned(),
            agent,
            disabled_webhooks: None,
        }
    }

    /// A rotated key, with the endpoints the rotation disabled.
    pub fn rotated(
        key: &AgentKey,
        agent: AgentResponse,
        disabled: &[WebhookEndpointRecord],
    ) -> Self {
        Self {
            disabled_webhooks: Some(disabled.iter().map(WebhookOut::new).collect()),
            ..Self::new(key, agent)
        }
    }
}

/// An intent as an operator sees it.
#[derive(Debug, Serialize)]
pub struct OperatorIntentView {
    #[serde(flatten)]
    pub intent: TransferIntentOut,
    pub agent_id: Uuid,
    pub wallet_id: Uuid,
    pub idempotency_key: Option<String>,
    /// Who took the latest operator decision on it (`cli`, `cli:<user>`, `operator:<name>`);
    /// `null` while none has, and for intents decided before it was recorded.
    pub decided_by: Option<String>,
    /// The agent key that asked for it (`key_…`); `null` for intents made before keys were
    /// recorded.
    pub key_id: Option<String>,
}

impl From<&TransferIntentRecord> for OperatorIntentView {
    fn from(intent: &TransferIntentRecord) -> Self {
        Self {
            intent: TransferIntentOut::from(intent),
            agent_id: intent.agent_id.0,
            wallet_id: intent.wallet_id.0,
            idempotency_key: intent
                .idempotency_key
                .as_ref()
                .map(|key| key.as_str().to_owned()),
            decided_by: intent.decided_by.as_ref().map(ToString::to_string),
            key_id: intent.key_id.map(|key| key.to_string()),
        }
    }
}

/// An event as an operator reads it: as its agent does, and the key whose request caused it.
#[derive(Debug, Serialize)]
pub struct OperatorEventView {
    #[serde(flatten)]
    pub event: EventOut,
    /// `key_…`; `null` for what no key caused (mail and SMS received) and events recorded before
    /// keys were.
    pub key_id: Option<String>,
}

impl From<&EventRecord> for OperatorEventView {
    fn from(event: &EventRecord) -> Self {
        Self {
            event: EventOut::from(event),
            key_id: event.key_id.map(|key| key.to_string()),
        }
    }
}

/// A confirmed intent and what the spend policy in force says of it.
#[derive(Debug, Serialize)]
pub struct OperatorConfirmationView {
    #[serde(flatten)]
    pub intent: OperatorIntentView,
    /// `null` when the intent keeps to the policy; otherwise the operator forced it past this.
    pub policy_violation: Option<String>,
}

impl OperatorConfirmationView {
    pub fn new(intent: &TransferIntentRecord, verdict: &Result<(), PolicyViolation>) -> Self {
        Self {
            intent: intent.into(),
            policy_violation: verdict.as_ref().err().map(ToString::to_string),
        }
    }
}

/// One transaction sent for an intent. Fees are decimal strings: they may pass 2^53.
#[derive(Debug, Serialize)]
pub struct OperatorAttemptView {
    pub tx_hash: String,
    pub nonce: u64,
    pub max_fee_per_gas: String,
    pub max_priority_fee_per_gas: String,
    /// How many times it was broadcast.
    pub broadcasts: u32,
    pub last_error: Option<String>,
}

/// An intent with every transaction sent for it, newest first.
#[derive(Debug, Serialize)]
pub struct OperatorIntentDetail {
    #[serde(flatten)]
    pub intent: OperatorIntentView,
    pub attempts: Vec<OperatorAttemptView>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{Operator, OperatorName};
    use serde_json::json;

    #[test]
    fn an_issued_key_is_printed_whole_beside_its_agent() {
        let key = AgentKey::from_random_bytes([7; 32]);
        let profile = domain::AgentProfile::fixture();
        let printed = serde_json::to_value(OperatorIssuedKey::new(
            &key,
            AgentResponse::new(&profile, None),
        ))
        .expect("serializes");
        assert_eq!(printed["agent_key"], json!(key.expose()));
        assert_eq!(printed["agent"]["id"], json!(profile.agent.id.to_string()));
        assert!(printed.get("disabled_webhooks").is_none());
    }

    #[test]
    fn a_rotated_key_names_the_endpoints_it_disabled() {
        let key = AgentKey::from_random_bytes([7; 32]);
        let profile = domain::AgentProfile::fixture();
        let disabled = WebhookEndpointRecord {
            enabled: false,
            disabled_reason: Some(domain::ROTATED_KEY_REASON.into()),
            ..WebhookEndpointRecord::fixture()
        };
        let printed = serde_json::to_value(OperatorIssuedKey::rotated(
            &key,
            AgentResponse::new(&profile, None),
            std::slice::from_ref(&disabled),
        ))
        .expect("serializes");
        assert_eq!(
            printed["disabled_webhooks"],
            json!([{
                "id": disabled.id.to_string(),
                "url": disabled.url,
                "types": null,
                "description": null,
                "enabled": false,
                "disabled_reason": "the agent key that created it was rotated",
                "created_at": printed["disabled_webhooks"][0]["created_at"],
            }])
        );
    }

    #[test]
    fn an_operator_view_adds_whose_the_intent_is_and_who_decided_on_it() {
        let intent = TransferIntentRecord {
            decided_by: Some(Operator::Cli {
                user: Some(OperatorName::parse("alice").expect("valid")),
            }),
            ..TransferIntentRecord::fixture()
        };
        let view = serde_json::to_value(OperatorIntentView::from(&intent)).expect("serializes");
        let api = serde_json::to_value(TransferIntentOut::from(&intent)).expect("serializes");
        for (field, value) in api.as_object().expect("an object") {
            assert_eq!(&view[field], value, "{field} as the API shows it");
        }
        assert_eq!(view["agent_id"], json!(intent.agent_id.to_string()));
        assert_eq!(view["wallet_id"], json!(intent.wallet_id.to_string()));
        assert_eq!(view["idempotency_key"], json!(null));
        assert_eq!(view["decided_by"], json!("cli:alice"));
    }

    #[test]
    fn a_confirmation_names_the_violation_it_was_forced_past() {
        let intent = TransferIntentRecord::fixture();
        let kept = serde_json::to_value(OperatorConfirmationView::new(&intent, &Ok(())))
            .expect("serializes");
        assert_eq!(kept["policy_violation"], json!(null));
        assert_eq!(kept["status"], json!("pending_confirmation"));
        let violation = PolicyViolation::ExceedsPerTransactionMax {
            amount: intent.amount,
            max: domain::AtomicAmount::parse("10").expect("valid"),
        };
        let forced = serde_json::to_value(OperatorConfirmationView::new(&intent, &Err(violation)))
            .expect("serializes");
        assert_eq!(forced["policy_violation"], json!(violation.to_string()));
    }
}

/// An operator of the console, as `agentctl operators` prints them.
#[derive(Debug, Serialize)]
pub struct ConsoleOperatorOut {
    pub id: Uuid,
    pub name: String,
    pub role: &'static str,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: time::OffsetDateTime,
    /// Set once the operator is disabled.
    #[serde(with = "time::serde::rfc3339::option")]
    pub disabled_at: Option<time::OffsetDateTime>,
}

impl From<&domain::OperatorAccount> for ConsoleOperatorOut {
    fn from(operator: &domain::OperatorAccount) -> Self {
        Self {
            id: operator.id.0,
            name: operator.name.as_str().to_owned(),
            role: operator.role.as_str(),
            created_at: operator.created_at,
            disabled_at: operator.disabled_at,
        }
    }
}

/// An invitation to the console, printed this once: its link holds the one-time secret that
/// enrolls the operator's passkey. No `Debug`, for that secret.
#[derive(Serialize)]
pub struct ConsoleInvitationOut {
    pub operator: ConsoleOperatorOut,
    pub enroll_url: String,
}
