//! The wallet: its address, spend policy, balances and transfer intents.

use domain::{
    format_units, Admitted, ApprovalCount, Asset, AtomicAmount, Chain, PolicyViolation,
    SpendPolicyRecord, SpendWindow, TransferIntentRecord, WalletBalances, WalletRecord,
    WindowUsage, X402Payment,
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::enums::{ConfirmedBy, IntentKind, IntentStatus, WalletStatus};
use crate::field_errors::{read_fields, FieldError};

#[derive(Debug, Serialize, ToSchema)]
pub struct WalletOut {
    pub id: Uuid,
    pub provider: String,
    pub chain: String,
    /// EIP-55 checksummed.
    pub address: String,
    pub custody: String,
    pub status: WalletStatus,
    pub delegated: bool,
    pub spend_policy: Option<SpendPolicyOut>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// The spend policy nested in a wallet: the effective policy plus its id.
#[derive(Debug, Serialize, ToSchema)]
pub struct SpendPolicyOut {
    pub id: Uuid,
    #[serde(flatten)]
    pub policy: SpendPolicyResponse,
}

impl WalletOut {
    /// The wallet with `spend_policy` rendered by the caller.
    pub fn with_policy(wallet: &WalletRecord, spend_policy: Option<SpendPolicyOut>) -> Self {
        Self {
            id: wallet.id.0,
            provider: wallet.provider.clone(),
            chain: wallet.chain.to_string(),
            address: wallet.address.to_string(),
            custody: wallet.custody.to_string(),
            status: wallet.status.into(),
            delegated: wallet.delegated,
            spend_policy,
            created_at: wallet.created_at,
        }
    }
}

impl From<&WalletRecord> for WalletOut {
    fn from(wallet: &WalletRecord) -> Self {
        Self::with_policy(wallet, wallet.spend_policy.as_ref().map(Into::into))
    }
}

impl From<&WalletRecord> for WalletAddressResponse {
    fn from(wallet: &WalletRecord) -> Self {
        Self {
            address: wallet.address.to_string(),
            chain: wallet.chain.to_string(),
        }
    }
}

impl From<&SpendPolicyRecord> for SpendPolicyOut {
    fn from(policy: &SpendPolicyRecord) -> Self {
        Self {
            id: policy.id.0,
            policy: SpendPolicyResponse::from(policy),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WalletAddressResponse {
    /// EIP-55 checksummed.
    pub address: String,
    pub chain: String,
}

/// The effective spend policy; `null` where a rule is not configured.
#[derive(Debug, Serialize, ToSchema)]
pub struct SpendPolicyResponse {
    pub asset: String,
    pub chain: String,
    pub decimals: u8,
    /// `null` for the chain's native asset.
    pub token_address: Option<String>,
    /// Integer in atomic units; `null` when no limit is configured.
    pub max_per_tx_atomic: Option<String>,
    /// Integer in atomic units; `null` when no limit is configured.
    pub max_daily_atomic: Option<String>,
    /// `null` when no allowlist is configured; an empty list allows no recipient.
    pub allowlisted_addresses: Option<Vec<String>>,
    /// Cap over a rolling 7 days, counted like the daily cap. Integer in atomic units; `null`
    /// when not configured.
    pub max_weekly_atomic: Option<String>,
    /// Cap over a rolling 30 days, counted like the daily cap. Integer in atomic units; `null`
    /// when not configured.
    pub max_monthly_atomic: Option<String>,
    /// Caps for single counterparties, on top of the wallet's; `null` when none is configured.
    pub recipient_limits: Option<Vec<RecipientLimitOut>>,
    /// A transfer at or under this amount, while those the policy confirmed in the rolling 24
    /// hours stay within `auto_confirm_daily_atomic`, is confirmed by the policy at creation.
    /// Integer in atomic units; `null` when not configured.
    pub auto_confirm_max_atomic: Option<String>,
    /// Integer in atomic units; `null` when not configured.
    pub auto_confirm_daily_atomic: Option<String>,
    /// Distinct operators' approvals a transfer above `approvals_required_above_atomic` needs (2
    /// to 5; every transfer when no amount is set); under it, one. `null`: one for every
    /// transfer.
    pub approvals_required: Option<u8>,
    /// Integer in atomic units; `null` when not configured.
    pub approvals_required_above_atomic: Option<String>,
    /// Whether the wallet pays x402 challenges (`/v1/wallet/x402/*`); `true` unless an operator
    /// turned them off.
    pub x402_enabled: bool,
    /// Each configured window: what it holds and what is left (`{}` when the policy caps none).
    /// Read only; left out of the agents `agentctl agents list` prints and of an issued key's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<SpendUsageOut>,
}

/// The caps of one counterparty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct RecipientLimitOut {
    /// EIP-55 checksummed.
    pub address: String,
    /// Integer in atomic units; `null` when not configured.
    pub max_per_tx_atomic: Option<String>,
    /// Over a rolling 24 hours, counted like the daily cap. Integer in atomic units; `null` when
    /// not configured.
    pub max_daily_atomic: Option<String>,
}

/// What a window the policy caps holds, and what a transfer may still take of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct WindowUsageOut {
    /// Integer in atomic units: held by intents whose money may still move, and moved within the
    /// window.
    pub spent_atomic: String,
    /// Integer in atomic units; `"0"` when the window holds its cap or more.
    pub remaining_atomic: String,
}

/// Each window the policy caps; a window not configured is left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct SpendUsageOut {
    /// The rolling 24 hours of `max_daily_atomic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub daily: Option<WindowUsageOut>,
    /// The rolling 7 days of `max_weekly_atomic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weekly: Option<WindowUsageOut>,
    /// The rolling 30 days of `max_monthly_atomic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monthly: Option<WindowUsageOut>,
    /// The rolling 24 hours of the transfers the policy confirmed, capped by
    /// `auto_confirm_daily_atomic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_confirm_daily: Option<WindowUsageOut>,
}

impl From<&[WindowUsage]> for SpendUsageOut {
    fn from(windows: &[WindowUsage]) -> Self {
        let mut usage = Self::default();
        for window in windows {
            let out = Some(WindowUsageOut {
                spent_atomic: window.spent.to_string(),
                remaining_atomic: window.remaining.to_string(),
            });
            match window.window {
                SpendWindow::Daily => usage.daily = out,
                SpendWindow::Weekly => usage.weekly = out,
                SpendWindow::Monthly => usage.monthly = out,
                SpendWindow::AutoConfirmDaily => usage.auto_confirm_daily = out,
            }
        }
        usage
    }
}

/// The spend policy's verdict on a transfer: whether it passed, else the rule that refused and
/// why, what it is (or would be) once admitted, and what is left of each window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PolicyVerdictOut {
    pub allowed: bool,
    /// The rule that refused (`allowlist`, `max_per_tx`, `recipient_max_per_tx`, `max_daily`,
    /// `max_weekly`, `max_monthly`, `recipient_max_daily`); `null` when allowed.
    pub rule: Option<String>,
    /// Why it refused, with what the window still allows; `null` when allowed.
    pub detail: Option<String>,
    /// Where the transfer stands once admitted: `confirmed` when the policy's auto-confirm tier
    /// takes it, `pending_confirmation` (waiting for operators) otherwise, and for one refused.
    #[schema(value_type = String, pattern = "^(pending_confirmation|confirmed)$")]
    pub would_be: IntentStatus,
    pub usage: SpendUsageOut,
}

impl PolicyVerdictOut {
    /// The verdict of `admitted` (the policy's judgement of a transfer), with the windows as
    /// they stand.
    pub fn of(admitted: &Result<Admitted, PolicyViolation>, windows: &[WindowUsage]) -> Self {
        match admitted {
            Ok(admitted) => Self::allowed(admitted.status(), windows),
            Err(violation) => Self {
                allowed: false,
                rule: Some(violation.rule().to_owned()),
                detail: Some(violation.to_string()),
                would_be: domain::IntentStatus::PendingConfirmation.into(),
                usage: windows.into(),
            },
        }
    }

    /// The verdict on a transfer the policy admitted as `status`.
    pub fn allowed(status: domain::IntentStatus, windows: &[WindowUsage]) -> Self {
        Self {
            allowed: true,
            rule: None,
            detail: None,
            would_be: status.into(),
            usage: windows.into(),
        }
    }
}

impl SpendPolicyResponse {
    /// The policy with what each window it caps holds (`windows`).
    pub fn with_usage(policy: &SpendPolicyRecord, windows: &[WindowUsage]) -> Self {
        Self {
            usage: Some(windows.into()),
            ..policy.into()
        }
    }
}

impl SpendPolicyOut {
    /// The policy with what each window it caps holds (`windows`).
    pub fn with_usage(policy: &SpendPolicyRecord, windows: &[WindowUsage]) -> Self {
        Self {
            id: policy.id.0,
            policy: SpendPolicyResponse::with_usage(policy, windows),
        }
    }
}

impl From<&SpendPolicyRecord> for SpendPolicyResponse {
    fn from(policy: &SpendPolicyRecord) -> Self {
        let rules = &policy.rules;
        let atomic = |amount: Option<AtomicAmount>| amount.map(|amount| amount.to_string());
        let recipient_limits = rules.recipient_limits.as_slice();
        Self {
            asset: policy.asset.asset.to_string(),
            chain: policy.asset.chain.to_string(),
            decimals: policy.asset.decimals,
            token_address: policy.asset.token_address.map(|a| a.to_string()),
            max_per_tx_atomic: atomic(rules.limits.max_per_tx),
            max_daily_atomic: atomic(rules.limits.max_daily),
            allowlisted_addresses: rules
                .allowlist
                .addresses()
                .map(|addresses| addresses.iter().map(ToString::to_string).collect()),
            max_weekly_atomic: atomic(rules.limits.max_weekly),
            max_monthly_atomic: atomic(rules.limits.max_monthly),
            recipient_limits: (!recipient_limits.is_empty()).then(|| {
                recipient_limits
                    .iter()
                    .map(|limit| RecipientLimitOut {
                        address: limit.address.to_string(),
                        max_per_tx_atomic: atomic(limit.max_per_tx),
                        max_daily_atomic: atomic(limit.max_daily),
                    })
                    .collect()
            }),
            auto_confirm_max_atomic: atomic(rules.auto_confirm.max),
            auto_confirm_daily_atomic: atomic(rules.auto_confirm.daily),
            approvals_required: rules.quorum.required.map(ApprovalCount::get),
            approvals_required_above_atomic: atomic(rules.quorum.above),
            x402_enabled: rules.x402_enabled,
            usage: None,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WalletAssetBalance {
    pub asset: String,
    pub chain: String,
    pub decimals: u8,
    /// Integer in atomic units.
    pub amount_atomic: String,
    /// The same amount as an exact decimal string.
    pub formatted_amount: String,
    pub symbol: String,
    /// `null` for the native asset.
    pub token_address: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WalletBalanceResponse {
    pub wallet_id: String,
    pub address: String,
    pub chain: String,
    pub assets: Vec<WalletAssetBalance>,
}

impl From<&WalletBalances> for WalletBalanceResponse {
    fn from(balances: &WalletBalances) -> Self {
        Self {
            wallet_id: balances.wallet.id.to_string(),
            address: balances.wallet.address.to_string(),
            chain: balances.wallet.chain.to_string(),
            assets: balances
                .assets
                .iter()
                .map(|asset| WalletAssetBalance {
                    asset: asset.asset.to_string(),
                    chain: asset.chain.to_string(),
                    decimals: asset.decimals,
                    amount_atomic: asset.amount.to_string(),
                    formatted_amount: format_units(asset.amount, asset.decimals),
                    symbol: asset.asset.symbol().to_owned(),
                    token_address: asset.token_address.map(|a| a.to_string()),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TransferIntentOut {
    pub id: Uuid,
    pub kind: IntentKind,
    pub status: IntentStatus,
    pub asset: String,
    pub chain: String,
    /// EIP-55 checksummed.
    pub recipient_address: String,
    /// Integer in atomic units.
    pub amount_atomic: String,
    pub token_address: Option<String>,
    /// The newest transaction sent for the intent, and once executed the one that was mined;
    /// `null` until a transaction is signed.
    pub tx_hash: Option<String>,
    pub failure_reason: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub confirmed_at: Option<OffsetDateTime>,
    /// `null` until it is confirmed.
    pub confirmed_by: Option<ConfirmedBy>,
    pub approvals: ApprovalsOut,
    /// What an x402 payment pays for and its authorization; `null` for a transfer.
    pub x402: Option<X402PaymentOut>,
}

/// An x402 payment's resource and authorization.
#[derive(Debug, Serialize, ToSchema)]
pub struct X402PaymentOut {
    pub resource_url: Option<String>,
    /// As the challenge named it: `eip155:<chain id>`, or version 1's `base` or `base-sepolia`.
    pub network: String,
    /// The authorization's nonce, `0x` and 64 hex digits; `null` until it is signed.
    pub nonce: Option<String>,
    /// Until when the payee may settle it; `null` until it is signed.
    #[serde(with = "time::serde::rfc3339::option")]
    pub valid_before: Option<OffsetDateTime>,
    /// The server's decoded `PAYMENT-RESPONSE`, when a fetch made here received one.
    #[schema(value_type = Option<Object>)]
    pub payment_response: Option<serde_json::Map<String, serde_json::Value>>,
}

impl From<&X402Payment> for X402PaymentOut {
    fn from(payment: &X402Payment) -> Self {
        Self {
            resource_url: payment.resource.resource_url.clone(),
            network: payment.resource.network.clone(),
            nonce: payment
                .nonce
                .map(|nonce| format!("0x{}", hex::encode(nonce))),
            valid_before: payment.valid_before,
            payment_response: payment.payment_response.clone(),
        }
    }
}

/// The distinct operators' approvals an intent needs and has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct ApprovalsOut {
    /// What the policy in force asks of it: 1, or 2 to 5 above the quorum's threshold; 0 for an
    /// intent the policy confirmed.
    pub required: u8,
    pub received: u8,
}

impl From<&TransferIntentRecord> for TransferIntentOut {
    fn from(intent: &TransferIntentRecord) -> Self {
        Self {
            id: intent.id.0,
            kind: intent.kind.into(),
            status: intent.status.into(),
            asset: intent.asset.to_string(),
            chain: intent.chain.to_string(),
            recipient_address: intent.recipient.to_string(),
            amount_atomic: intent.amount.to_string(),
            token_address: intent.token_address.map(|a| a.to_string()),
            tx_hash: intent.tx_hash.clone(),
            failure_reason: intent.failure_reason.clone(),
            created_at: intent.created_at,
            updated_at: intent.updated_at,
            confirmed_at: intent.confirmed_at,
            confirmed_by: intent.confirmed_by.map(Into::into),
            approvals: ApprovalsOut {
                required: intent.approvals.required,
                received: intent.approvals.received,
            },
            x402: intent.x402.as_ref().map(X402PaymentOut::from),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TransferIntentPage {
    pub items: Vec<TransferIntentOut>,
    /// Pass as `cursor` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// The asset of a transfer that names none.
pub fn default_asset() -> String {
    Asset::Usdc.symbol().to_owned()
}

/// The chain of a transfer that names none.
pub fn default_chain() -> String {
    Chain::Base.as_str().to_owned()
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct WalletSendRequest {
    /// Recipient address: 0x and 40 hex digits, all lower-case, all upper-case, or mixed case
    /// passing the EIP-55 checksum.
    #[schema(pattern = "^0x([0-9a-f]{40}|[0-9A-F]{40}|[0-9a-fA-F]{40})$")]
    pub to: String,
    /// Integer in atomic units, greater than zero, at most 2^128 - 1.
    #[schema(pattern = "^[0-9]*[1-9][0-9]*$")]
    pub amount_atomic: String,
    #[serde(default = "default_asset")]
    #[schema(default = default_asset)]
    pub asset: String,
    #[serde(default = "default_chain")]
    #[schema(default = default_chain)]
    pub chain: String,
    /// Client-chosen, 1 to 255 characters without control characters; kept for 24 hours. A reuse
    /// with other parameters returns 409.
    #[serde(default)]
    #[schema(
        min_length = 1,
        max_length = 255,
        pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"
    )]
    pub idempotency_key: Option<String>,
}

/// An x402 challenge for the spend policy to judge, as a payment would be, without reserving.
#[derive(Debug, Deserialize, ToSchema)]
pub struct X402CheckRequest {
    /// The challenge as the server answered it, as `POST /v1/wallet/x402/authorize` takes it.
    #[schema(value_type = Object)]
    pub payment_required: serde_json::Value,
    /// The agent's own ceiling in atomic units: a challenge asking more is refused (403, rule
    /// `max_amount`) before the policy is asked.
    #[schema(pattern = "^[0-9]+$")]
    pub max_amount_atomic: Option<String>,
}

/// What `POST /v1/wallet/check` judges: a send's body, or an x402 challenge (a body with
/// `payment_required`).
// Read by `WalletCheckRequest::read`, which names the field of an error in either shape; the
// untagged form gives the API description its `oneOf`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum WalletCheckRequest {
    Send(WalletSendRequest),
    Payment(X402CheckRequest),
}

impl WalletCheckRequest {
    /// The body read as a challenge when it holds `payment_required`, else as a send.
    pub fn read(body: serde_json::Map<String, serde_json::Value>) -> Result<Self, FieldError> {
        let payment = body.contains_key("payment_required");
        let body = serde_json::Value::Object(body);
        match payment {
            true => read_fields(body).map(Self::Payment),
            false => read_fields(body).map(Self::Send),
        }
    }
}

/// A resource to fetch for the agent, paid from the wallet when it answers 402.
#[derive(Debug, Deserialize, ToSchema)]
pub struct X402FetchRequest {
    /// `https` (plain `http` only to private addresses, where those are allowed), no
    /// credentials, no fragment; at most 2,048 characters.
    #[schema(max_length = 2048)]
    pub url: String,
    /// GET (the default), POST, PUT or DELETE.
    #[schema(pattern = "^(GET|POST|PUT|DELETE)$")]
    pub method: Option<String>,
    /// Headers to send, at most 32; not `Authorization`, `Cookie`, `Host`, hop-by-hop headers,
    /// `Content-Length` or the payment headers.
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// The request's body, at most 1 MiB.
    pub body: Option<String>,
    /// The agent's own ceiling in atomic units: a challenge asking more is refused (403, rule
    /// `max_amount`) before the policy is asked.
    #[schema(pattern = "^[0-9]+$")]
    pub max_amount_atomic: String,
    /// The same key pays at most one authorization: a fetch repeated with it sends the same
    /// payment header.
    #[schema(min_length = 1, max_length = 255)]
    pub idempotency_key: String,
}

/// Whether the resource had to be paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum X402FetchStatus {
    Paid,
    Free,
}

/// The resource's answer: its status, the headers shown (`content-type`, `content-length`,
/// `payment-response`, `etag`, `cache-control`) and its body, as text or, when not UTF-8, in
/// `body_base64`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FetchedResponseOut {
    pub status: u16,
    pub headers: std::collections::BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
}

impl FetchedResponseOut {
    pub fn of(status: u16, headers: &[(String, String)], body: Vec<u8>) -> Self {
        let headers = headers
            .iter()
            .filter(|(name, _)| domain::x402::SHOWN_RESPONSE_HEADERS.contains(&name.as_str()))
            .cloned()
            .collect();
        let (body, body_base64) = match String::from_utf8(body) {
            Ok(text) => (Some(text), None),
            Err(bytes) => {
                use base64::Engine as _;
                let encoded = base64::engine::general_purpose::STANDARD.encode(bytes.as_bytes());
                (None, Some(encoded))
            }
        };
        Self {
            status,
            headers,
            body,
            body_base64,
        }
    }
}

/// The payment a fetch made: its intent, and what the server said of its settlement.
#[derive(Debug, Serialize, ToSchema)]
pub struct X402FetchPaymentOut {
    pub intent: TransferIntentOut,
    /// The server's `PAYMENT-RESPONSE`, decoded, when it sent one.
    #[schema(value_type = Option<Object>)]
    pub settlement: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A fetched resource, and its payment when it asked for one.
#[derive(Debug, Serialize, ToSchema)]
pub struct X402FetchOut {
    pub status: X402FetchStatus,
    pub response: FetchedResponseOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<X402FetchPaymentOut>,
}

impl X402FetchOut {
    /// A resource that asked for no payment.
    pub fn free(response: FetchedResponseOut) -> Self {
        Self {
            status: X402FetchStatus::Free,
            response,
            payment: None,
        }
    }

    /// A resource paid by `intent`, with what its server said of the settlement.
    pub fn paid(
        response: FetchedResponseOut,
        intent: &TransferIntentRecord,
        settlement: Option<domain::x402::SettlementResponse>,
    ) -> Self {
        Self {
            status: X402FetchStatus::Paid,
            response,
            payment: Some(X402FetchPaymentOut {
                intent: TransferIntentOut::from(intent),
                settlement: settlement.map(|settlement| settlement.object),
            }),
        }
    }
}

/// A resource that failed after it was paid: why, and the payment's intent, kept.
#[derive(Debug, Serialize, ToSchema)]
pub struct X402FetchFailedOut {
    pub detail: String,
    pub intent: TransferIntentOut,
}

/// The signed receipt of an executed intent.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptOut {
    /// `intent_id`, `kind`, `agent_id`, `wallet`, `recipient`, `amount_atomic`, `asset`,
    /// `network`, `tx_hash`, `block_number`, `resource_url` (x402 payments), `decided_by`
    /// (`policy` or the operator), `confirmed_at`, `executed_at`, `receipt_key_id`.
    #[schema(value_type = Object)]
    pub receipt: serde_json::Value,
    /// Base64url (unpadded) of the Ed25519 signature, by the key `receipt_key_id`, over the RFC
    /// 8785 canonical JSON of `receipt`.
    pub signature: String,
}

impl From<&domain::receipts::SignedReceipt> for ReceiptOut {
    fn from(signed: &domain::receipts::SignedReceipt) -> Self {
        Self {
            receipt: signed.receipt.to_json(),
            signature: signed.signature_text(),
        }
    }
}

/// A key receipts are or were signed with.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptKeyOut {
    /// What a receipt's `receipt_key_id` names.
    pub id: String,
    /// `Ed25519`.
    pub algorithm: &'static str,
    /// Base64url (unpadded) of the 32 raw bytes of the public key.
    pub public_key: String,
}

/// Every key receipts were signed with, the current one first.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptKeysOut {
    pub keys: Vec<ReceiptKeyOut>,
}

impl ReceiptKeysOut {
    /// The keys given as their ids and public keys.
    pub fn of<'a>(keys: impl IntoIterator<Item = (&'a str, &'a [u8; 32])>) -> Self {
        use base64::Engine as _;
        Self {
            keys: keys
                .into_iter()
                .map(|(id, public_key)| ReceiptKeyOut {
                    id: id.to_owned(),
                    algorithm: "Ed25519",
                    public_key: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(public_key),
                })
                .collect(),
        }
    }
}

/// An x402 challenge for the wallet to pay.
#[derive(Debug, Deserialize, ToSchema)]
pub struct X402AuthorizeRequest {
    /// The challenge as the server answered it: the `PAYMENT-REQUIRED` header's value (base64),
    /// its decoded object, or a version 1 402 body. At most 64 KiB and 32 `accepts` entries.
    #[schema(value_type = Object)]
    pub payment_required: serde_json::Value,
    /// The resource paid for, when the challenge names none (at most 2,048 characters).
    pub resource_url: Option<String>,
    /// The agent's own ceiling in atomic units: a challenge asking more is refused (403, rule
    /// `max_amount`) before the policy is asked.
    #[schema(pattern = "^[0-9]+$")]
    pub max_amount_atomic: Option<String>,
    /// The same key with the same payment terms answers the same intent and authorization.
    #[schema(min_length = 1, max_length = 255)]
    pub idempotency_key: String,
}

/// Whether an x402 payment was signed, or waits for operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum X402AuthorizationStatus {
    Authorized,
    PendingConfirmation,
}

/// A signed payment authorization: repeat the request with `header` set to `payment_signature`.
#[derive(Debug, Serialize, ToSchema)]
pub struct X402AuthorizedOut {
    /// `authorized`.
    pub status: X402AuthorizationStatus,
    /// `PAYMENT-SIGNATURE` (version 2) or `X-PAYMENT` (version 1).
    pub header: String,
    /// The header's value; single use, valid until `valid_before`.
    pub payment_signature: String,
    #[serde(with = "time::serde::rfc3339")]
    pub valid_before: OffsetDateTime,
    pub intent: TransferIntentOut,
}

impl X402AuthorizedOut {
    /// The answer for an authorized `intent` whose payment header is `header: payment_signature`;
    /// `None` when the intent holds no signed window, which an authorized payment always does.
    pub fn of(
        intent: &TransferIntentRecord,
        header: &str,
        payment_signature: String,
    ) -> Option<Self> {
        let valid_before = intent.x402.as_ref()?.valid_before?;
        Some(Self {
            status: X402AuthorizationStatus::Authorized,
            header: header.to_owned(),
            payment_signature,
            valid_before,
            intent: TransferIntentOut::from(intent),
        })
    }
}

/// The console page where an operator decides on intent `id`, under the console's public URL
/// (without its trailing slash).
pub fn approval_url(console_base_url: &str, id: Uuid) -> String {
    format!("{console_base_url}/console/intents/{id}")
}

/// A payment that waits for operators: retry with the same `idempotency_key` once approved.
#[derive(Debug, Serialize, ToSchema)]
pub struct X402PendingOut {
    /// `pending_confirmation`.
    pub status: X402AuthorizationStatus,
    pub intent: TransferIntentOut,
    /// Where an operator decides on the payment.
    pub approval_url: String,
}

impl X402PendingOut {
    /// The answer for a pending `intent`, decided on under the console at `console_base_url`.
    pub fn of(intent: &TransferIntentRecord, console_base_url: &str) -> Self {
        Self {
            status: X402AuthorizationStatus::PendingConfirmation,
            approval_url: approval_url(console_base_url, intent.id.0),
            intent: TransferIntentOut::from(intent),
        }
    }
}
