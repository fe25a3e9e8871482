//! The operator's decisions on transfer intents: listing and showing them with their
//! transactions, confirming a pending one for execution or rejecting it. Each decision records
//! the operator who took it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use domain::{
    evaluate_transfer, judge_approval, Actor, Admitted, AgentId, AgentRecord, ApprovalRefusal,
    ApprovalStanding, EvmAddress, IntentEvent, IntentId, IntentStatus, Operator, PolicyViolation,
    TransferIntentRecord, TransitionRefused, WalletId, U256,
};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use ports::{
    AgentStore, ApprovalContext, AttemptRecord, ChainClient, ChainError, IntentApproval,
    IntentFilter, IntentRecords, IntentTransitions, Notifications, StoreError, TransitionError,
    Wakeup, WalletUsage, EVERY_AGENTS_EVENTS_TOPIC,
};
use time::OffsetDateTime;

#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    #[error("intent {0} not found")]
    NotFound(IntentId),
    #[error("the agent of intent {0} is deactivated: its intents are not executed")]
    AgentInactive(IntentId),
    /// The intent breaks the spend policy as it is now; a forced confirmation executes it anyway
    /// (the way in says how its operator forces one).
    #[error("the intent breaks the spend policy in force: {0}")]
    Policy(PolicyViolation),
    /// A quorum counts only operators who name themselves.
    #[error(
        "intent {id} needs {required} approvals by distinct operators: each approves under a name of their own"
    )]
    QuorumNeedsNamedOperator { id: IntentId, required: u8 },
    #[error("{operator} has already approved intent {id}; it needs {required} distinct operators, {received} so far")]
    AlreadyApproved {
        id: IntentId,
        operator: Operator,
        required: u8,
        received: u8,
    },
    /// The wallet's balance does not cover the intent beside what is already committed.
    #[error("intent {id} is not approved: {refusal}")]
    Balance {
        id: IntentId,
        refusal: ApprovalRefusal,
    },
    /// The balance could not be read from the chain, so the intent could not be judged.
    #[error("the wallet's balance cannot be read from the chain now: {0}")]
    Chain(ChainError),
    #[error(transparent)]
    Refused(#[from] TransitionRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ConfirmError {
    /// An approval `judge_approval` refused under the locks.
    fn judged(id: IntentId, refusal: ApprovalRefusal) -> Self {
        match refusal {
            ApprovalRefusal::AgentInactive => Self::AgentInactive(id),
            ApprovalRefusal::Policy(violation) => Self::Policy(violation),
            ApprovalRefusal::QuorumNeedsNamedOperator { required } => {
                Self::QuorumNeedsNamedOperator { id, required }
            }
            balance @ ApprovalRefusal::Balance { .. } => Self::Balance {
                id,
                refusal: balance,
            },
        }
    }
}

impl From<TransitionError> for ConfirmError {
    fn from(error: TransitionError) -> Self {
        match error {
            TransitionError::NotFound(id) => Self::NotFound(id),
            TransitionError::Store(store) => Self::Store(store),
            TransitionError::Refused(refused) => Self::Refused(refused),
            TransitionError::Judged(refused) => Self::Store(StoreError::Internal(format!(
                "an approval judged outside its check: {refused}"
            ))),
        }
    }
}

/// An approved intent (confirmed once it has every approval it needs; its `approvals` say how
/// many) and what the spend policy in force says of it: a violation here means the operator
/// forced the approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    pub intent: TransferIntentRecord,
    pub policy_verdict: Result<(), PolicyViolation>,
}

/// Reads a page's reviews make at once: a pooled connection each, few enough to leave the pool
/// to the requests beside them.
const READS_AT_ONCE: usize = 8;

/// Whether an approval is judged against the wallet's balance as the chain tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalanceCheck {
    /// Read the balance first and refuse what it does not cover beside what is committed: the
    /// console's approvals, whose operator sees why at once.
    Required,
    /// Leave the balance to the execution, which fails the intent if the chain refuses it: the
    /// control plane's confirmation, which works while the chain node is away.
    AtExecution,
}

/// Where a pending intent's recipient stands with its wallet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecipientStanding {
    /// On the policy's allowlist.
    Allowlisted,
    /// Never paid by this wallet.
    New,
    /// Paid before, not on an allowlist.
    Paid,
}

/// A pending intent as an operator reviews it: its agent, the policy's verdict as things are
/// now, where its recipient stands, and when it expires undecided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    pub intent: TransferIntentRecord,
    pub agent: AgentRecord,
    pub verdict: Result<Admitted, PolicyViolation>,
    pub recipient: RecipientStanding,
    pub expires_at: OffsetDateTime,
    /// The approvals it has received, oldest first, each with whether it counts now: who
    /// approved already sees that only the others' approvals are awaited.
    pub approvals: Vec<IntentApproval>,
}

/// An intent as an operator inspects it before deciding: while it is pending, its review as
/// things are now (beside where the policy put it at creation, `admitted_as`); the wallet's
/// balance; the agent's latest intents to the same recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    pub intent: TransferIntentRecord,
    pub review: Option<Review>,
    /// The wallet's balance of the intent's token, or why the chain could not tell it now.
    pub balance: Result<U256, ChainError>,
    /// Newest first, the inspected intent left out.
    pub to_same_recipient: Vec<TransferIntentRecord>,
    /// The approvals it received, oldest first, each with whether it counts now: one of an
    /// operator disabled since does not.
    pub approvals: Vec<IntentApproval>,
}

/// How many of an agent's latest intents to the same recipient an inspection shows.
pub const SAME_RECIPIENT_SHOWN: usize = 10;

/// What the decisions read and write.
pub struct DecisionStores {
    /// Where the profile of an intent's agent (its state, its policy in force) is read.
    pub agents: Arc<dyn AgentStore>,
    pub intents: Arc<dyn IntentRecords>,
    /// What the wallets' windows hold, and whom they paid.
    pub usage: Arc<dyn WalletUsage>,
    /// Where approvals and rejections are recorded.
    pub transitions: Arc<dyn IntentTransitions>,
    /// Wakes the reviews of pending intents at every change of any agent's intents.
    pub notifications: Arc<dyn Notifications>,
    /// Where a wallet's balance is read before an approval is judged.
    pub chain: Arc<dyn ChainClient>,
}

pub struct IntentDecisions {
    store: Arc<dyn AgentStore>,
    intents: Arc<dyn IntentRecords>,
    usage: Arc<dyn WalletUsage>,
    transitions: Arc<dyn IntentTransitions>,
    notifications: Arc<dyn Notifications>,
    chain: Arc<dyn ChainClient>,
    /// The token intents pay in, where one names none.
    token: EvmAddress,
    /// How long an intent stays pending before it expires.
    pending_ttl: Duration,
}

impl IntentDecisions {
    pub fn new(stores: DecisionStores, token: EvmAddress, pending_ttl: Duration) -> Self {
        Self {
            store: stores.agents,
            intents: stores.intents,
            usage: stores.usage,
            transitions: stores.transitions,
            notifications: stores.notifications,
            chain: stores.chain,
            token,
            pending_ttl,
        }
    }

    /// Woken at the next change of any agent's events, which every change of an intent is:
    /// subscribe before reading the pending intents, and none falls between the reading and the
    /// wait.
    pub fn watch(&self) -> Wakeup {
        self.notifications.subscribe(EVERY_AGENTS_EVENTS_TOPIC)
    }

    /// The oldest `limit` intents awaiting a decision, each judged as it would be now.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn pending(&self, limit: usize) -> Result<Vec<Review>, StoreError> {
        let intents = self
            .intents
            .list(IntentFilter {
                status: Some(IntentStatus::PendingConfirmation),
                oldest_first: true,
                limit: Some(limit),
                ..IntentFilter::default()
            })
            .await?;
        self.reviews(intents).await
    }

    /// `intents` (pending ones) as an operator reviews them: one reading of each agent, of each
    /// wallet's windows per recipient, and one of the recipients the wallets paid.
    pub async fn reviews(
        &self,
        intents: Vec<TransferIntentRecord>,
    ) -> Result<Vec<Review>, StoreError> {
        let pairs: Vec<(WalletId, EvmAddress)> = intents
            .iter()
            .map(|intent| (intent.wallet_id, intent.recipient))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let paid: HashSet<(WalletId, EvmAddress)> = self
            .usage
            .paid_recipients(pairs)
            .await?
            .into_iter()
            .collect();
        // Each agent's profile and each intent's wallet are independent reads: a few go out at
        // once, so a page of a hundred intents waits for a tenth of their round trips.
        let agent_ids: Vec<AgentId> = intents
            .iter()
            .map(|intent| intent.agent_id)
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let agents: HashMap<AgentId, AgentRecord> = stream::iter(agent_ids)
            .map(|agent| async move {
                let profile = self.store.profile(agent).await?;
                Ok::<_, StoreError>(profile.map(|profile| (agent, profile.agent)))
            })
            .buffer_unordered(READS_AT_ONCE)
            .try_collect::<Vec<_>>()
            .await?
            .into_iter()
            .flatten()
            .collect();
        let wallets: Vec<_> = stream::iter(&intents)
            .map(|intent| {
                self.usage
                    .wallet_and_held(intent.agent_id, Some(intent.recipient))
            })
            .buffered(READS_AT_ONCE)
            .try_collect()
            .await?;
        // Only an intent approved already has approvals to read.
        let approvals: Vec<Vec<IntentApproval>> = stream::iter(&intents)
            .map(|intent| async move {
                if intent.approvals.received == 0 {
                    Ok(Vec::new())
                } else {
                    self.intents.approvals(intent.id).await
                }
            })
            .buffered(READS_AT_ONCE)
            .try_collect()
            .await?;
        let mut reviews = Vec::with_capacity(intents.len());
        for ((intent, wallet), approvals) in intents.into_iter().zip(wallets).zip(approvals) {
            let (Some(agent), Some((wallet, held))) = (agents.get(&intent.agent_id), wallet) else {
                continue;
            };
            let agent = agent.clone();
            let rules = wallet
                .spend_policy
                .map(|policy| policy.rules)
                .unwrap_or_default();
            let verdict = evaluate_transfer(
                &rules,
                &intent.recipient,
                intent.amount,
                &held.without_pending(intent.amount),
            );
            let recipient = if rules.allowlist.lists(&intent.recipient) {
                RecipientStanding::Allowlisted
            } else if paid.contains(&(intent.wallet_id, intent.recipient)) {
                RecipientStanding::Paid
            } else {
                RecipientStanding::New
            };
            reviews.push(Review {
                expires_at: intent.created_at + self.pending_ttl,
                intent,
                agent,
                verdict,
                recipient,
                approvals,
            });
        }
        Ok(reviews)
    }

    /// Intents matching `filter`, newest first.
    pub async fn list(
        &self,
        filter: IntentFilter,
    ) -> Result<Vec<TransferIntentRecord>, StoreError> {
        self.intents.list(filter).await
    }

    pub async fn show(&self, id: IntentId) -> Result<TransferIntentRecord, TransitionError> {
        self.intents
            .find(id)
            .await?
            .ok_or(TransitionError::NotFound(id))
    }

    /// The balance of the intent's token in its agent's wallet as the chain tells it now, or why
    /// it cannot tell.
    async fn balance_of(
        &self,
        intent: &TransferIntentRecord,
    ) -> Result<Result<U256, ChainError>, TransitionError> {
        let wallet = self
            .store
            .profile(intent.agent_id)
            .await?
            .and_then(|profile| profile.wallet)
            .ok_or(TransitionError::NotFound(intent.id))?;
        let token = intent.token_address.unwrap_or(self.token);
        Ok(self.chain.token_balance(&token, &wallet.address).await)
    }

    /// The intent with what an operator weighs before deciding it (`Inspection`).
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn inspect(&self, id: IntentId) -> Result<Inspection, TransitionError> {
        let intent = self.show(id).await?;
        let review = if intent.status == IntentStatus::PendingConfirmation {
            self.reviews(vec![intent.clone()]).await?.pop()
        } else {
            None
        };
        let (balance, to_same_recipient, approvals) = futures_util::join!(
            self.balance_of(&intent),
            self.intents.list(IntentFilter {
                agent: Some(intent.agent_id),
                recipient: Some(intent.recipient),
                limit: Some(SAME_RECIPIENT_SHOWN + 1),
                ..IntentFilter::default()
            }),
            self.intents.approvals(id)
        );
        let balance = balance?;
        let approvals = approvals?;
        let mut to_same_recipient = to_same_recipient?;
        to_same_recipient.retain(|other| other.id != id);
        to_same_recipient.truncate(SAME_RECIPIENT_SHOWN);
        Ok(Inspection {
            intent,
            review,
            balance,
            to_same_recipient,
            approvals,
        })
    }

    /// Records `actor`'s approval of a pending intent, judged again under the locks of its
    /// wallet and of the intent, as things are then (`domain::judge_approval`): the intent of a
    /// deactivated agent is never approved, one that breaks the spend policy in force only when
    /// `force` says so, and none that the wallet's balance (read from the chain first) does not
    /// cover beside what its confirmed intents already commit. The intent is confirmed for
    /// execution once the approvals the policy in force asks of it are in: distinct named
    /// operators' where it needs more than one.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn confirm(
        &self,
        id: IntentId,
        force: bool,
        balance_check: BalanceCheck,
        actor: &Actor,
    ) -> Result<Confirmation, ConfirmError> {
        let operator = &actor.operator;
        let intent = self
            .intents
            .find(id)
            .await?
            .ok_or(ConfirmError::NotFound(id))?;
        // Only a pending intent can be confirmed: say so before judging it, unless this is the
        // operator's confirmation again, after it took effect.
        if let Err(refused) = intent.status.apply_as(intent.kind, IntentEvent::Confirm) {
            if !force && self.approved_by(id, operator).await? {
                return Ok(Confirmation {
                    intent,
                    policy_verdict: Ok(()),
                });
            }
            return Err(refused.into());
        }
        let balance = match balance_check {
            BalanceCheck::Required => Some(
                self.balance_of(&intent)
                    .await?
                    .map_err(ConfirmError::Chain)?,
            ),
            BalanceCheck::AtExecution => None,
        };
        let approver = operator.clone();
        let check = move |context: &ApprovalContext<'_>| {
            let rules = context
                .policy
                .map(|policy| policy.rules.clone())
                .unwrap_or_default();
            judge_approval(
                &ApprovalStanding {
                    recipient: &context.intent.recipient,
                    amount: context.intent.amount,
                    agent_active: context.agent_active,
                    rules: &rules,
                    held: &context.held,
                    balance,
                    committed: context.committed,
                },
                &approver,
                force,
            )
        };
        let approval = self
            .transitions
            .approve(id, actor.clone(), &check)
            .await
            .map_err(|error| match error {
                TransitionError::Judged(refused) => ConfirmError::judged(id, refused),
                other => other.into(),
            })?;
        if !approval.counted && approval.intent.status == IntentStatus::PendingConfirmation {
            return Err(ConfirmError::AlreadyApproved {
                id,
                operator: operator.clone(),
                required: approval.intent.approvals.required,
                received: approval.intent.approvals.received,
            });
        }
        Ok(Confirmation {
            intent: approval.intent,
            policy_verdict: approval.verdict,
        })
    }

    /// Whether `operator`'s approval of the intent is recorded. A confirmation repeated after it
    /// took effect (its answer lost to a failover, and the operator's tool retrying) then
    /// answers the intent as it stands, as the first did: without `force` the first verdict was
    /// to keep to the policy, as an approval past it needs `force`. With `force` the first
    /// verdict is not kept, and the repeat is refused as for any intent no longer pending.
    async fn approved_by(&self, id: IntentId, operator: &Operator) -> Result<bool, StoreError> {
        Ok(self
            .intents
            .approvals(id)
            .await?
            .iter()
            .any(|approval| approval.approver == *operator))
    }

    /// The transactions recorded for an intent, newest first.
    pub async fn attempts(&self, id: IntentId) -> Result<Vec<AttemptRecord>, StoreError> {
        self.intents.attempts(id).await
    }

    /// Refuses a pending intent; its amount no longer counts against the spend windows.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn reject(
        &self,
        id: IntentId,
        reason: Option<String>,
        actor: &Actor,
    ) -> Result<TransferIntentRecord, TransitionError> {
        let reason = reason.unwrap_or_else(|| "rejected by operator".to_owned());
        self.transitions
            .transition(id, IntentEvent::Reject, Some(reason), actor.clone())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{
        AgentProfile, AgentRecord, ApprovalCount, Approvals, AtomicAmount, Held, Quorum,
        SpendLimits, SpendPolicyRecord, SpendRules, WalletRecord, U256,
    };
    use ports::{
        Approval, ApprovalCheck, IntentApproval, MockAgentStore, MockChainClient,
        MockIntentRecords, MockIntentTransitions, MockNotifications, MockWalletUsage,
    };
    use uuid::Uuid;

    use crate::operator::tests::actor;

    /// The intents' ports, mocked: each expects only what a test tells it.
    #[derive(Default)]
    struct Ledger {
        records: MockIntentRecords,
        usage: MockWalletUsage,
        transitions: MockIntentTransitions,
    }

    /// The token of the tests' wallets, whose balance is read from the chain.
    fn token() -> EvmAddress {
        EvmAddress::from_bytes([0xaa; 20])
    }

    fn deciding(store: MockAgentStore, intents: Ledger) -> IntentDecisions {
        deciding_with_balance(store, intents, 1_000)
    }

    /// Decisions over a chain where every wallet holds `balance` of the token.
    fn deciding_with_balance(
        store: MockAgentStore,
        intents: Ledger,
        balance: u64,
    ) -> IntentDecisions {
        let mut chain = MockChainClient::new();
        chain
            .expect_token_balance()
            .returning(move |_, _| Ok(U256::from(balance)));
        deciding_over(store, intents, chain)
    }

    fn deciding_over(
        store: MockAgentStore,
        intents: Ledger,
        chain: MockChainClient,
    ) -> IntentDecisions {
        IntentDecisions::new(
            DecisionStores {
                agents: Arc::new(store),
                intents: Arc::new(intents.records),
                usage: Arc::new(intents.usage),
                transitions: Arc::new(intents.transitions),
                notifications: Arc::new(MockNotifications::new()),
                chain: Arc::new(chain),
            },
            token(),
            Duration::from_secs(24 * 60 * 60),
        )
    }

    #[tokio::test]
    async fn a_rejection_always_records_a_reason_and_who_took_it() {
        let mut intents = Ledger::default();
        intents
            .transitions
            .expect_transition()
            .withf(|_, event, reason, decided_by| {
                *event == IntentEvent::Reject
                    && reason.as_deref() == Some("rejected by operator")
                    && *decided_by == actor()
            })
            .times(1)
            .returning(|id, _, _, _| Err(TransitionError::NotFound(id)));
        let decisions = deciding(MockAgentStore::new(), intents);
        assert!(decisions
            .reject(IntentId(Uuid::now_v7()), None, &actor())
            .await
            .is_err());
    }

    /// A pending intent of 25, the profile of its agent and its wallet, with a daily limit of
    /// `daily`.
    fn pending_with(
        active: bool,
        daily: &str,
    ) -> (TransferIntentRecord, MockAgentStore, WalletRecord) {
        pending_under(active, daily, Quorum::default())
    }

    /// `pending_with`, the policy asking for `quorum` too.
    fn pending_under(
        active: bool,
        daily: &str,
        quorum: Quorum,
    ) -> (TransferIntentRecord, MockAgentStore, WalletRecord) {
        let intent = TransferIntentRecord::fixture();
        let policy = SpendPolicyRecord {
            rules: SpendRules {
                limits: SpendLimits {
                    max_daily: Some(AtomicAmount::parse(daily).expect("valid")),
                    ..SpendLimits::default()
                },
                quorum,
                ..SpendRules::default()
            },
            ..SpendPolicyRecord::fixture()
        };
        let profile = AgentProfile {
            agent: AgentRecord {
                is_active: active,
                ..AgentRecord::fixture()
            },
            wallet: Some(WalletRecord {
                spend_policy: Some(policy),
                ..WalletRecord::fixture()
            }),
            ..AgentProfile::fixture()
        };
        let wallet = profile.wallet.clone().expect("a wallet");
        let mut store = MockAgentStore::new();
        store
            .expect_profile()
            .returning(move |_| Ok(Some(profile.clone())));
        (intent, store, wallet)
    }

    /// How the store answers an approval: `check` judged under its locks with `held` in the
    /// wallet's windows and `committed` of its balance, and the intent confirmed when it passes.
    fn judged(
        intent: &TransferIntentRecord,
        wallet: &WalletRecord,
        agent_active: bool,
        held: u64,
        check: &ApprovalCheck,
    ) -> Result<Approval, TransitionError> {
        let verdict = check(&ApprovalContext {
            intent,
            agent_active,
            policy: wallet.spend_policy.as_ref(),
            held: Held {
                daily: U256::from(held),
                ..Held::default()
            },
            committed: U256::ZERO,
        })
        .map_err(TransitionError::Judged)?;
        Ok(Approval {
            intent: TransferIntentRecord {
                status: IntentStatus::Confirmed,
                ..intent.clone()
            },
            counted: true,
            verdict,
        })
    }

    /// A ledger holding `intent` and its `wallet` (its agent active or not), with `held` in the
    /// wallet's window, expecting `approvals` approvals by `actor()`, each judged as the store
    /// judges them.
    fn ledger_of(
        intent: TransferIntentRecord,
        wallet: &WalletRecord,
        agent_active: bool,
        held: u64,
        approvals: usize,
    ) -> Ledger {
        let mut intents = reading_ledger(&intent);
        let wallet = wallet.clone();
        intents
            .transitions
            .expect_approve()
            .withf(|_, approver, _| *approver == actor())
            .times(approvals)
            .returning(move |_, _, check| judged(&intent, &wallet, agent_active, held, check));
        intents
    }

    /// A ledger that finds `intent`.
    fn reading_ledger(intent: &TransferIntentRecord) -> Ledger {
        let mut intents = Ledger::default();
        let found = intent.clone();
        intents
            .records
            .expect_find()
            .returning(move |_| Ok(Some(found.clone())));
        intents
    }

    fn two_above_ten() -> Quorum {
        Quorum {
            required: Some(ApprovalCount::quorum(2).expect("in range")),
            above: Some(AtomicAmount::parse("10").expect("valid")),
        }
    }

    #[tokio::test]
    async fn above_the_quorum_threshold_only_named_operators_approve() {
        let (intent, store, wallet) = pending_under(true, "100", two_above_ten());
        let decisions = deciding(store, ledger_of(intent.clone(), &wallet, true, 25, 1));
        assert!(matches!(
            decisions
                .confirm(intent.id, false, BalanceCheck::Required, &actor())
                .await,
            Err(ConfirmError::QuorumNeedsNamedOperator { required: 2, .. })
        ));
    }

    #[tokio::test]
    async fn a_second_approval_of_one_operator_is_refused() {
        let (intent, store, _) = pending_under(true, "100", two_above_ten());
        let bob = Operator::Named(domain::OperatorName::parse("bob").expect("valid"));
        let mut intents = reading_ledger(&intent);
        let pending = intent.clone();
        intents
            .transitions
            .expect_approve()
            .times(1)
            .returning(move |_, _, _| {
                Ok(Approval {
                    intent: TransferIntentRecord {
                        approvals: Approvals {
                            required: 2,
                            received: 1,
                        },
                        ..pending.clone()
                    },
                    counted: false,
                    verdict: Ok(()),
                })
            });
        let decisions = deciding(store, intents);
        let refused = decisions
            .confirm(
                intent.id,
                false,
                BalanceCheck::Required,
                &Actor::local(bob.clone()),
            )
            .await;
        assert!(
            matches!(
                &refused,
                Err(ConfirmError::AlreadyApproved {
                    required: 2,
                    received: 1,
                    ..
                })
            ),
            "{refused:?}"
        );
        assert!(refused
            .expect_err("refused")
            .to_string()
            .contains("operator:bob has already approved"));
    }

    #[tokio::test]
    async fn a_confirmation_repeated_after_it_took_effect_answers_the_intent_again() {
        let (pending, store, _) = pending_with(true, "100");
        let confirmed = TransferIntentRecord {
            status: IntentStatus::Confirmed,
            ..pending
        };
        let mut intents = reading_ledger(&confirmed);
        intents.records.expect_approvals().returning(|_| {
            Ok(vec![IntentApproval {
                approver: actor().operator,
                approved_at: OffsetDateTime::UNIX_EPOCH,
                counts: true,
            }])
        });
        let decisions = deciding(store, intents);
        let again = decisions
            .confirm(confirmed.id, false, BalanceCheck::Required, &actor())
            .await
            .expect("the first answer again");
        assert_eq!(again.intent, confirmed);
        assert!(again.policy_verdict.is_ok());

        // Forced, its first verdict is not kept; another operator's is not a repeat.
        assert!(decisions
            .confirm(confirmed.id, true, BalanceCheck::Required, &actor())
            .await
            .is_err());
        let bob = Operator::Named(domain::OperatorName::parse("bob").expect("valid"));
        assert!(decisions
            .confirm(
                confirmed.id,
                false,
                BalanceCheck::Required,
                &Actor::local(bob)
            )
            .await
            .is_err());
    }

    #[tokio::test]
    async fn the_intent_of_a_deactivated_agent_is_never_confirmed() {
        let (intent, store, wallet) = pending_with(false, "100");
        let id = intent.id;
        let decisions = deciding(store, ledger_of(intent, &wallet, false, 25, 2));
        for force in [false, true] {
            assert!(matches!(
                decisions.confirm(id, force, BalanceCheck::Required, &actor()).await,
                Err(ConfirmError::AgentInactive(x)) if x == id
            ));
        }
    }

    #[tokio::test]
    async fn a_confirmation_judges_the_intent_by_the_policy_in_force() {
        // Its own 25 is in the window already: 25 of others plus 25 fit a limit of 50.
        let (intent, store, wallet) = pending_with(true, "50");
        let decisions = deciding(store, ledger_of(intent.clone(), &wallet, true, 50, 1));
        let confirmed = decisions
            .confirm(intent.id, false, BalanceCheck::Required, &actor())
            .await
            .expect("within");
        assert_eq!(confirmed.policy_verdict, Ok(()));
        assert_eq!(confirmed.intent.status, IntentStatus::Confirmed);
    }

    #[tokio::test]
    async fn a_confirmation_that_breaks_a_tightened_policy_needs_force() {
        let (intent, store, wallet) = pending_with(true, "40");
        let decisions = deciding(store, ledger_of(intent.clone(), &wallet, true, 50, 2));
        assert!(matches!(
            decisions
                .confirm(intent.id, false, BalanceCheck::Required, &actor())
                .await,
            Err(ConfirmError::Policy(
                PolicyViolation::ExceedsWindowMax { .. }
            ))
        ));
        let forced = decisions
            .confirm(intent.id, true, BalanceCheck::Required, &actor())
            .await
            .expect("forced");
        assert!(matches!(
            forced.policy_verdict,
            Err(PolicyViolation::ExceedsWindowMax { .. })
        ));
    }

    #[tokio::test]
    async fn no_approval_is_made_that_the_balance_does_not_cover() {
        let (intent, store, wallet) = pending_with(true, "100");
        let decisions =
            deciding_with_balance(store, ledger_of(intent.clone(), &wallet, true, 25, 2), 24);
        for force in [false, true] {
            let refused = decisions
                .confirm(intent.id, force, BalanceCheck::Required, &actor())
                .await;
            assert!(
                matches!(&refused, Err(ConfirmError::Balance { .. })),
                "{refused:?}"
            );
            assert!(refused
                .expect_err("refused")
                .to_string()
                .contains("the wallet's balance does not cover it"));
        }
    }

    #[tokio::test]
    async fn an_unreadable_balance_approves_nothing() {
        let (intent, store, _) = pending_with(true, "100");
        let mut intents = reading_ledger(&intent);
        intents.transitions.expect_approve().never();
        let mut chain = MockChainClient::new();
        chain
            .expect_token_balance()
            .returning(|_, _| Err(ChainError::Unavailable("connection refused".into())));
        let decisions = deciding_over(store, intents, chain);
        assert!(matches!(
            decisions
                .confirm(intent.id, false, BalanceCheck::Required, &actor())
                .await,
            Err(ConfirmError::Chain(_))
        ));
    }

    #[tokio::test]
    async fn a_confirmation_that_leaves_the_balance_to_the_execution_asks_the_chain_nothing() {
        let (intent, store, wallet) = pending_with(true, "100");
        let mut chain = MockChainClient::new();
        chain.expect_token_balance().never();
        let decisions = deciding_over(
            store,
            ledger_of(intent.clone(), &wallet, true, 25, 1),
            chain,
        );
        let confirmed = decisions
            .confirm(intent.id, false, BalanceCheck::AtExecution, &actor())
            .await
            .expect("confirmed whatever the balance");
        assert_eq!(confirmed.intent.status, IntentStatus::Confirmed);
    }

    #[tokio::test]
    async fn an_inspection_shows_the_verdict_now_the_balance_and_the_same_recipients_intents() {
        let (intent, store, wallet) = pending_with(true, "30");
        let mut intents = reading_ledger(&intent);
        intents
            .usage
            .expect_paid_recipients()
            .returning(|_| Ok(Vec::new()));
        let in_windows = wallet.clone();
        intents
            .usage
            .expect_wallet_and_held()
            .returning(move |_, _| {
                Ok(Some((
                    in_windows.clone(),
                    Held {
                        daily: U256::from(40u64),
                        ..Held::default()
                    },
                )))
            });
        let earlier = TransferIntentRecord {
            id: IntentId(Uuid::now_v7()),
            status: IntentStatus::Executed,
            ..intent.clone()
        };
        let listed = vec![intent.clone(), earlier.clone()];
        let (agent, recipient) = (intent.agent_id, intent.recipient);
        intents
            .records
            .expect_list()
            .withf(move |filter| {
                filter.agent == Some(agent)
                    && filter.recipient == Some(recipient)
                    && filter.status.is_none()
                    && !filter.oldest_first
            })
            .times(1)
            .returning(move |_| Ok(listed.clone()));
        let approvals = vec![IntentApproval {
            approver: Operator::Named(domain::OperatorName::parse("alice").expect("valid")),
            approved_at: OffsetDateTime::UNIX_EPOCH,
            counts: false,
        }];
        let shown = approvals.clone();
        intents
            .records
            .expect_approvals()
            .times(1)
            .returning(move |_| Ok(shown.clone()));
        let inspection = deciding_with_balance(store, intents, 7)
            .inspect(intent.id)
            .await
            .expect("inspected");
        let review = inspection.review.expect("a pending intent is reviewed");
        assert!(
            matches!(
                review.verdict,
                Err(PolicyViolation::ExceedsWindowMax { .. })
            ),
            "40 held with its own 25 against a day of 30: {:?}",
            review.verdict
        );
        assert_eq!(review.recipient, RecipientStanding::New);
        assert_eq!(inspection.balance, Ok(U256::from(7u64)));
        assert_eq!(
            inspection
                .to_same_recipient
                .iter()
                .map(|other| other.id)
                .collect::<Vec<_>>(),
            [earlier.id],
            "the inspected intent is left out"
        );
        assert_eq!(
            inspection.approvals, approvals,
            "each with whether it counts"
        );
    }
}
