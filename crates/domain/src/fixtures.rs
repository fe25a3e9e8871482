//! Plausible records for tests of every crate (feature `test-fixtures`): start from a fixture and
//! change what the test is about with struct update syntax, e.g.
//! `TransferIntentRecord { status: IntentStatus::Confirmed, ..TransferIntentRecord::fixture() }`.

use time::OffsetDateTime;
use uuid::Uuid;

use crate::keys::{AgentKeyRecord, KeyGrant, KeyId};
use crate::{
    AgentId, AgentKeyHash, AgentProfile, AgentRecord, Approvals, Asset, AtomicAmount, Chain,
    Custody, Direction, EmailInboxId, EmailMessageId, EmailMessageRecord, EmailStatus, EvmAddress,
    IntentId, IntentKind, IntentStatus, PhoneNumber, PhoneNumberId, PhoneNumberRecord, PolicyAsset,
    SenderAuthentication, SpendPolicyId, SpendPolicyRecord, SpendRules, SponsorId,
    TransferIntentRecord, WalletId, WalletRecord, WalletStatus, WebhookEndpointId,
    WebhookEndpointRecord,
};

/// 2026-11-22T00:00:00Z: a fixed moment, so fixtures compare equal.
fn moment() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_795_305_600).expect("a valid timestamp")
}

/// The USDC contract the fixtures use.
pub fn fixture_token() -> EvmAddress {
    EvmAddress::from_bytes([0xaa; 20])
}

impl TransferIntentRecord {
    /// A pending transfer of 25 atomic USDC units from the fixture wallet to `0xbb…bb`.
    pub fn fixture() -> Self {
        Self {
            id: IntentId(Uuid::from_u128(1)),
            agent_id: AgentId(Uuid::from_u128(2)),
            wallet_id: WalletId(Uuid::from_u128(3)),
            status: IntentStatus::PendingConfirmation,
            asset: Asset::Usdc,
            chain: Chain::Base,
            token_address: Some(fixture_token()),
            recipient: EvmAddress::from_bytes([0xbb; 20]),
            amount: AtomicAmount::parse("25").expect("valid"),
            idempotency_key: None,
            tx_hash: None,
            failure_reason: None,
            created_at: moment(),
            updated_at: moment(),
            confirmed_at: None,
            decided_by: None,
            confirmed_by: None,
            approvals: Approvals {
                required: 1,
                received: 0,
            },
            key_id: None,
            kind: IntentKind::Transfer,
            x402: None,
            block_number: None,
        }
    }
}

impl SpendPolicyRecord {
    /// USDC on Base with no limit and no allowlist.
    pub fn fixture() -> Self {
        Self {
            id: SpendPolicyId(Uuid::from_u128(4)),
            asset: PolicyAsset::usdc_on_base(fixture_token()),
            rules: SpendRules::default(),
            created_at: moment(),
            updated_at: moment(),
        }
    }
}

impl WalletRecord {
    /// An active self-custodial wallet on Base at `0x01…01`, without a stored policy.
    pub fn fixture() -> Self {
        Self {
            id: WalletId(Uuid::from_u128(3)),
            provider: "local".into(),
            chain: Chain::Base,
            address: EvmAddress::from_bytes([0x01; 20]),
            custody: Custody::SelfCustodial,
            status: WalletStatus::Active,
            delegated: false,
            spend_policy: None,
            created_at: moment(),
        }
    }
}

impl AgentRecord {
    /// An active agent without a label.
    pub fn fixture() -> Self {
        Self {
            id: AgentId(Uuid::from_u128(2)),
            sponsor_id: SponsorId(Uuid::from_u128(5)),
            label: None,
            is_active: true,
            created_at: moment(),
        }
    }
}

impl AgentKeyRecord {
    /// The first key of the fixture agent, with `hash`.
    pub fn fixture(hash: AgentKeyHash) -> Self {
        Self {
            id: KeyId(Uuid::from_u128(3)),
            agent_id: AgentRecord::fixture().id,
            hash,
            label: None,
            grant: KeyGrant::first(),
            parent: None,
            first: true,
            created_at: moment(),
            last_used_at: None,
        }
    }
}

impl AgentProfile {
    /// The fixture agent with no resources.
    pub fn fixture() -> Self {
        Self {
            agent: AgentRecord::fixture(),
            phone_number: None,
            email_inbox: None,
            wallet: None,
        }
    }
}

impl PhoneNumberRecord {
    pub fn fixture() -> Self {
        Self {
            id: PhoneNumberId(Uuid::from_u128(0x0192_0000_0000_7000_8000_0000_0000_0601)),
            number: PhoneNumber::parse("+15550100123").expect("a valid number"),
            country_iso2: Some("US".into()),
            provider: "sandbox".into(),
            created_at: moment(),
        }
    }
}

impl WebhookEndpointRecord {
    /// An enabled endpoint for every type.
    pub fn fixture() -> Self {
        Self {
            id: WebhookEndpointId(Uuid::from_u128(0x0192_0000_0000_7000_8000_0000_0000_0701)),
            agent_id: AgentId(Uuid::from_u128(2)),
            url: "https://hooks.example.com/agent".into(),
            types: None,
            description: None,
            enabled: true,
            disabled_reason: None,
            created_at: moment(),
        }
    }
}

impl EmailMessageRecord {
    /// A plain inbound message of the fixture agent's inbox, received at the fixed moment.
    pub fn fixture() -> Self {
        Self {
            id: EmailMessageId(Uuid::from_u128(31)),
            inbox_id: EmailInboxId(Uuid::from_u128(30)),
            agent_id: AgentRecord::fixture().id,
            direction: Direction::Inbound,
            status: EmailStatus::Received,
            thread_id: EmailMessageId(Uuid::from_u128(31)),
            provider_message_id: Some("provider-31".into()),
            internet_message_id: Some("<31@sender.example>".into()),
            in_reply_to: None,
            references: Vec::new(),
            subject: Some("Hello".into()),
            from: Some("someone@sender.example".into()),
            to: vec!["agent@inbox.example".into()],
            cc: Vec::new(),
            bcc: Vec::new(),
            reply_to: Vec::new(),
            text: Some("Hello there".into()),
            html: None,
            attachments: Vec::new(),
            headers: Vec::new(),
            verification_codes: Vec::new(),
            sender_authentication: SenderAuthentication::Unreported,
            service_name: None,
            failure_reason: None,
            created_at: moment(),
            received_at: Some(moment()),
            sent_at: None,
        }
    }
}
