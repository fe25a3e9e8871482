//! The life of a transfer intent. Only [`IntentStatus::apply`] moves an intent; every transition
//! not listed in the guide is refused. A transfer is sent on chain by this service (`submit`);
//! an x402 payment is an authorization handed to the agent, which the payee settles
//! (`authorize`): [`IntentStatus::apply_as`] keeps each kind to its own path.
//!
//! ```text
//! pending_confirmation ─confirm─► confirmed ─submit─► submitted ─execute─► executed
//!        │  │                         │  │                │                 ▲
//!        │  └─expire─► expired        │  └──fail──► failed ◄─fail           │
//!        └─reject─► rejected          └─authorize─► authorized ─execute─────┘
//!                        expired ◄─expire─┘ (x402: its validBefore passed unused)
//!                        expired ◄─expire── confirmed (x402: its agent never had it signed)
//! ```

use std::fmt;

use time::OffsetDateTime;

use crate::{
    AgentId, Asset, AtomicAmount, Chain, EvmAddress, IdempotencyKey, IntentId, Operator, WalletId,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntentStatus {
    PendingConfirmation,
    Confirmed,
    /// An x402 payment's authorization was signed and handed out; the payee may settle it until
    /// its `validBefore`.
    Authorized,
    Submitted,
    Executed,
    Failed,
    Rejected,
    Expired,
}

/// Something that happens to an intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntentEvent {
    /// An operator approves it.
    Confirm,
    /// An operator refuses it.
    Reject,
    /// It stayed pending longer than allowed.
    Expire,
    /// Its transaction was signed and its hash recorded, before broadcast.
    Submit,
    /// Its x402 authorization was signed and recorded, before it is handed out.
    Authorize,
    /// Its transaction was mined and succeeded.
    Execute,
    /// It cannot be carried out, or its transaction reverted.
    Fail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} {from} intent cannot {event}", article(.from))]
pub struct TransitionRefused {
    pub from: IntentStatus,
    pub event: IntentEvent,
}

/// `a` or `an`, as the status's name sounds.
fn article(status: &IntentStatus) -> &'static str {
    match status {
        IntentStatus::Executed | IntentStatus::Expired | IntentStatus::Authorized => "an",
        _ => "a",
    }
}

impl IntentStatus {
    pub const ALL: [IntentStatus; 8] = [
        Self::PendingConfirmation,
        Self::Confirmed,
        Self::Authorized,
        Self::Submitted,
        Self::Executed,
        Self::Failed,
        Self::Rejected,
        Self::Expired,
    ];

    /// The state after `event`, or why it cannot happen.
    pub fn apply(self, event: IntentEvent) -> Result<IntentStatus, TransitionRefused> {
        use IntentEvent as E;
        use IntentStatus as S;
        match (self, event) {
            (S::PendingConfirmation, E::Confirm) => Ok(S::Confirmed),
            (S::PendingConfirmation, E::Reject) => Ok(S::Rejected),
            (S::PendingConfirmation, E::Expire) => Ok(S::Expired),
            (S::Confirmed, E::Submit) => Ok(S::Submitted),
            (S::Confirmed, E::Authorize) => Ok(S::Authorized),
            (S::Confirmed | S::Submitted, E::Fail) => Ok(S::Failed),
            (S::Submitted | S::Authorized, E::Execute) => Ok(S::Executed),
            (S::Authorized | S::Confirmed, E::Expire) => Ok(S::Expired),
            (from, event) => Err(TransitionRefused { from, event }),
        }
    }

    /// `apply`, for an intent of `kind`: a transfer is never authorized, nor expires once
    /// confirmed (the executor carries it out); an x402 payment is never submitted by this
    /// service, nor failed (money it authorized may still move until its `validBefore`, so it
    /// ends `expired`, or `executed`), and expires confirmed when its agent never has it signed.
    pub fn apply_as(
        self,
        kind: IntentKind,
        event: IntentEvent,
    ) -> Result<IntentStatus, TransitionRefused> {
        let foreign = match kind {
            IntentKind::Transfer => {
                event == IntentEvent::Authorize
                    || (self == Self::Confirmed && event == IntentEvent::Expire)
            }
            IntentKind::X402 => matches!(event, IntentEvent::Submit | IntentEvent::Fail),
        };
        if foreign {
            return Err(TransitionRefused { from: self, event });
        }
        self.apply(event)
    }

    /// No event moves an intent out of a terminal state.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Executed | Self::Failed | Self::Rejected | Self::Expired
        )
    }

    /// Whether the intent's amount counts against the spend windows: from creation on, until it
    /// is rejected, expires or fails (an executed one, for the window's length after).
    pub fn holds_allowance(self) -> bool {
        matches!(
            self,
            Self::PendingConfirmation
                | Self::Confirmed
                | Self::Authorized
                | Self::Submitted
                | Self::Executed
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::PendingConfirmation => "pending_confirmation",
            Self::Confirmed => "confirmed",
            Self::Authorized => "authorized",
            Self::Submitted => "submitted",
            Self::Executed => "executed",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == name)
    }
}

impl fmt::Display for IntentStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for IntentEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Confirm => "be confirmed",
            Self::Reject => "be rejected",
            Self::Expire => "expire",
            Self::Submit => "be submitted",
            Self::Authorize => "be authorized",
            Self::Execute => "be executed",
            Self::Fail => "fail",
        })
    }
}

/// What an intent moves money by: a transaction this service sends (`/v1/wallet/send`), or an
/// x402 authorization the payee settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntentKind {
    Transfer,
    X402,
}

impl IntentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transfer => "transfer",
            Self::X402 => "x402",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [Self::Transfer, Self::X402]
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

/// Who confirmed an intent for execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfirmedBy {
    /// The operators it needed approved it.
    Operator,
    /// The spend policy's auto-confirm tier, at its creation.
    Policy,
}

impl ConfirmedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Operator => "operator",
            Self::Policy => "policy",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [Self::Operator, Self::Policy]
            .into_iter()
            .find(|by| by.as_str() == name)
    }
}

/// The operators' approvals an intent needs and has: `required` is what the policy in force asks
/// of it (zero for one the policy confirmed), kept up to date while it is pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Approvals {
    pub required: u8,
    pub received: u8,
}

impl Approvals {
    /// Whether the distinct operators' approvals reach what is required: the intent confirms.
    pub fn are_met(self) -> bool {
        self.received >= self.required
    }
}

/// What a transfer moves, and to whom: the part of a send that an idempotent retry must repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferTerms {
    pub asset: Asset,
    pub chain: Chain,
    pub recipient: EvmAddress,
    pub amount: AtomicAmount,
}

/// A transfer intent as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferIntentRecord {
    pub id: IntentId,
    pub agent_id: AgentId,
    pub wallet_id: WalletId,
    pub status: IntentStatus,
    pub asset: Asset,
    pub chain: Chain,
    pub token_address: Option<EvmAddress>,
    pub recipient: EvmAddress,
    pub amount: AtomicAmount,
    pub idempotency_key: Option<IdempotencyKey>,
    pub tx_hash: Option<String>,
    pub failure_reason: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub confirmed_at: Option<OffsetDateTime>,
    /// Who took the latest operator decision on it (approve, reject, resolve); `None` while no
    /// operator has, and on intents decided before it was recorded.
    pub decided_by: Option<Operator>,
    /// Who confirmed it; `None` while it was not confirmed.
    pub confirmed_by: Option<ConfirmedBy>,
    pub approvals: Approvals,
    /// The agent key that asked for it; `None` for intents made before keys were recorded.
    pub key_id: Option<crate::keys::KeyId>,
    pub kind: IntentKind,
    /// What an x402 payment pays for and its authorization, where the intent was read to be
    /// shown; `None` for a transfer, and where only its status was needed.
    pub x402: Option<X402Payment>,
    /// The block the money moved in, once executed and where known.
    pub block_number: Option<u64>,
}

/// What an x402 payment pays for: the part of its terms beside the transfer's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct X402Resource {
    /// The network as the challenge named it (`eip155:8453`, or version 1's `base`).
    pub network: String,
    pub resource_url: Option<String>,
}

/// An x402 intent's payment: what it pays for, and its authorization once signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct X402Payment {
    pub resource: X402Resource,
    pub nonce: Option<[u8; 32]>,
    pub valid_before: Option<OffsetDateTime>,
    /// The server's decoded settlement, when a fetch made here received one.
    pub payment_response: Option<serde_json::Map<String, serde_json::Value>>,
}

impl TransferIntentRecord {
    pub fn terms(&self) -> TransferTerms {
        TransferTerms {
            asset: self.asset,
            chain: self.chain,
            recipient: self.recipient,
            amount: self.amount,
        }
    }

    /// Where the spend policy put the intent when it was admitted, whatever became of it since:
    /// `confirmed` by its auto-confirm tier, else waiting for operators.
    pub fn admitted_as(&self) -> IntentStatus {
        match self.confirmed_by {
            Some(ConfirmedBy::Policy) => IntentStatus::Confirmed,
            _ => IntentStatus::PendingConfirmation,
        }
    }

    /// Whether a request carrying this intent's idempotency key asks for this very transfer (a
    /// send: `paying_for` is `None`) or payment, so that answering it with this intent is a
    /// faithful replay; otherwise the key was reused.
    pub fn answers_retry(
        &self,
        requested: &TransferTerms,
        paying_for: Option<&X402Resource>,
    ) -> bool {
        let same_purpose = match (self.kind, paying_for) {
            (IntentKind::Transfer, None) => true,
            (IntentKind::X402, Some(resource)) => {
                self.x402.as_ref().map(|payment| &payment.resource) == Some(resource)
            }
            _ => false,
        };
        same_purpose && self.terms() == *requested
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use IntentEvent as E;
    use IntentStatus as S;

    const EVENTS: [IntentEvent; 7] = [
        E::Confirm,
        E::Reject,
        E::Expire,
        E::Submit,
        E::Authorize,
        E::Execute,
        E::Fail,
    ];

    /// The guide's transitions, written out as data to check the code against.
    const ALLOWED: [(IntentStatus, IntentEvent, IntentStatus); 11] = [
        (S::PendingConfirmation, E::Confirm, S::Confirmed),
        (S::PendingConfirmation, E::Reject, S::Rejected),
        (S::PendingConfirmation, E::Expire, S::Expired),
        (S::Confirmed, E::Submit, S::Submitted),
        (S::Confirmed, E::Authorize, S::Authorized),
        (S::Confirmed, E::Fail, S::Failed),
        (S::Confirmed, E::Expire, S::Expired),
        (S::Submitted, E::Execute, S::Executed),
        (S::Submitted, E::Fail, S::Failed),
        (S::Authorized, E::Execute, S::Executed),
        (S::Authorized, E::Expire, S::Expired),
    ];

    #[test]
    fn exactly_the_guides_transitions_are_allowed() {
        for from in IntentStatus::ALL {
            for event in EVENTS {
                let expected = ALLOWED
                    .iter()
                    .find(|(f, e, _)| *f == from && *e == event)
                    .map(|(_, _, to)| *to);
                match expected {
                    Some(to) => assert_eq!(from.apply(event), Ok(to)),
                    None => assert_eq!(from.apply(event), Err(TransitionRefused { from, event })),
                }
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for status in IntentStatus::ALL {
            assert_eq!(IntentStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(IntentStatus::parse("PENDING"), None);
    }

    #[test]
    fn who_confirmed_reads_back_what_it_writes() {
        for by in [ConfirmedBy::Operator, ConfirmedBy::Policy] {
            assert_eq!(ConfirmedBy::parse(by.as_str()), Some(by));
        }
        assert_eq!(ConfirmedBy::parse("agent"), None);
    }

    #[test]
    fn a_refusal_says_what_was_attempted() {
        let refused = S::Executed.apply(E::Confirm).expect_err("terminal");
        assert_eq!(
            refused.to_string(),
            "an executed intent cannot be confirmed"
        );
    }

    fn event() -> impl Strategy<Value = IntentEvent> {
        proptest::sample::select(EVENTS.to_vec())
    }

    fn kind() -> impl Strategy<Value = IntentKind> {
        proptest::sample::select(vec![IntentKind::Transfer, IntentKind::X402])
    }

    #[test]
    fn each_kind_keeps_to_its_own_path() {
        let refused = |kind, from: IntentStatus, event| {
            from.apply_as(kind, event) == Err(TransitionRefused { from, event })
        };
        assert!(refused(IntentKind::Transfer, S::Confirmed, E::Authorize));
        assert!(refused(IntentKind::Transfer, S::Confirmed, E::Expire));
        assert_eq!(
            S::Confirmed.apply_as(IntentKind::X402, E::Expire),
            Ok(S::Expired)
        );
        assert!(refused(IntentKind::X402, S::Confirmed, E::Submit));
        assert!(refused(IntentKind::X402, S::Confirmed, E::Fail));
        assert_eq!(
            S::Confirmed.apply_as(IntentKind::X402, E::Authorize),
            Ok(S::Authorized)
        );
        assert_eq!(
            S::Authorized.apply_as(IntentKind::X402, E::Expire),
            Ok(S::Expired)
        );
        for kind in [IntentKind::Transfer, IntentKind::X402] {
            assert_eq!(IntentKind::parse(kind.as_str()), Some(kind));
        }
    }

    proptest! {
        /// Walking any sequence of events from a new intent of either kind, applying those that
        /// are allowed: terminal states absorb everything, an executed intent went its kind's one
        /// path, an x402 payment is authorized (signed) at most once and never fails, and the
        /// allowance is released exactly on reject, expire or fail.
        #[test]
        fn random_event_sequences_respect_the_invariants(
            kind in kind(),
            events in proptest::collection::vec(event(), 0..40),
        ) {
            let mut status = S::PendingConfirmation;
            let mut visited = vec![status];
            let mut authorizations = 0;
            for event in events {
                match status.apply_as(kind, event) {
                    Ok(next) => {
                        prop_assert!(!status.is_terminal());
                        prop_assert!(ALLOWED.contains(&(status, event, next)));
                        if status.holds_allowance() && !next.holds_allowance() {
                            prop_assert!(matches!(next, S::Rejected | S::Expired | S::Failed));
                        }
                        prop_assert!(status.holds_allowance() || !next.holds_allowance());
                        authorizations += usize::from(event == E::Authorize);
                        status = next;
                        visited.push(status);
                    }
                    Err(refused) => {
                        prop_assert_eq!(refused, TransitionRefused { from: status, event });
                    }
                }
            }
            let path = match kind {
                IntentKind::Transfer => S::Submitted,
                IntentKind::X402 => S::Authorized,
            };
            if status == S::Executed {
                prop_assert_eq!(&visited[..], &[S::PendingConfirmation, S::Confirmed, path, S::Executed][..]);
            }
            match kind {
                IntentKind::Transfer => {
                    prop_assert_eq!(authorizations, 0);
                    prop_assert!(
                        !visited.windows(2).any(|step| step == [S::Confirmed, S::Expired]),
                        "a confirmed transfer is the executor's to carry out"
                    );
                }
                IntentKind::X402 => {
                    prop_assert!(authorizations <= 1, "one intent, one authorization");
                    prop_assert!(!visited.contains(&S::Failed) && !visited.contains(&S::Submitted));
                }
            }
            prop_assert!(visited.len() <= 4, "no path is longer than pending, confirmed, its way, final");
        }
    }

    #[test]
    fn a_retry_matches_only_the_same_asset_chain_recipient_and_amount() {
        let stored = TransferIntentRecord::fixture();
        let same = stored.terms();
        assert!(stored.answers_retry(&same, None));
        let other_amount = TransferTerms {
            amount: AtomicAmount::parse("26").expect("valid"),
            ..same
        };
        let other_recipient = TransferTerms {
            recipient: EvmAddress::from_bytes([0xcc; 20]),
            ..same
        };
        let other_asset = TransferTerms {
            asset: Asset::Eth,
            ..same
        };
        for changed in [other_amount, other_recipient, other_asset] {
            assert!(!stored.answers_retry(&changed, None), "{changed:?}");
        }
    }

    #[test]
    fn a_payment_answers_only_a_payment_for_the_same_resource_and_a_transfer_only_a_send() {
        let resource = X402Resource {
            network: "eip155:8453".into(),
            resource_url: Some("https://api.example.com/report".into()),
        };
        let payment = TransferIntentRecord {
            kind: IntentKind::X402,
            x402: Some(X402Payment {
                resource: resource.clone(),
                nonce: None,
                valid_before: None,
                payment_response: None,
            }),
            ..TransferIntentRecord::fixture()
        };
        let terms = payment.terms();
        assert!(payment.answers_retry(&terms, Some(&resource)));
        assert!(
            !payment.answers_retry(&terms, None),
            "a send under a payment's key"
        );
        let elsewhere = X402Resource {
            resource_url: Some("https://api.example.com/other".into()),
            ..resource.clone()
        };
        let other_network = X402Resource {
            network: "eip155:84532".into(),
            ..resource.clone()
        };
        for changed in [elsewhere, other_network] {
            assert!(
                !payment.answers_retry(&terms, Some(&changed)),
                "{changed:?}"
            );
        }
        let transfer = TransferIntentRecord::fixture();
        assert!(
            !transfer.answers_retry(&terms, Some(&resource)),
            "a payment under a send's key"
        );
    }
}
