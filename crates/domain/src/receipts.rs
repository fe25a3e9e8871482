//! The receipt of money that moved: what an executed intent (a transfer or an x402 payment) paid,
//! in the form its Ed25519 signature covers, the RFC 8785 canonical JSON of the receipt.

use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::{ConfirmedBy, EvmAddress, IntentKind, IntentStatus, TransferIntentRecord};

/// An executed intent's receipt, every field as the signature covers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub intent_id: String,
    pub kind: &'static str,
    pub agent_id: String,
    /// The paying wallet's address.
    pub wallet: String,
    pub recipient: String,
    pub amount_atomic: String,
    pub asset: &'static str,
    /// `eip155:<chain id>`, or the network an x402 challenge named.
    pub network: String,
    pub tx_hash: String,
    /// `null` where the block is not known (an intent an operator resolved by its hash).
    pub block_number: Option<u64>,
    /// Left out of the JSON for a transfer.
    pub resource_url: Option<String>,
    /// `policy` (the auto-confirm tier), the operator who decided (`cli`, `operator:<name>`), or
    /// `operators` where none was recorded.
    pub decided_by: String,
    pub confirmed_at: OffsetDateTime,
    pub executed_at: OffsetDateTime,
    pub receipt_key_id: String,
}

/// Only an executed intent has a receipt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the intent is {status}: only an executed intent has a receipt")]
pub struct NotExecuted {
    pub status: IntentStatus,
}

impl Receipt {
    /// The receipt of `intent`, paid from `wallet` on chain `chain_id`, to be signed by the key
    /// `receipt_key_id`.
    pub fn of(
        intent: &TransferIntentRecord,
        wallet: &EvmAddress,
        chain_id: u64,
        receipt_key_id: &str,
    ) -> Result<Self, NotExecuted> {
        let (IntentStatus::Executed, Some(tx_hash), Some(confirmed_at)) =
            (intent.status, &intent.tx_hash, intent.confirmed_at)
        else {
            return Err(NotExecuted {
                status: intent.status,
            });
        };
        let decided_by = match (intent.confirmed_by, &intent.decided_by) {
            (Some(ConfirmedBy::Policy), _) => "policy".to_owned(),
            (_, Some(operator)) => operator.to_string(),
            (_, None) => "operators".to_owned(),
        };
        let network = intent.x402.as_ref().map_or_else(
            || format!("eip155:{chain_id}"),
            |payment| payment.resource.network.clone(),
        );
        Ok(Self {
            intent_id: intent.id.to_string(),
            kind: match intent.kind {
                IntentKind::Transfer => "transfer",
                IntentKind::X402 => "x402",
            },
            agent_id: intent.agent_id.to_string(),
            wallet: wallet.to_string(),
            recipient: intent.recipient.to_string(),
            amount_atomic: intent.amount.to_string(),
            asset: intent.asset.symbol(),
            network,
            tx_hash: tx_hash.clone(),
            block_number: intent.block_number,
            resource_url: intent
                .x402
                .as_ref()
                .and_then(|payment| payment.resource.resource_url.clone()),
            decided_by,
            confirmed_at,
            // Nothing changes an executed intent: its last update is its execution.
            executed_at: intent.updated_at,
            receipt_key_id: receipt_key_id.to_owned(),
        })
    }

    /// The receipt as JSON, times in RFC 3339 as the API writes them.
    pub fn to_json(&self) -> Value {
        let instant = |at: OffsetDateTime| at.format(&Rfc3339).unwrap_or_default();
        let mut receipt = json!({
            "intent_id": self.intent_id,
            "kind": self.kind,
            "agent_id": self.agent_id,
            "wallet": self.wallet,
            "recipient": self.recipient,
            "amount_atomic": self.amount_atomic,
            "asset": self.asset,
            "network": self.network,
            "tx_hash": self.tx_hash,
            "block_number": self.block_number,
            "decided_by": self.decided_by,
            "confirmed_at": instant(self.confirmed_at),
            "executed_at": instant(self.executed_at),
            "receipt_key_id": self.receipt_key_id,
        });
        if let (Some(url), Value::Object(fields)) = (&self.resource_url, &mut receipt) {
            fields.insert("resource_url".into(), json!(url));
        }
        receipt
    }

    /// The bytes the signature covers: the receipt's RFC 8785 canonical JSON (keys sorted, no
    /// whitespace, numbers and strings in their one canonical form).
    pub fn canonical_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_jcs::to_vec(&self.to_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Approvals, Operator};

    fn executed(kind: IntentKind) -> TransferIntentRecord {
        TransferIntentRecord {
            status: IntentStatus::Executed,
            tx_hash: Some(format!("0x{}", "ab".repeat(32))),
            confirmed_at: Some(OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("a time")),
            updated_at: OffsetDateTime::from_unix_timestamp(1_800_000_060).expect("a time"),
            confirmed_by: Some(ConfirmedBy::Operator),
            decided_by: Some(Operator::Cli { user: None }),
            approvals: Approvals {
                required: 1,
                received: 1,
            },
            block_number: Some(42),
            kind,
            ..TransferIntentRecord::fixture()
        }
    }

    fn wallet() -> EvmAddress {
        EvmAddress::from_bytes([0x01; 20])
    }

    #[test]
    fn only_an_executed_intent_has_a_receipt() {
        let pending = TransferIntentRecord::fixture();
        assert_eq!(
            Receipt::of(&pending, &wallet(), 8453, "rk_1"),
            Err(NotExecuted {
                status: pending.status
            })
        );
    }

    #[test]
    fn the_canonical_form_sorts_keys_and_has_no_whitespace() {
        let receipt = Receipt::of(&executed(IntentKind::Transfer), &wallet(), 8453, "rk_1")
            .expect("a receipt");
        let text = String::from_utf8(receipt.canonical_json().expect("canonical")).expect("UTF-8");
        assert!(text.starts_with(r#"{"agent_id":""#), "{text}");
        assert!(!text.contains(": ") && !text.contains(", "), "{text}");
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
                .expect("JSON")
                .keys()
                .cloned()
                .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert!(text.contains(r#""block_number":42"#), "{text}");
        assert!(
            text.contains(r#""confirmed_at":"2027-01-15T08:00:00Z""#),
            "{text}"
        );
        assert!(text.contains(r#""network":"eip155:8453""#), "{text}");
        assert!(text.contains(r#""decided_by":"cli""#), "{text}");
        assert!(
            !text.contains("resource_url"),
            "a transfer names no resource: {text}"
        );
    }

    #[test]
    fn the_auto_confirm_tier_decided_a_payment_and_its_resource_is_named() {
        let mut paid = executed(IntentKind::X402);
        paid.confirmed_by = Some(ConfirmedBy::Policy);
        paid.x402 = Some(crate::X402Payment {
            resource: crate::X402Resource {
                network: "eip155:8453".into(),
                resource_url: Some("https://api.example.com/report".into()),
            },
            nonce: Some([7; 32]),
            valid_before: None,
            payment_response: None,
        });
        let receipt = Receipt::of(&paid, &wallet(), 8453, "rk_1").expect("a receipt");
        assert_eq!(receipt.kind, "x402");
        assert_eq!(receipt.decided_by, "policy");
        assert_eq!(
            receipt.resource_url.as_deref(),
            Some("https://api.example.com/report")
        );
    }
}
