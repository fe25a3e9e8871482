//! Row types as diesel reads and writes them, and their conversion to and from port records.

use std::str::FromStr;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use domain::keys::{AgentKeyRecord, KeyGrant, KeyId, Scope, Scopes};
use domain::{
    AgentId, AgentKeyHash, AgentRecord, Allowlist, ApprovalCount, Approvals, Asset, AtomicAmount,
    AutoConfirm, Chain, ConfirmedBy, Custody, EmailAddress, EmailInboxId, EmailInboxRecord,
    EvmAddress, IdempotencyKey, IntentId, IntentKind, IntentStatus, Label, Operator, PhoneNumber,
    PhoneNumberId, PhoneNumberRecord, PolicyAsset, Quorum, RecipientLimit, RecipientLimits,
    SpendLimits, SpendPolicyId, SpendPolicyRecord, SpendRules, SponsorId, TransferIntentRecord,
    WalletId, WalletRecord, WalletStatus, X402Payment, X402Resource, U256,
};
use ports::StoreError;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::errors::corrupt;
use crate::schema::{
    agent_keys, agents, email_inboxes, phone_numbers, spend_policies, transfer_intents, wallets,
};

#[derive(Queryable, Selectable)]
#[diesel(table_name = agents, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AgentRow {
    id: Uuid,
    sponsor_id: Uuid,
    label: Option<String>,
    is_active: bool,
    created_at: OffsetDateTime,
}

impl AgentRow {
    pub(crate) fn into_record(self) -> Result<AgentRecord, StoreError> {
        Ok(AgentRecord {
            id: AgentId(self.id),
            sponsor_id: SponsorId(self.sponsor_id),
            label: self
                .label
                .as_deref()
                .map(Label::parse)
                .transpose()
                .map_err(|error| corrupt(format!("label: {error}")))?,
            is_active: self.is_active,
            created_at: self.created_at,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = agent_keys, check_for_backend(diesel::pg::Pg))]
pub(crate) struct AgentKeyRow {
    id: Uuid,
    agent_id: Uuid,
    key_hash: Vec<u8>,
    label: Option<String>,
    scopes: Vec<String>,
    expires_at: Option<OffsetDateTime>,
    created_at: OffsetDateTime,
    last_used_at: Option<OffsetDateTime>,
    parent_id: Option<Uuid>,
    depth: i16,
    is_first: bool,
}

impl AgentKeyRow {
    pub(crate) fn into_record(self) -> Result<AgentKeyRecord, StoreError> {
        let scopes = self
            .scopes
            .iter()
            .map(|scope| Scope::parse(scope).ok_or_else(|| corrupt(format!("scope {scope:?}"))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AgentKeyRecord {
            id: KeyId(self.id),
            agent_id: AgentId(self.agent_id),
            hash: AgentKeyHash::from_slice(&self.key_hash)
                .ok_or_else(|| corrupt("agent key hash is not 32 bytes"))?,
            label: self
                .label
                .as_deref()
                .map(Label::parse)
                .transpose()
                .map_err(|error| corrupt(format!("key label: {error}")))?,
            grant: KeyGrant {
                scopes: Scopes::of(scopes),
                expires_at: self.expires_at,
                depth: u8::try_from(self.depth).map_err(|_| corrupt("key depth"))?,
            },
            parent: self.parent_id.map(KeyId),
            first: self.is_first,
            created_at: self.created_at,
            last_used_at: self.last_used_at,
        })
    }
}

/// The column form of `scopes`: their names, in the contract's order.
pub(crate) fn scopes_column(scopes: Scopes) -> Vec<&'static str> {
    scopes.iter().map(Scope::as_str).collect()
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = phone_numbers, check_for_backend(diesel::pg::Pg))]
pub(crate) struct PhoneNumberRow {
    id: Uuid,
    number: String,
    country_iso2: Option<String>,
    provider: String,
    created_at: OffsetDateTime,
}

impl PhoneNumberRow {
    pub(crate) fn into_record(self) -> Result<PhoneNumberRecord, StoreError> {
        Ok(PhoneNumberRecord {
            id: PhoneNumberId(self.id),
            number: PhoneNumber::parse(&self.number)
                .map_err(|error| corrupt(format!("phone number {:?}: {error}", self.number)))?,
            country_iso2: self.country_iso2,
            provider: self.provider,
            created_at: self.created_at,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = email_inboxes, check_for_backend(diesel::pg::Pg))]
pub(crate) struct EmailInboxRow {
    id: Uuid,
    address: String,
    provider: String,
    created_at: OffsetDateTime,
}

impl EmailInboxRow {
    pub(crate) fn into_record(self) -> Result<EmailInboxRecord, StoreError> {
        Ok(EmailInboxRecord {
            id: EmailInboxId(self.id),
            address: EmailAddress::parse(&self.address)
                .map_err(|error| corrupt(format!("email address {:?}: {error}", self.address)))?,
            provider: self.provider,
            created_at: self.created_at,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = wallets, check_for_backend(diesel::pg::Pg))]
pub(crate) struct WalletRow {
    id: Uuid,
    provider: String,
    chain: String,
    address: String,
    custody: String,
    status: String,
    delegated: bool,
    created_at: OffsetDateTime,
}

impl WalletRow {
    pub(crate) fn into_record(
        self,
        spend_policy: Option<SpendPolicyRecord>,
    ) -> Result<WalletRecord, StoreError> {
        Ok(WalletRecord {
            id: WalletId(self.id),
            provider: self.provider,
            chain: parse_chain(&self.chain)?,
            address: parse_address(&self.address)?,
            custody: Custody::parse(&self.custody)
                .ok_or_else(|| corrupt(format!("custody {:?}", self.custody)))?,
            status: WalletStatus::parse(&self.status)
                .ok_or_else(|| corrupt(format!("wallet status {:?}", self.status)))?,
            delegated: self.delegated,
            spend_policy,
            created_at: self.created_at,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = spend_policies, check_for_backend(diesel::pg::Pg))]
pub(crate) struct SpendPolicyRow {
    pub(crate) id: Uuid,
    asset: String,
    chain: String,
    decimals: i16,
    token_address: Option<String>,
    max_per_tx_atomic: Option<BigDecimal>,
    max_daily_atomic: Option<BigDecimal>,
    allowlisted_addresses: Option<Vec<String>>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    max_weekly_atomic: Option<BigDecimal>,
    max_monthly_atomic: Option<BigDecimal>,
    recipient_limits: Option<serde_json::Value>,
    auto_confirm_max_atomic: Option<BigDecimal>,
    auto_confirm_daily_atomic: Option<BigDecimal>,
    approvals_required: Option<i16>,
    approvals_required_above_atomic: Option<BigDecimal>,
    x402_enabled: bool,
}

/// One recipient's caps as `spend_policies.recipient_limits` keeps them.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredRecipientLimit {
    address: String,
    max_per_tx_atomic: Option<String>,
    max_daily_atomic: Option<String>,
}

/// The stored form of a policy's per-recipient caps; `None` when it caps no recipient.
pub(crate) fn recipient_limits_column(limits: &RecipientLimits) -> Option<serde_json::Value> {
    let stored: Vec<StoredRecipientLimit> = limits
        .as_slice()
        .iter()
        .map(|limit| StoredRecipientLimit {
            address: address_column(&limit.address),
            max_per_tx_atomic: limit.max_per_tx.map(|max| max.to_string()),
            max_daily_atomic: limit.max_daily.map(|max| max.to_string()),
        })
        .collect();
    (!stored.is_empty()).then(|| serde_json::to_value(stored).expect("strings serialise as JSON"))
}

fn recipient_limits_from(stored: Option<serde_json::Value>) -> Result<RecipientLimits, StoreError> {
    let Some(stored) = stored else {
        return Ok(RecipientLimits::default());
    };
    let stored: Vec<StoredRecipientLimit> = serde_json::from_value(stored)
        .map_err(|error| corrupt(format!("recipient limits: {error}")))?;
    let cap = |digits: Option<String>| {
        digits
            .map(|digits| {
                AtomicAmount::parse(&digits)
                    .map_err(|error| corrupt(format!("recipient limit: {error}")))
            })
            .transpose()
    };
    let limits = stored
        .into_iter()
        .map(|limit| {
            Ok(RecipientLimit {
                address: parse_address(&limit.address)?,
                max_per_tx: cap(limit.max_per_tx_atomic)?,
                max_daily: cap(limit.max_daily_atomic)?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    RecipientLimits::of(limits).map_err(corrupt)
}

impl SpendPolicyRow {
    pub(crate) fn into_record(self) -> Result<SpendPolicyRecord, StoreError> {
        let allowlist = match self.allowlisted_addresses {
            None => Allowlist::unrestricted(),
            Some(addresses) => Allowlist::of(
                addresses
                    .iter()
                    .map(|address| parse_address(address))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let amount =
            |stored: &Option<BigDecimal>| stored.as_ref().map(amount_from_numeric).transpose();
        let approvals_required = self
            .approvals_required
            .map(|count| {
                u8::try_from(count)
                    .ok()
                    .and_then(|count| ApprovalCount::new(count).ok())
                    .ok_or_else(|| corrupt(format!("approvals required {count}")))
            })
            .transpose()?;
        Ok(SpendPolicyRecord {
            id: SpendPolicyId(self.id),
            asset: PolicyAsset {
                asset: parse_asset(&self.asset)?,
                chain: parse_chain(&self.chain)?,
                decimals: u8::try_from(self.decimals).map_err(corrupt)?,
                token_address: self
                    .token_address
                    .as_deref()
                    .map(parse_address)
                    .transpose()?,
            },
            rules: SpendRules {
                limits: SpendLimits {
                    max_per_tx: amount(&self.max_per_tx_atomic)?,
                    max_daily: amount(&self.max_daily_atomic)?,
                    max_weekly: amount(&self.max_weekly_atomic)?,
                    max_monthly: amount(&self.max_monthly_atomic)?,
                },
                allowlist,
                recipient_limits: recipient_limits_from(self.recipient_limits)?,
                auto_confirm: AutoConfirm {
                    max: amount(&self.auto_confirm_max_atomic)?,
                    daily: amount(&self.auto_confirm_daily_atomic)?,
                },
                quorum: Quorum {
                    required: approvals_required,
                    above: amount(&self.approvals_required_above_atomic)?,
                },
                x402_enabled: self.x402_enabled,
            },
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// Addresses are stored as lower-case hex, which `EvmAddress::parse` accepts without a checksum.
pub(crate) fn address_column(address: &EvmAddress) -> String {
    address.to_string().to_ascii_lowercase()
}

pub(crate) fn parse_address(stored: &str) -> Result<EvmAddress, StoreError> {
    EvmAddress::parse(stored).map_err(|error| corrupt(format!("address {stored:?}: {error}")))
}

fn parse_asset(stored: &str) -> Result<Asset, StoreError> {
    Asset::parse(stored).ok_or_else(|| corrupt(format!("asset {stored:?}")))
}

fn parse_chain(stored: &str) -> Result<Chain, StoreError> {
    Chain::parse(stored).ok_or_else(|| corrupt(format!("chain {stored:?}")))
}

pub(crate) fn numeric_column(amount: &AtomicAmount) -> BigDecimal {
    u256_numeric(amount.value())
}

pub(crate) fn u256_numeric(value: U256) -> BigDecimal {
    BigDecimal::from_str(&value.to_string()).expect("decimal digits are a valid BigDecimal")
}

pub(crate) fn amount_from_numeric(stored: &BigDecimal) -> Result<AtomicAmount, StoreError> {
    AtomicAmount::new(u256_from_numeric(stored)?)
        .map_err(|error| corrupt(format!("amount: {error}")))
}

/// A non-negative integral NUMERIC (an amount or a sum of amounts) as a 256-bit integer.
/// The decimal digits of a stored integer (NUMERIC with scale 0).
pub(crate) fn integer_digits(stored: &BigDecimal) -> String {
    let (digits, _) = stored.with_scale(0).as_bigint_and_exponent();
    digits.to_string()
}

pub(crate) fn u256_from_numeric(stored: &BigDecimal) -> Result<U256, StoreError> {
    U256::from_str_radix(&integer_digits(stored), 10)
        .map_err(|error| corrupt(format!("amount {stored}: {error}")))
}

/// A sum of amounts as a 256-bit integer, `U256::MAX` when it does not fit: a total too large to
/// count is still larger than any limit.
pub(crate) fn u256_saturating_from_numeric(sum: &BigDecimal) -> U256 {
    U256::from_str_radix(&integer_digits(sum), 10).unwrap_or(U256::MAX)
}

/// A row count for `LIMIT`.
pub(crate) fn row_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

pub(crate) fn allowlist_column(allowlist: &Allowlist) -> Option<Vec<String>> {
    allowlist
        .addresses()
        .map(|addresses| addresses.iter().map(address_column).collect())
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = transfer_intents, check_for_backend(diesel::pg::Pg))]
pub(crate) struct TransferIntentRow {
    id: Uuid,
    agent_id: Uuid,
    wallet_id: Uuid,
    status: String,
    asset: String,
    chain: String,
    token_address: Option<String>,
    recipient_address: String,
    amount_atomic: BigDecimal,
    idempotency_key: Option<String>,
    tx_hash: Option<String>,
    failure_reason: Option<String>,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
    confirmed_at: Option<OffsetDateTime>,
    decided_by: Option<String>,
    confirmed_by: Option<String>,
    approvals_required: i16,
    approvals_received: i16,
    key_id: Option<Uuid>,
    kind: String,
    block_number: Option<i64>,
}

/// An intent as the event log keeps it (migration 000017): the row's columns under their names,
/// the amount as text, times as PostgreSQL writes them in JSON. Events written before migration
/// 000018 carry no confirmation or approvals: those of a confirmed intent read as one operator's.
#[derive(serde::Deserialize)]
struct StoredIntent {
    id: Uuid,
    agent_id: Uuid,
    wallet_id: Uuid,
    status: String,
    asset: String,
    chain: String,
    token_address: Option<String>,
    recipient_address: String,
    amount_atomic: String,
    idempotency_key: Option<String>,
    tx_hash: Option<String>,
    failure_reason: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    updated_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    confirmed_at: Option<OffsetDateTime>,
    decided_by: Option<String>,
    confirmed_by: Option<String>,
    approvals_required: Option<i16>,
    approvals_received: Option<i16>,
    /// Written since migration 000037; every intent before it was a transfer.
    kind: Option<String>,
    x402: Option<StoredX402Payment>,
}

/// An x402 intent's payment as its events keep it (migration 000037).
#[derive(serde::Deserialize)]
struct StoredX402Payment {
    resource_url: Option<String>,
    network: String,
    nonce: Option<String>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    valid_before: Option<OffsetDateTime>,
    payment_response: Option<serde_json::Map<String, serde_json::Value>>,
}

impl StoredX402Payment {
    fn into_payment(self) -> Result<X402Payment, StoreError> {
        Ok(X402Payment {
            resource: X402Resource {
                network: self.network,
                resource_url: self.resource_url,
            },
            nonce: self.nonce.as_deref().map(nonce_from_hex).transpose()?,
            valid_before: self
                .valid_before
                .map(|at| at.to_offset(time::UtcOffset::UTC)),
            payment_response: self.payment_response,
        })
    }
}

/// An authorization's nonce as events write it: `0x` and 64 hex digits.
fn nonce_from_hex(text: &str) -> Result<[u8; 32], StoreError> {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    let mut nonce = [0u8; 32];
    hex::decode_to_slice(digits, &mut nonce)
        .map_err(|error| corrupt(format!("an x402 nonce {text:?}: {error}")))?;
    Ok(nonce)
}

/// The intent an event keeps, read as its row would be, with its x402 payment.
pub(crate) fn intent_from_stored(
    stored: serde_json::Value,
) -> Result<TransferIntentRecord, StoreError> {
    let mut stored: StoredIntent = serde_json::from_value(stored)
        .map_err(|error| corrupt(format!("an event's intent: {error}")))?;
    let x402 = stored
        .x402
        .take()
        .map(StoredX402Payment::into_payment)
        .transpose()?;
    let mut intent = TransferIntentRow::from_stored(stored)?.into_record()?;
    intent.x402 = x402;
    Ok(intent)
}

impl TransferIntentRow {
    /// The intent an event keeps, read as its row would be; times in UTC, as the row's are.
    fn from_stored(stored: StoredIntent) -> Result<Self, StoreError> {
        let utc = |at: OffsetDateTime| at.to_offset(time::UtcOffset::UTC);
        let confirmed_before_approvals = stored.confirmed_at.is_some();
        Ok(Self {
            id: stored.id,
            agent_id: stored.agent_id,
            wallet_id: stored.wallet_id,
            status: stored.status,
            asset: stored.asset,
            chain: stored.chain,
            token_address: stored.token_address,
            recipient_address: stored.recipient_address,
            amount_atomic: BigDecimal::from_str(&stored.amount_atomic)
                .map_err(|error| corrupt(format!("an event's intent amount: {error}")))?,
            idempotency_key: stored.idempotency_key,
            tx_hash: stored.tx_hash,
            failure_reason: stored.failure_reason,
            created_at: utc(stored.created_at),
            updated_at: utc(stored.updated_at),
            confirmed_at: stored.confirmed_at.map(utc),
            decided_by: stored.decided_by,
            confirmed_by: stored.confirmed_by.or_else(|| {
                confirmed_before_approvals.then(|| ConfirmedBy::Operator.as_str().to_owned())
            }),
            approvals_required: stored.approvals_required.unwrap_or(1),
            approvals_received: stored
                .approvals_received
                .unwrap_or(i16::from(confirmed_before_approvals)),
            // An event's intent is shown to its agent, which is shown no key id.
            key_id: None,
            kind: stored
                .kind
                .unwrap_or_else(|| IntentKind::Transfer.as_str().to_owned()),
            // Receipts read it from the intent's row; events do not carry it.
            block_number: None,
        })
    }

    pub(crate) fn into_record(self) -> Result<TransferIntentRecord, StoreError> {
        Ok(TransferIntentRecord {
            id: IntentId(self.id),
            agent_id: AgentId(self.agent_id),
            wallet_id: WalletId(self.wallet_id),
            status: IntentStatus::parse(&self.status)
                .ok_or_else(|| corrupt(format!("intent status {:?}", self.status)))?,
            asset: parse_asset(&self.asset)?,
            chain: parse_chain(&self.chain)?,
            token_address: self
                .token_address
                .as_deref()
                .map(parse_address)
                .transpose()?,
            recipient: parse_address(&self.recipient_address)?,
            amount: amount_from_numeric(&self.amount_atomic)?,
            idempotency_key: self
                .idempotency_key
                .as_deref()
                .map(IdempotencyKey::parse)
                .transpose()
                .map_err(|error| corrupt(format!("idempotency key: {error}")))?,
            tx_hash: self.tx_hash,
            failure_reason: self.failure_reason,
            created_at: self.created_at,
            updated_at: self.updated_at,
            confirmed_at: self.confirmed_at,
            decided_by: self
                .decided_by
                .as_deref()
                .map(Operator::parse_stored)
                .transpose()
                .map_err(|error| corrupt(format!("decided_by: {error}")))?,
            confirmed_by: self
                .confirmed_by
                .as_deref()
                .map(|by| {
                    ConfirmedBy::parse(by).ok_or_else(|| corrupt(format!("confirmed_by {by:?}")))
                })
                .transpose()?,
            approvals: Approvals {
                required: approval_count(self.approvals_required)?,
                received: approval_count(self.approvals_received)?,
            },
            key_id: self.key_id.map(KeyId),
            kind: IntentKind::parse(&self.kind)
                .ok_or_else(|| corrupt(format!("intent kind {:?}", self.kind)))?,
            x402: None,
            block_number: self
                .block_number
                .map(|block| {
                    u64::try_from(block).map_err(|_| corrupt(format!("block number {block}")))
                })
                .transpose()?,
        })
    }
}

fn approval_count(stored: i16) -> Result<u8, StoreError> {
    u8::try_from(stored).map_err(|_| corrupt(format!("approval count {stored}")))
}
