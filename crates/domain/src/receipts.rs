//! The receipt of money that moved: what an executed intent (a transfer or an x402 payment) paid,
//! in the form its Ed25519 signature covers, the RFC 8785 canonical JSON of the receipt.

use base64::Engine as _;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime};

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

/// An executed intent's receipt with its Ed25519 signature over the receipt's canonical JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedReceipt {
    pub receipt: Receipt,
    pub signature: [u8; 64],
}

impl SignedReceipt {
    /// The signature as the API writes it: base64url without padding.
    pub fn signature_text(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.signature)
    }

    /// `{"receipt": …, "signature": …}`, as `GET /v1/wallet/intents/{id}/receipt` answers.
    pub fn to_json(&self) -> Value {
        json!({"receipt": self.receipt.to_json(), "signature": self.signature_text()})
    }
}

/// The most receipts one export holds: a longer range is refused rather than cut short, since a
/// reconciliation missing rows would pass for complete.
pub const MAX_EXPORT_ROWS: usize = 50_000;

/// The executions an export covers: from `from` (included) to `to` (excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportRange {
    pub from: OffsetDateTime,
    pub to: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportRangeError {
    #[error(
        "the range's {bound} {given:?} is neither a date (2026-11-01) nor an RFC 3339 time \
         (2026-11-01T09:30:00Z)"
    )]
    NotATime { bound: &'static str, given: String },
    #[error("the range ends ({to}) before it starts ({from})")]
    Backwards { from: String, to: String },
}

impl ExportRange {
    /// `from` and `to` as an operator types them: an RFC 3339 time, or a date in UTC. A date in
    /// `from` starts at its midnight; a date in `to` includes that whole day, as in "from the
    /// 1st to the 30th".
    pub fn parse(from: &str, to: &str) -> Result<Self, ExportRangeError> {
        let from_at = instant("start", from, Duration::ZERO)?;
        let to_at = instant("end", to, Duration::DAY)?;
        if to_at < from_at {
            return Err(ExportRangeError::Backwards {
                from: from.to_owned(),
                to: to.to_owned(),
            });
        }
        Ok(Self {
            from: from_at,
            to: to_at,
        })
    }

    pub fn contains(&self, at: OffsetDateTime) -> bool {
        self.from <= at && at < self.to
    }
}

/// `given` as an instant; a bare date is its midnight in UTC plus `past_a_date`.
fn instant(
    bound: &'static str,
    given: &str,
    past_a_date: Duration,
) -> Result<OffsetDateTime, ExportRangeError> {
    let given = given.trim();
    if let Ok(at) = OffsetDateTime::parse(given, &Rfc3339) {
        return Ok(at);
    }
    Date::parse(given, format_description!("[year]-[month]-[day]"))
        .ok()
        .and_then(|date| date.midnight().assume_utc().checked_add(past_a_date))
        .ok_or_else(|| ExportRangeError::NotATime {
            bound,
            given: given.chars().take(64).collect(),
        })
}

/// The columns of a CSV export, one per field of a receipt, then its signature.
pub const EXPORT_COLUMNS: [&str; 16] = [
    "intent_id",
    "kind",
    "agent_id",
    "wallet",
    "recipient",
    "amount_atomic",
    "asset",
    "network",
    "tx_hash",
    "block_number",
    "resource_url",
    "decided_by",
    "confirmed_at",
    "executed_at",
    "receipt_key_id",
    "signature",
];

/// The receipts as CSV (RFC 4180, a header row first). The two cells a seller's challenge wrote
/// (the resource URL and the network) get a leading `'` where a spreadsheet would run them as a
/// formula (starting `=`, `+`, `-`, `@`, a tab or a carriage return); the others are the
/// service's own, and a signature may well start with `-`.
pub fn export_csv(receipts: &[SignedReceipt]) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(EXPORT_COLUMNS)?;
    for signed in receipts {
        let receipt = &signed.receipt;
        let instant = |at: OffsetDateTime| at.format(&Rfc3339).unwrap_or_default();
        let cells = [
            receipt.intent_id.clone(),
            receipt.kind.to_owned(),
            receipt.agent_id.clone(),
            receipt.wallet.clone(),
            receipt.recipient.clone(),
            receipt.amount_atomic.clone(),
            receipt.asset.to_owned(),
            inert_cell(&receipt.network),
            receipt.tx_hash.clone(),
            receipt
                .block_number
                .map(|block| block.to_string())
                .unwrap_or_default(),
            inert_cell(receipt.resource_url.as_deref().unwrap_or_default()),
            receipt.decided_by.clone(),
            instant(receipt.confirmed_at),
            instant(receipt.executed_at),
            receipt.receipt_key_id.clone(),
            signed.signature_text(),
        ];
        writer.write_record(cells)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|error| csv::Error::from(error.into_error()))?;
    Ok(String::from_utf8(bytes).expect("every cell is a Rust string"))
}

fn inert_cell(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

/// The receipts as a JSON array, each as `GET /v1/wallet/intents/{id}/receipt` answers it.
pub fn export_json(receipts: &[SignedReceipt]) -> Value {
    Value::Array(receipts.iter().map(SignedReceipt::to_json).collect())
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

    fn signed(receipt: Receipt) -> SignedReceipt {
        SignedReceipt {
            receipt,
            signature: [0xfb; 64],
        }
    }

    #[test]
    fn a_date_range_includes_its_last_day_and_a_time_range_ends_where_it_says() {
        let days = ExportRange::parse("2026-11-01", "2026-11-30").expect("a range");
        let at = |text: &str| OffsetDateTime::parse(text, &Rfc3339).expect("a time");
        assert_eq!(days.from, at("2026-11-01T00:00:00Z"));
        assert_eq!(days.to, at("2026-12-01T00:00:00Z"));
        assert!(days.contains(at("2026-11-30T23:59:59Z")));
        assert!(!days.contains(at("2026-12-01T00:00:00Z")));
        assert!(!days.contains(at("2026-10-31T23:59:59Z")));
        let times = ExportRange::parse("2026-11-01T09:00:00Z", "2026-11-01T10:00:00+01:00")
            .expect("a range");
        assert_eq!(times.from, times.to, "10:00 at +01:00 is 09:00 in UTC");
        assert!(!times.contains(times.from), "an empty range holds nothing");
    }

    #[test]
    fn a_range_that_is_not_times_or_runs_backwards_is_refused_with_the_bound() {
        assert_eq!(
            ExportRange::parse("yesterday", "2026-11-30"),
            Err(ExportRangeError::NotATime {
                bound: "start",
                given: "yesterday".into()
            })
        );
        assert!(matches!(
            ExportRange::parse("2026-11-01", "2026-13-01"),
            Err(ExportRangeError::NotATime { bound: "end", .. })
        ));
        let backwards = ExportRange::parse("2026-11-30", "2026-11-01").expect_err("refused");
        assert_eq!(
            backwards.to_string(),
            "the range ends (2026-11-01) before it starts (2026-11-30)"
        );
    }

    #[test]
    fn the_csv_has_a_header_and_one_row_per_receipt_with_its_signature() {
        let transfer = Receipt::of(&executed(IntentKind::Transfer), &wallet(), 8453, "rk_1")
            .expect("a receipt");
        let text = export_csv(&[signed(transfer.clone())]).expect("CSV");
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(
            reader
                .headers()
                .expect("a header")
                .iter()
                .collect::<Vec<_>>(),
            EXPORT_COLUMNS
        );
        let rows: Vec<csv::StringRecord> =
            reader.records().map(|row| row.expect("a row")).collect();
        assert_eq!(rows.len(), 1);
        let cell = |name: &str| {
            let column = EXPORT_COLUMNS.iter().position(|column| *column == name);
            rows[0][column.expect("a column")].to_owned()
        };
        assert_eq!(cell("intent_id"), transfer.intent_id);
        assert_eq!(cell("amount_atomic"), transfer.amount_atomic);
        assert_eq!(cell("block_number"), "42");
        assert_eq!(cell("resource_url"), "");
        assert_eq!(cell("executed_at"), "2027-01-15T08:01:00Z");
        assert_eq!(cell("signature"), signed(transfer).signature_text());
    }

    #[test]
    fn a_cell_a_spreadsheet_would_run_as_a_formula_is_made_inert() {
        let mut paid = executed(IntentKind::X402);
        paid.x402 = Some(crate::X402Payment {
            resource: crate::X402Resource {
                network: "eip155:8453".into(),
                resource_url: Some("=HYPERLINK(\"https://evil.example\",\"x\")".into()),
            },
            nonce: Some([7; 32]),
            valid_before: None,
            payment_response: None,
        });
        let receipt = Receipt::of(&paid, &wallet(), 8453, "rk_1").expect("a receipt");
        let text = export_csv(&[signed(receipt)]).expect("CSV");
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let row = reader.records().next().expect("a row").expect("valid");
        let column = EXPORT_COLUMNS
            .iter()
            .position(|column| *column == "resource_url");
        assert_eq!(
            &row[column.expect("a column")],
            "'=HYPERLINK(\"https://evil.example\",\"x\")"
        );
    }

    #[test]
    fn the_json_export_gives_each_receipt_as_the_api_does() {
        let receipt = Receipt::of(&executed(IntentKind::Transfer), &wallet(), 8453, "rk_1")
            .expect("a receipt");
        let exported = export_json(&[signed(receipt.clone())]);
        assert_eq!(exported[0]["receipt"], receipt.to_json());
        let signature = exported[0]["signature"].as_str().expect("text");
        assert_eq!(signature, signed(receipt).signature_text());
        assert!(
            !signature.contains(['+', '/', '=']),
            "base64url, unpadded: {signature}"
        );
    }
}
