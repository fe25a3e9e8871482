use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::sql_types::{Array, Double, Text, Uuid as SqlUuid};
use diesel_async::{RunQueryDsl, SimpleAsyncConnection};
use domain::{
    check_recipient, evaluate_transfer, Actor, Admitted, AgentId, AgentKey, ApprovalCount, Asset,
    AtomicAmount, AuditAction, AuditTarget, Chain, ConfirmedBy, CursorPosition, Custody,
    EarliestExecutions, EvmAddress, FeeQuote, Held, IdempotencyKey, IntentEvent, IntentId,
    IntentStatus, Label, LeaseId, Operator, OperatorName, PolicyAsset, PolicyChange,
    PolicyViolation, RateLimit, RecipientLimit, RecipientLimitsChange, RecipientRefused,
    Reservation, SpendWindow, TransferTerms, TransitionRefused, WalletId, WalletRecord, U256,
};
use ports::{
    Admission, AdmissionContext, AdmissionError, AdmissionLimits, AdmissionRefusal, AgentStore,
    IntentAdmission, IntentFilter, IntentRecords, IntentSweeper, IntentTransitions, KeyedRefusal,
    Listing, ListingVersion, NewAgent, NewTransferIntent, NewWallet, Settlement, SettlementQueue,
    SignedTransfer, SubmissionClaim, SubmissionError, SubmissionQueue, TransitionError,
    WalletUsage, CONFIRMED_INTENTS_TOPIC,
};
use postgres_store::{Database, PgAgentStore, PgIntentStore, PoolSettings, NOTIFICATION_CHANNEL};
use test_support::TestDatabase;
use uuid::Uuid;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);
/// How long a look at due intents holds them back from other executors.
const LOOK: Duration = Duration::from_secs(60);

struct Fixture {
    database: TestDatabase,
    agents: PgAgentStore,
    intents: Arc<PgIntentStore>,
}

async fn fixture() -> Fixture {
    let database = TestDatabase::new().await;
    let pool = Database::connect(
        &database.connector(),
        PoolSettings {
            max_size: 24,
            ..PoolSettings::default()
        },
    )
    .expect("pool");
    Fixture {
        agents: PgAgentStore::new(pool.clone()),
        intents: Arc::new(PgIntentStore::new(pool)),
        database,
    }
}

fn usdc() -> PolicyAsset {
    PolicyAsset::usdc_on_base(EvmAddress::from_bytes([0xaa; 20]))
}

fn address(last: u8) -> EvmAddress {
    let mut bytes = [0x22u8; 20];
    bytes[19] = last;
    EvmAddress::from_bytes(bytes)
}

/// The operator deciding in these tests: `agentctl` run by a user it could not name.
fn cli() -> Operator {
    Operator::Cli { user: None }
}

/// An approval check that lets every approval through, saying the policy allows it.
fn approve_any(
    _: &ports::ApprovalContext<'_>,
) -> Result<Result<(), PolicyViolation>, domain::ApprovalRefusal> {
    Ok(Ok(()))
}

/// `cli()` acting on the control plane's host.
fn on_cli() -> Actor {
    Actor::local(cli())
}

fn amount(digits: &str) -> AtomicAmount {
    AtomicAmount::parse(digits).expect("valid")
}

async fn new_agent(fixture: &Fixture, seed: u8, wallet: bool) -> AgentId {
    let id = AgentId(Uuid::now_v7());
    let wallet = wallet.then(|| NewWallet {
        provider: "local".into(),
        chain: Chain::Base,
        address: address(seed),
        custody: Custody::SelfCustodial,
        sealed_key: vec![seed],
        policy_asset: usdc(),
    });
    fixture
        .agents
        .create(
            NewAgent {
                id,
                sponsor: "acme".into(),
                label: Some(Label::parse("payer").expect("valid")),
                key_id: domain::keys::KeyId::generate(),
                key_hash: AgentKey::from_random_bytes([seed; 32]).hash(),
                phone_number: None,
                email_inbox: None,
                wallet,
            },
            &crate::actor(),
        )
        .await
        .expect("agent");
    id
}

fn send(agent: AgentId, value: &str, key: Option<&str>) -> NewTransferIntent {
    NewTransferIntent {
        id: IntentId(Uuid::now_v7()),
        agent_id: agent,
        terms: TransferTerms {
            asset: Asset::Usdc,
            chain: Chain::Base,
            recipient: address(99),
            amount: amount(value),
        },
        token_address: usdc().token_address,
        idempotency_key: key.map(|key| IdempotencyKey::parse(key).expect("valid key")),
        key_id: None,
        x402: None,
    }
}

/// Admission's limits, with a send rate no test but the rate's own reaches.
const LIMITS: AdmissionLimits = AdmissionLimits {
    idempotency_key: DAY,
    rate: RateLimit {
        per_minute: 1_000_000,
        burst: 1_000_000,
    },
};

/// The production check: the domain's recipient rule and policy evaluation.
fn policy_check(
    recipient: EvmAddress,
    value: AtomicAmount,
) -> impl Fn(&AdmissionContext<'_>) -> Result<Admitted, AdmissionRefusal> {
    move |context| {
        check_recipient(
            &recipient,
            context.wallet_address,
            usdc().token_address.as_ref(),
        )
        .map_err(AdmissionRefusal::Recipient)?;
        evaluate_transfer(&context.policy.rules, &recipient, value, &context.held)
            .map_err(AdmissionRefusal::Policy)
    }
}

async fn admit(fixture: &Fixture, intent: NewTransferIntent) -> Result<Admission, AdmissionError> {
    let check = policy_check(intent.terms.recipient, intent.terms.amount);
    fixture.intents.admit(intent, LIMITS, &check, None).await
}

/// Runs `sql` on the test database, e.g. to move stored times as a moved clock would.
async fn execute(fixture: &Fixture, sql: &str) {
    let mut connection = fixture.database.connection().await;
    connection.batch_execute(sql).await.expect(sql);
}

fn created(admission: Result<Admission, AdmissionError>) -> domain::TransferIntentRecord {
    match admission.expect("admitted") {
        Admission::Created(intent) => intent,
        replayed => panic!("expected a new intent, got {replayed:?}"),
    }
}

async fn set_daily(fixture: &Fixture, agent: AgentId, daily: &str) {
    let change = PolicyChange {
        max_daily: Some(Some(amount(daily))),
        ..PolicyChange::default()
    };
    change_policy(fixture, agent, change).await;
}

async fn change_policy(fixture: &Fixture, agent: AgentId, change: PolicyChange) {
    fixture
        .agents
        .update_policy(agent, usdc(), change, &crate::actor())
        .await
        .expect("policy")
        .expect("wallet");
}

#[tokio::test]
async fn an_admitted_intent_is_pending_with_nothing_executed() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 1, true).await;
    let Admission::Created(intent) = admit(&fixture, send(agent, "5", None))
        .await
        .expect("admitted")
    else {
        panic!("expected a new intent");
    };
    assert_eq!(intent.status, IntentStatus::PendingConfirmation);
    assert_eq!(
        (intent.tx_hash, intent.failure_reason, intent.confirmed_at),
        (None, None, None)
    );
    assert_eq!(intent.amount, amount("5"));
    assert_eq!(intent.recipient, address(99));
    assert_eq!(
        fixture
            .intents
            .find(intent.id)
            .await
            .expect("find")
            .map(|i| i.id),
        Some(intent.id)
    );
}

#[tokio::test]
async fn an_agent_without_wallet_cannot_send() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 2, false).await;
    assert_eq!(
        admit(&fixture, send(agent, "5", None)).await,
        Err(AdmissionError::NoWallet)
    );
}

#[tokio::test]
async fn the_daily_limit_counts_held_intents_and_releases_rejected_ones() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 3, true).await;
    set_daily(&fixture, agent, "10").await;
    let Admission::Created(first) = admit(&fixture, send(agent, "6", None))
        .await
        .expect("first")
    else {
        panic!()
    };
    let refused = admit(&fixture, send(agent, "5", None)).await;
    assert!(
        matches!(refused, Err(AdmissionError::Refused(AdmissionRefusal::Policy(PolicyViolation::ExceedsWindowMax { window: SpendWindow::Daily, available, .. }))) if available == U256::from(4)),
        "{refused:?}"
    );
    fixture
        .intents
        .transition(
            first.id,
            IntentEvent::Reject,
            Some("not today".into()),
            on_cli(),
        )
        .await
        .expect("rejected");
    assert!(
        admit(&fixture, send(agent, "10", None)).await.is_ok(),
        "the rejected amount was released"
    );
}

#[tokio::test]
async fn a_refused_send_stores_nothing() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 4, true).await;
    let change = PolicyChange {
        max_per_tx: Some(Some(amount("3"))),
        ..PolicyChange::default()
    };
    fixture
        .agents
        .update_policy(agent, usdc(), change, &crate::actor())
        .await
        .expect("policy");
    assert!(admit(&fixture, send(agent, "4", Some("k"))).await.is_err());
    assert!(fixture
        .intents
        .page(agent, None, 10)
        .await
        .expect("page")
        .is_empty());
    assert!(
        admit(&fixture, send(agent, "3", Some("k"))).await.is_ok(),
        "the key was not consumed"
    );
}

#[tokio::test]
async fn an_idempotency_key_replays_the_original_or_conflicts() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 5, true).await;
    let Admission::Created(original) = admit(&fixture, send(agent, "7", Some("pay-1")))
        .await
        .expect("first")
    else {
        panic!()
    };
    let replay = admit(&fixture, send(agent, "7", Some("pay-1")))
        .await
        .expect("replayed");
    assert_eq!(replay, Admission::Replayed(original.clone()));
    let mismatch = admit(&fixture, send(agent, "8", Some("pay-1"))).await;
    assert_eq!(
        mismatch,
        Err(AdmissionError::Keyed(KeyedRefusal::IdempotencyMismatch {
            original: original.id
        }))
    );
    let other_agent = new_agent(&fixture, 6, true).await;
    assert!(
        matches!(
            admit(&fixture, send(other_agent, "8", Some("pay-1"))).await,
            Ok(Admission::Created(_))
        ),
        "keys are scoped to the agent"
    );
}

#[tokio::test]
async fn concurrent_sends_never_reserve_more_than_the_daily_limit() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 7, true).await;
    set_daily(&fixture, agent, "10").await;
    let tasks: Vec<_> = (0..40)
        .map(|_| {
            let intents = fixture.intents.clone();
            tokio::spawn(async move {
                let intent = send(agent, "1", None);
                let check = policy_check(intent.terms.recipient, intent.terms.amount);
                intents.admit(intent, LIMITS, &check, None).await
            })
        })
        .collect();
    let mut admitted = 0;
    for task in tasks {
        match task.await.expect("task") {
            Ok(Admission::Created(_)) => admitted += 1,
            Err(AdmissionError::Refused(AdmissionRefusal::Policy(
                PolicyViolation::ExceedsWindowMax {
                    window: SpendWindow::Daily,
                    ..
                },
            ))) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(admitted, 10);
}

#[tokio::test]
async fn concurrent_first_uses_of_one_key_make_one_intent() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 8, true).await;
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let intents = fixture.intents.clone();
            tokio::spawn(async move {
                let intent = send(agent, "2", Some("same"));
                let check = policy_check(intent.terms.recipient, intent.terms.amount);
                intents.admit(intent, LIMITS, &check, None).await
            })
        })
        .collect();
    let mut ids = Vec::new();
    for task in tasks {
        match task.await.expect("task") {
            Ok(Admission::Created(intent) | Admission::Replayed(intent)) => ids.push(intent.id),
            // Arrived while the first was being admitted: turned away at once, not queued.
            Err(AdmissionError::Keyed(KeyedRefusal::KeyInFlight)) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    ids.dedup();
    assert_eq!(ids.len(), 1);
    assert_eq!(
        fixture
            .intents
            .page(agent, None, 100)
            .await
            .expect("page")
            .len(),
        1
    );
}

#[tokio::test]
async fn pages_run_newest_first_without_gaps_or_repeats() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 9, true).await;
    let mut created = Vec::new();
    for _ in 0..7 {
        if let Admission::Created(intent) = admit(&fixture, send(agent, "1", None))
            .await
            .expect("admitted")
        {
            created.push(intent.id);
        }
    }
    created.reverse();
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = fixture.intents.page(agent, after, 3).await.expect("page");
        seen.extend(page.iter().map(|intent| intent.id));
        match page.last() {
            Some(last) if page.len() == 3 => {
                after = Some(CursorPosition {
                    created_at_micros: i64::try_from(last.created_at.unix_timestamp_nanos() / 1000)
                        .expect("fits"),
                    id: last.id.0,
                });
            }
            _ => break,
        }
    }
    assert_eq!(seen, created);
    let other = new_agent(&fixture, 10, true).await;
    assert!(
        fixture
            .intents
            .page(other, None, 10)
            .await
            .expect("page")
            .is_empty(),
        "no intent of another agent"
    );
}

#[tokio::test]
async fn every_change_to_an_agents_intents_moves_its_listing_version_and_only_its() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 12, true).await;
    let bystander = new_agent(&fixture, 13, true).await;
    let version = |agent| fixture.intents.listing_version(agent);
    let untouched = ListingVersion {
        listing: Listing::Intents(agent),
        changes: 0,
    };
    assert_eq!(version(agent).await.expect("read"), untouched);

    let intent = created(admit(&fixture, send(agent, "1", None)).await);
    let admitted = version(agent).await.expect("read");
    assert!(admitted.changes > untouched.changes);
    assert_eq!(
        version(agent).await.expect("read"),
        admitted,
        "reading moves nothing"
    );

    set_daily(&fixture, agent, "1").await;
    assert!(admit(&fixture, send(agent, "1", None)).await.is_err());
    assert_eq!(
        version(agent).await.expect("read"),
        admitted,
        "a refused send changes no intent"
    );

    fixture
        .intents
        .transition(intent.id, IntentEvent::Confirm, None, on_cli())
        .await
        .expect("confirmed");
    let confirmed = version(agent).await.expect("read");
    assert!(confirmed.changes > admitted.changes);
    execute(
        &fixture,
        &format!("DELETE FROM transfer_intents WHERE id = '{}'", intent.id.0),
    )
    .await;
    assert!(version(agent).await.expect("read").changes > confirmed.changes);
    assert_eq!(
        version(bystander).await.expect("read"),
        ListingVersion {
            listing: Listing::Intents(bystander),
            changes: 0,
        }
    );
}

#[tokio::test]
async fn transitions_follow_the_state_machine_and_record_their_times() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 11, true).await;
    let Admission::Created(intent) = admit(&fixture, send(agent, "1", None))
        .await
        .expect("admitted")
    else {
        panic!()
    };
    let confirmed = fixture
        .intents
        .transition(intent.id, IntentEvent::Confirm, None, on_cli())
        .await
        .expect("confirmed");
    assert_eq!(confirmed.status, IntentStatus::Confirmed);
    assert!(confirmed.confirmed_at.is_some());
    let refused = fixture
        .intents
        .transition(
            intent.id,
            IntentEvent::Reject,
            Some("late".into()),
            on_cli(),
        )
        .await;
    assert_eq!(
        refused,
        Err(TransitionError::Refused(TransitionRefused {
            from: IntentStatus::Confirmed,
            event: IntentEvent::Reject
        }))
    );
    let failed = fixture
        .intents
        .transition(
            intent.id,
            IntentEvent::Fail,
            Some("reverted".into()),
            on_cli(),
        )
        .await
        .expect("failed");
    assert_eq!(
        (failed.status, failed.failure_reason.as_deref()),
        (IntentStatus::Failed, Some("reverted"))
    );
    let missing = IntentId(Uuid::now_v7());
    assert_eq!(
        fixture
            .intents
            .transition(missing, IntentEvent::Confirm, None, on_cli())
            .await,
        Err(TransitionError::NotFound(missing))
    );
    let listed = fixture
        .intents
        .list(IntentFilter {
            agent: Some(agent),
            status: Some(IntentStatus::Failed),
            ..IntentFilter::default()
        })
        .await
        .expect("list");
    assert_eq!(listed.len(), 1);
    assert!(fixture
        .intents
        .list(IntentFilter {
            agent: None,
            status: Some(IntentStatus::Confirmed),
            ..IntentFilter::default()
        })
        .await
        .expect("list")
        .is_empty());
    // A newer pending intent is no decided one, whatever the limit.
    let Admission::Created(pending) = admit(&fixture, send(agent, "1", None))
        .await
        .expect("admitted")
    else {
        panic!()
    };
    let decided = |decided| IntentFilter {
        agent: Some(agent),
        decided,
        limit: Some(1),
        ..IntentFilter::default()
    };
    let ids = |listed: Vec<domain::TransferIntentRecord>| {
        listed.iter().map(|intent| intent.id).collect::<Vec<_>>()
    };
    let newest = fixture.intents.list(decided(false)).await.expect("list");
    assert_eq!(ids(newest), [pending.id]);
    let newest_decided = fixture.intents.list(decided(true)).await.expect("list");
    assert_eq!(ids(newest_decided), [intent.id]);
}

#[tokio::test]
async fn only_intents_pending_past_their_time_expire_and_release_their_amount() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 12, true).await;
    set_daily(&fixture, agent, "10").await;
    let Admission::Created(old_pending) = admit(&fixture, send(agent, "4", None))
        .await
        .expect("admitted")
    else {
        panic!()
    };
    let Admission::Created(old_confirmed) = admit(&fixture, send(agent, "4", None))
        .await
        .expect("admitted")
    else {
        panic!()
    };
    let Admission::Created(fresh) = admit(&fixture, send(agent, "2", None))
        .await
        .expect("admitted")
    else {
        panic!()
    };
    fixture
        .intents
        .transition(old_confirmed.id, IntentEvent::Confirm, None, on_cli())
        .await
        .expect("confirmed");
    execute(
        &fixture,
        &format!(
            "UPDATE transfer_intents SET created_at = now() - interval '2 hours' WHERE id IN ('{}', '{}')",
            old_pending.id, old_confirmed.id
        ),
    )
    .await;
    let expired = fixture
        .intents
        .expire_pending(Duration::from_secs(3600), 100)
        .await
        .expect("expired");
    assert_eq!(
        expired.iter().map(|i| (i.id, i.status)).collect::<Vec<_>>(),
        vec![(old_pending.id, IntentStatus::Expired)]
    );
    let statuses = |id| {
        let intents = fixture.intents.clone();
        async move {
            intents
                .find(id)
                .await
                .expect("find")
                .expect("exists")
                .status
        }
    };
    assert_eq!(statuses(old_confirmed.id).await, IntentStatus::Confirmed);
    assert_eq!(statuses(fresh.id).await, IntentStatus::PendingConfirmation);
    assert!(
        admit(&fixture, send(agent, "4", None)).await.is_ok(),
        "the expired amount was released"
    );
    assert!(fixture
        .intents
        .expire_pending(Duration::from_secs(3600), 100)
        .await
        .expect("none")
        .is_empty());
}

const MARKET: FeeQuote = FeeQuote {
    max_fee_per_gas: 1_000,
    max_priority_fee_per_gas: 100,
};

fn signed_for(claim: &SubmissionClaim, nonce: u64, fees: FeeQuote) -> SignedTransfer {
    SignedTransfer {
        from: claim.wallet_address,
        token: claim.intent.token_address.expect("token"),
        to: claim.intent.recipient,
        amount: claim.intent.amount.value(),
        nonce,
        fees,
        raw: vec![0x02, nonce as u8, fees.max_fee_per_gas as u8],
        hash: format!(
            "0x{}{:016x}{:016x}",
            claim.intent.id.0.simple(),
            fees.max_fee_per_gas,
            nonce
        ),
    }
}

/// Leases the oldest confirmed intent for 30 s, if one is free.
async fn claim_next(fixture: &Fixture) -> Option<SubmissionClaim> {
    fixture
        .intents
        .claim_confirmed(LeaseId(Uuid::now_v7()), Duration::from_secs(30))
        .await
        .expect("claim")
}

async fn confirmed_intent(fixture: &Fixture, agent: AgentId) -> IntentId {
    let intent = created(admit(fixture, send(agent, "1", None)).await);
    fixture
        .intents
        .transition(intent.id, IntentEvent::Confirm, None, on_cli())
        .await
        .expect("confirmed");
    intent.id
}

/// Claims the next confirmed intent, assigns it a nonce as the chain counts `chain_next`, and
/// records its first transaction; returns the claim and the transaction.
async fn submit_next(fixture: &Fixture, chain_next: u64) -> (SubmissionClaim, SignedTransfer) {
    let claim = claim_next(fixture).await.expect("a confirmed intent");
    let nonce = fixture
        .intents
        .assign_nonce(claim.intent.id, claim.lease, chain_next)
        .await
        .expect("assigned");
    let transfer = signed_for(&claim, nonce, MARKET);
    fixture
        .intents
        .record_attempt(
            claim.intent.id,
            Some(claim.lease),
            &transfer,
            Duration::ZERO,
        )
        .await
        .expect("recorded");
    (claim, transfer)
}

#[tokio::test]
async fn a_claim_is_taken_under_the_lease_its_caller_named_and_given_back_by_it_alone() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 14, true).await;
    let id = confirmed_intent(&fixture, agent).await;
    let named = LeaseId(Uuid::now_v7());
    let claim = fixture
        .intents
        .claim_confirmed(named, Duration::from_secs(30))
        .await
        .expect("claim")
        .expect("due");
    assert_eq!((claim.intent.id, claim.lease), (id, named));
    fixture
        .intents
        .release(LeaseId(Uuid::now_v7()))
        .await
        .expect("a lease that holds nothing releases nothing");
    assert!(claim_next(&fixture).await.is_none(), "still leased");
    // As after a claim whose answer was lost: only the lease is known, not the intent.
    fixture.intents.release(named).await.expect("released");
    let again = claim_next(&fixture).await.expect("due at once");
    assert_eq!(again.intent.id, id);
}

#[tokio::test]
async fn a_claim_is_exclusive_and_recording_keeps_the_exact_transaction() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 13, true).await;
    let id = confirmed_intent(&fixture, agent).await;
    let claim = claim_next(&fixture).await.expect("one");
    assert_eq!(
        (claim.intent.id, claim.nonce, claim.agent_active),
        (id, None, true)
    );
    assert_eq!(claim.sealed_key, vec![13]);
    assert!(claim_next(&fixture).await.is_none(), "leased");
    let stranger = LeaseId(Uuid::new_v4());
    assert_eq!(
        fixture.intents.assign_nonce(id, stranger, 0).await,
        Err(SubmissionError::LeaseLost(id))
    );
    let nonce = fixture
        .intents
        .assign_nonce(id, claim.lease, 0)
        .await
        .expect("assigned");
    assert_eq!(nonce, 0);
    let transfer = signed_for(&claim, nonce, MARKET);
    assert_eq!(
        fixture
            .intents
            .record_attempt(id, Some(stranger), &transfer, Duration::ZERO)
            .await,
        Err(SubmissionError::LeaseLost(id))
    );
    let submitted = fixture
        .intents
        .record_attempt(id, Some(claim.lease), &transfer, Duration::ZERO)
        .await
        .expect("recorded");
    assert_eq!(
        (submitted.status, submitted.tx_hash.as_deref()),
        (IntentStatus::Submitted, Some(transfer.hash.as_str()))
    );
    let due = fixture
        .intents
        .due_submitted(10, 10, LOOK)
        .await
        .expect("due");
    assert_eq!(due.len(), 1);
    assert_eq!(
        (due[0].nonce, due[0].attempts.clone()),
        (0, vec![transfer]),
        "the very bytes that were signed, for any re-broadcast"
    );
}

#[tokio::test]
async fn nonces_of_one_wallet_are_distinct_and_consecutive_whoever_assigns_them() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 14, true).await;
    for _ in 0..12 {
        confirmed_intent(&fixture, agent).await;
    }
    let tasks: Vec<_> = (0..12)
        .map(|_| {
            let intents = fixture.intents.clone();
            tokio::spawn(async move {
                let claim = intents
                    .claim_confirmed(LeaseId(Uuid::now_v7()), Duration::from_secs(30))
                    .await
                    .expect("claim")
                    .expect("one each");
                // The chain's count lags behind: the wallet's own record is the authority.
                intents
                    .assign_nonce(claim.intent.id, claim.lease, 3)
                    .await
                    .expect("assigned")
            })
        })
        .collect();
    let mut nonces = Vec::new();
    for task in tasks {
        nonces.push(task.await.expect("task"));
    }
    nonces.sort_unstable();
    assert_eq!(nonces, (3..15).collect::<Vec<u64>>());
}

#[tokio::test]
async fn a_reclaimed_intent_keeps_its_nonce_and_a_failure_before_sending_gives_the_last_back() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 15, true).await;
    let first = confirmed_intent(&fixture, agent).await;
    let lapsed = claim_next(&fixture).await.expect("one");
    let nonce = fixture
        .intents
        .assign_nonce(first, lapsed.lease, 0)
        .await
        .expect("assigned");
    // The executor died before recording and its lease ran out; another one takes the intent.
    execute(
        &fixture,
        &format!("UPDATE transfer_intents SET lease_until = now() - interval '1 second' WHERE id = '{first}'"),
    )
    .await;
    let retaken = claim_next(&fixture)
        .await
        .expect("the lapsed claim is free");
    assert_eq!((retaken.intent.id, retaken.nonce), (first, Some(nonce)));
    assert_eq!(
        fixture.intents.assign_nonce(first, retaken.lease, 9).await,
        Ok(nonce),
        "the nonce assigned before, whatever the chain says now"
    );
    let failed = fixture
        .intents
        .settle(first, Settlement::Failed("cannot sign".into()), None)
        .await
        .expect("failed");
    assert_eq!(failed.status, IntentStatus::Failed);
    let second = confirmed_intent(&fixture, agent).await;
    let claim = claim_next(&fixture).await.expect("second");
    assert_eq!(claim.intent.id, second);
    assert_eq!(
        fixture.intents.assign_nonce(second, claim.lease, 0).await,
        Ok(nonce),
        "the failed intent's nonce was the wallet's last, so it was given back"
    );
}

#[tokio::test]
async fn a_replacement_keeps_the_nonce_and_any_of_the_transactions_settles_the_intent() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 16, true).await;
    let id = confirmed_intent(&fixture, agent).await;
    let (claim, first) = submit_next(&fixture, 0).await;
    let better = FeeQuote {
        max_fee_per_gas: 1_200,
        max_priority_fee_per_gas: 120,
    };
    assert_eq!(
        fixture
            .intents
            .record_attempt(id, None, &signed_for(&claim, 1, better), Duration::ZERO)
            .await,
        Err(SubmissionError::WrongNonce {
            intent: id,
            owned: 0,
            offered: 1
        })
    );
    let replacement = signed_for(&claim, 0, better);
    fixture
        .intents
        .record_attempt(id, None, &replacement, Duration::ZERO)
        .await
        .expect("replacement recorded");
    fixture
        .intents
        .record_broadcast(&first.hash, Some("rate limited".into()))
        .await
        .expect("noted");
    let attempts = fixture.intents.attempts(id).await.expect("attempts");
    assert_eq!(
        attempts
            .iter()
            .map(|a| (a.transfer.hash.clone(), a.broadcasts, a.last_error.clone()))
            .collect::<Vec<_>>(),
        vec![
            (replacement.hash.clone(), 0, None),
            (first.hash.clone(), 1, Some("rate limited".into()))
        ],
        "newest first, with how each broadcast went"
    );
    let executed = fixture
        .intents
        .settle(
            id,
            Settlement::Executed {
                tx_hash: first.hash.clone(),
                block_number: Some(12),
            },
            None,
        )
        .await
        .expect("settled");
    assert_eq!(
        (executed.status, executed.tx_hash, executed.block_number),
        (IntentStatus::Executed, Some(first.hash), Some(12)),
        "the transaction that was mined, even if it was not the newest, and its block"
    );
}

#[tokio::test]
async fn due_intents_come_from_each_wallets_lowest_nonces_wallet_by_wallet() {
    let fixture = fixture().await;
    let backlog = new_agent(&fixture, 19, true).await;
    let other = new_agent(&fixture, 20, true).await;
    for _ in 0..5 {
        confirmed_intent(&fixture, backlog).await;
    }
    let mut backlog_ids = Vec::new();
    for nonce in 0..5 {
        backlog_ids.push(submit_next(&fixture, nonce).await.0.intent.id);
    }
    confirmed_intent(&fixture, other).await;
    let (other_claim, _) = submit_next(&fixture, 0).await;
    let other_id = other_claim.intent.id;
    // The backlog's lowest nonce is being looked at elsewhere: it still holds its place in front.
    fixture
        .intents
        .reschedule(backlog_ids[0], Duration::from_secs(3600), false)
        .await
        .expect("rescheduled");
    let due = fixture
        .intents
        .due_submitted(10, 3, LOOK)
        .await
        .expect("due");
    assert_eq!(
        due.iter()
            .map(|d| (d.intent.id, d.nonce))
            .collect::<Vec<_>>(),
        vec![(backlog_ids[1], 1), (backlog_ids[2], 2), (other_id, 0)],
        "three lowest nonces per wallet, the most overdue wallet first, each in nonce order"
    );
    fixture
        .intents
        .settle(
            backlog_ids[0],
            Settlement::Executed {
                tx_hash: "0xmined".into(),
                block_number: None,
            },
            None,
        )
        .await
        .expect("settled");
    for id in [backlog_ids[1], backlog_ids[2], other_id] {
        fixture
            .intents
            .reschedule(id, Duration::ZERO, false)
            .await
            .expect("rescheduled");
    }
    let due = fixture
        .intents
        .due_submitted(2, 3, LOOK)
        .await
        .expect("due");
    assert_eq!(
        due.iter().map(|d| d.nonce).collect::<Vec<_>>(),
        vec![1, 2],
        "a settled nonce lets the next one in front, and the batch stops at its limit"
    );
    let due = fixture
        .intents
        .due_submitted(10, 3, LOOK)
        .await
        .expect("due");
    assert_eq!(
        due.iter()
            .map(|d| (d.intent.id, d.nonce))
            .collect::<Vec<_>>(),
        vec![(backlog_ids[3], 3), (other_id, 0)],
        "what another look holds is skipped, never waited for"
    );
}

#[tokio::test]
async fn due_intents_come_oldest_due_first_and_rescheduling_puts_them_back() {
    let fixture = fixture().await;
    let stuck = new_agent(&fixture, 17, true).await;
    let other = new_agent(&fixture, 18, true).await;
    for _ in 0..3 {
        confirmed_intent(&fixture, stuck).await;
    }
    let mut stuck_ids = Vec::new();
    for nonce in 0..3 {
        stuck_ids.push(submit_next(&fixture, nonce).await.0.intent.id);
    }
    let fresh = confirmed_intent(&fixture, other).await;
    submit_next(&fixture, 0).await;
    // The stuck wallet's intents were looked at and put off; the other one is due now.
    for id in &stuck_ids {
        fixture
            .intents
            .reschedule(*id, Duration::from_secs(3600), false)
            .await
            .expect("rescheduled");
    }
    let due = fixture
        .intents
        .due_submitted(2, 10, LOOK)
        .await
        .expect("due");
    assert_eq!(
        due.iter().map(|d| d.intent.id).collect::<Vec<_>>(),
        vec![fresh],
        "a wallet's stuck intents never stand in the way of another's"
    );
    assert!(
        fixture
            .intents
            .due_submitted(2, 10, LOOK)
            .await
            .expect("due")
            .is_empty(),
        "an intent being looked at is held back from other executors"
    );
    fixture
        .intents
        .reschedule(fresh, Duration::ZERO, true)
        .await
        .expect("rescheduled");
    let again = fixture
        .intents
        .due_submitted(2, 10, LOOK)
        .await
        .expect("due");
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].checks, 1);
    assert!(again[0].nonce_used_for.is_some(), "first seen used now");
}

#[tokio::test]
async fn the_window_counts_an_executed_intent_from_when_its_money_moved() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 19, true).await;
    set_daily(&fixture, agent, "10").await;
    let id = confirmed_intent(&fixture, agent).await;
    let (_, transfer) = submit_next(&fixture, 0).await;
    // The intent was created 23 hours ago and executed only now.
    execute(
        &fixture,
        &format!("UPDATE transfer_intents SET created_at = now() - interval '23 hours' WHERE id = '{id}'"),
    )
    .await;
    fixture
        .intents
        .settle(
            id,
            Settlement::Executed {
                tx_hash: transfer.hash,
                block_number: None,
            },
            None,
        )
        .await
        .expect("executed");
    // Two hours on (the database clock moved): created 25 hours ago, executed 2 hours ago.
    execute(
        &fixture,
        &format!(
            "UPDATE transfer_intents SET created_at = created_at - interval '2 hours', \
             executed_at = executed_at - interval '2 hours' WHERE id = '{id}'"
        ),
    )
    .await;
    let refused = admit(&fixture, send(agent, "10", None)).await;
    assert!(
        matches!(refused, Err(AdmissionError::Refused(AdmissionRefusal::Policy(PolicyViolation::ExceedsWindowMax { window: SpendWindow::Daily, available, .. }))) if available == U256::from(9)),
        "the 1 that left 2 hours ago still counts: {refused:?}"
    );
    execute(
        &fixture,
        &format!("UPDATE transfer_intents SET executed_at = now() - interval '25 hours' WHERE id = '{id}'"),
    )
    .await;
    assert!(
        admit(&fixture, send(agent, "10", None)).await.is_ok(),
        "24 hours after the money moved, its amount is free again"
    );
}

#[tokio::test]
async fn a_pending_intent_holds_its_amount_however_old_it_is() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 20, true).await;
    set_daily(&fixture, agent, "10").await;
    let old = created(admit(&fixture, send(agent, "6", None)).await);
    execute(
        &fixture,
        &format!(
            "UPDATE transfer_intents SET created_at = now() - interval '30 hours' WHERE id = '{}'",
            old.id
        ),
    )
    .await;
    assert!(
        admit(&fixture, send(agent, "5", None)).await.is_err(),
        "its money may still move"
    );
}

#[tokio::test]
async fn an_idempotency_key_expires_and_may_then_be_used_afresh() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 21, true).await;
    let original = created(admit(&fixture, send(agent, "3", Some("daily-rent"))).await);
    execute(
        &fixture,
        &format!(
            "UPDATE transfer_intents SET created_at = now() - interval '25 hours' WHERE id = '{}'",
            original.id
        ),
    )
    .await;
    let again = created(admit(&fixture, send(agent, "4", Some("daily-rent"))).await);
    assert_ne!(again.id, original.id);
    assert_eq!(
        fixture
            .intents
            .find(original.id)
            .await
            .expect("read")
            .expect("kept")
            .idempotency_key,
        None,
        "the expired key moved to the new intent"
    );
}

#[tokio::test]
async fn a_second_use_of_a_key_being_admitted_is_turned_away_at_once() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 22, true).await;
    // Another transaction holds the key's lock, as a first request in progress would.
    let mut holder = fixture.database.connection().await;
    holder
        .batch_execute(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('{}' || ':' || 'busy-key', 0))",
            agent.0
        ))
        .await
        .expect("lock taken");
    assert_eq!(
        admit(&fixture, send(agent, "1", Some("busy-key"))).await,
        Err(AdmissionError::Keyed(KeyedRefusal::KeyInFlight))
    );
    holder.batch_execute("COMMIT").await.expect("released");
    assert!(admit(&fixture, send(agent, "1", Some("busy-key")))
        .await
        .is_ok());
}

/// Waits, up to a deadline, until some session of the test database waits for a lock.
async fn until_a_session_waits_for_a_lock(fixture: &Fixture) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !fixture
        .database
        .sessions()
        .await
        .iter()
        .any(|session| session.waiting_for_lock)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no session waited for a lock"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_policy_change_waits_for_the_send_being_checked_and_the_next_send_meets_it() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 23, true).await;
    set_daily(&fixture, agent, "100").await;
    // The send's check stops inside its locked section until the test lets it go. It blocks its
    // thread, so the send runs on a thread, a runtime and a pool of its own.
    let (inside, is_inside) = std::sync::mpsc::channel::<()>();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Mutex::new(released);
    let policy = policy_check(address(99), amount("60"));
    let check = move |context: &AdmissionContext<'_>| {
        inside.send(()).expect("test waiting");
        released.lock().expect("lock").recv().expect("released");
        policy(context)
    };
    let connector = fixture.database.connector();
    let admitting = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let pool = Database::connect(&connector, PoolSettings::default()).expect("pool");
            PgIntentStore::new(pool)
                .admit(send(agent, "60", None), LIMITS, &check, None)
                .await
        })
    });
    tokio::task::spawn_blocking(move || is_inside.recv())
        .await
        .expect("joined")
        .expect("the send reached its check");
    // Lowering the limit now waits for the send under way, then applies to the next one.
    let lowered = set_daily(&fixture, agent, "50");
    let let_go = async {
        until_a_session_waits_for_a_lock(&fixture).await;
        release.send(()).expect("send waiting");
    };
    tokio::join!(lowered, let_go);
    created(
        tokio::task::spawn_blocking(move || admitting.join().expect("send thread"))
            .await
            .expect("joined"),
    );
    let refused = admit(&fixture, send(agent, "1", None)).await;
    assert!(
        matches!(
            refused,
            Err(AdmissionError::Refused(AdmissionRefusal::Policy(
                PolicyViolation::ExceedsWindowMax {
                    window: SpendWindow::Daily,
                    ..
                }
            )))
        ),
        "{refused:?}"
    );
}

#[tokio::test]
async fn recipients_that_only_lose_money_are_refused_inside_the_wallets_section() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 23, true).await;
    let own = NewTransferIntent {
        terms: TransferTerms {
            recipient: address(23),
            ..send(agent, "1", None).terms
        },
        ..send(agent, "1", None)
    };
    assert_eq!(
        admit(&fixture, own).await,
        Err(AdmissionError::Refused(AdmissionRefusal::Recipient(
            domain::RecipientRefused::OwnWallet
        )))
    );
}

#[tokio::test]
async fn settlement_ends_an_intent_and_the_queue_tells_how_long_confirmed_ones_wait() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 24, true).await;
    assert_eq!(
        fixture.intents.oldest_confirmed_wait().await.expect("lag"),
        None
    );
    let id = confirmed_intent(&fixture, agent).await;
    let waited = fixture
        .intents
        .oldest_confirmed_wait()
        .await
        .expect("lag")
        .expect("one waits");
    assert!(waited < Duration::from_secs(60), "{waited:?}");
    let confirmed = fixture
        .intents
        .find(id)
        .await
        .expect("read")
        .expect("exists");
    let confirmed_at = confirmed.confirmed_at.expect("stamped on confirmation");
    assert!(confirmed_at >= confirmed.created_at);
    let (_, transfer) = submit_next(&fixture, 0).await;
    let executed = fixture
        .intents
        .settle(
            id,
            Settlement::Executed {
                tx_hash: transfer.hash,
                block_number: None,
            },
            None,
        )
        .await
        .expect("settled");
    assert_eq!(executed.status, IntentStatus::Executed);
    assert_eq!(executed.confirmed_at, Some(confirmed_at), "kept");
    assert!(matches!(
        fixture
            .intents
            .settle(id, Settlement::Failed("late".into()), None)
            .await,
        Err(TransitionError::Refused(_))
    ));
    assert_eq!(
        fixture.intents.oldest_confirmed_wait().await.expect("lag"),
        None
    );
}

fn named(user: &str) -> Operator {
    Operator::Cli {
        user: Some(OperatorName::parse(user).expect("valid")),
    }
}

#[tokio::test]
async fn every_operator_decision_records_who_took_it_and_the_executor_keeps_the_last() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 25, true).await;
    let decided_by = |id: IntentId| {
        let intents = fixture.intents.clone();
        async move {
            intents
                .find(id)
                .await
                .expect("read")
                .expect("exists")
                .decided_by
        }
    };

    let pending = created(admit(&fixture, send(agent, "1", None)).await);
    assert_eq!(pending.decided_by, None, "no operator has decided yet");
    let rejected = fixture
        .intents
        .transition(
            pending.id,
            IntentEvent::Reject,
            Some("no".into()),
            Actor::local(named("alice")),
        )
        .await
        .expect("rejected");
    assert_eq!(rejected.decided_by, Some(named("alice")));
    assert_eq!(
        decided_by(pending.id).await,
        Some(named("alice")),
        "read back"
    );

    let executed = created(admit(&fixture, send(agent, "1", None)).await);
    fixture
        .intents
        .transition(
            executed.id,
            IntentEvent::Confirm,
            None,
            Actor::local(named("bob")),
        )
        .await
        .expect("confirmed");
    assert_eq!(decided_by(executed.id).await, Some(named("bob")));
    let (_, transfer) = submit_next(&fixture, 0).await;
    fixture
        .intents
        .settle(
            executed.id,
            Settlement::Executed {
                tx_hash: transfer.hash,
                block_number: None,
            },
            None,
        )
        .await
        .expect("settled by the executor");
    assert_eq!(
        decided_by(executed.id).await,
        Some(named("bob")),
        "the executor takes no decision of an operator's"
    );

    let resolved = confirmed_intent(&fixture, agent).await;
    assert_eq!(decided_by(resolved).await, Some(cli()));
    submit_next(&fixture, 1).await;
    fixture
        .intents
        .settle(
            resolved,
            Settlement::Failed("nonce taken".into()),
            Some(named("carol")),
        )
        .await
        .expect("resolved by an operator");
    assert_eq!(decided_by(resolved).await, Some(named("carol")));
}

async fn wallet_of(fixture: &Fixture, agent: AgentId) -> WalletId {
    ledger_held(fixture, agent, None).await.0.id
}

/// The agent's wallet and what it holds, as the ledger reads them.
async fn ledger_held(
    fixture: &Fixture,
    agent: AgentId,
    recipient: Option<EvmAddress>,
) -> (WalletRecord, Held) {
    fixture
        .intents
        .wallet_and_held(agent, recipient)
        .await
        .expect("read")
        .expect("a wallet")
}

#[derive(diesel::QueryableByName)]
struct Sum {
    #[diesel(sql_type = Text)]
    held: String,
}

/// What the wallet's intents hold in a window of `window` by a scan of all of them, as the store
/// summed it before it kept running totals: the figure every reading of the totals must equal.
async fn scanned_held(fixture: &Fixture, wallet: WalletId, window: Duration) -> U256 {
    let open: Vec<&str> = IntentStatus::ALL
        .into_iter()
        .filter(|status| !status.is_terminal())
        .map(IntentStatus::as_str)
        .collect();
    let mut connection = fixture.database.connection().await;
    let sum: Sum = diesel::sql_query(
        "SELECT coalesce(sum(amount_atomic), 0)::text AS held FROM transfer_intents \
         WHERE wallet_id = $1 AND (status = ANY($2) \
         OR (status = 'executed' AND executed_at > now() - make_interval(secs => $3)))",
    )
    .bind::<SqlUuid, _>(wallet.0)
    .bind::<Array<Text>, _>(open)
    .bind::<Double, _>(window.as_secs_f64())
    .get_result(&mut connection)
    .await
    .expect("scan");
    U256::from_str_radix(&sum.held, 10).expect("an integer")
}

/// What admission sees the wallet hold; the send is refused, so nothing it did is kept.
async fn admission_held(fixture: &Fixture, agent: AgentId) -> Held {
    let seen = Arc::new(Mutex::new(None));
    let look = {
        let seen = seen.clone();
        move |context: &AdmissionContext<'_>| {
            *seen.lock().expect("not poisoned") = Some(context.held);
            Err(AdmissionRefusal::Recipient(RecipientRefused::OwnWallet))
        }
    };
    assert!(matches!(
        fixture
            .intents
            .admit(send(agent, "1", None), LIMITS, &look, None)
            .await,
        Err(AdmissionError::Refused(_))
    ));
    let held = *seen.lock().expect("not poisoned");
    held.expect("admission looked")
}

/// Checks that a scan of the window, the ledger and admission all see `expected` held in the
/// wallet's `window`.
async fn assert_held_in(fixture: &Fixture, agent: AgentId, window: SpendWindow, expected: u64) {
    let wallet = wallet_of(fixture, agent).await;
    let expected = U256::from(expected);
    assert_eq!(
        scanned_held(fixture, wallet, window.length()).await,
        expected,
        "the scan, {window}"
    );
    assert_eq!(
        ledger_held(fixture, agent, None).await.1.of(window),
        expected,
        "the ledger, {window}"
    );
    assert_eq!(
        admission_held(fixture, agent).await.of(window),
        expected,
        "admission, {window}"
    );
}

async fn assert_held(fixture: &Fixture, agent: AgentId, expected: u64) {
    assert_held_in(fixture, agent, SpendWindow::Daily, expected).await;
}

/// Admits a send of `value`, which moves the wallet's running totals to the windows' starts.
async fn admit_value(fixture: &Fixture, agent: AgentId, value: &str) {
    created(admit(fixture, send(agent, value, None)).await);
}

/// Stores `count` intents of the agent's wallet straight into the table, `amount` each, in
/// `status`, executed (when they are) at the SQL time `executed_at` (`n` counts them from 1).
async fn seed_intents(
    fixture: &Fixture,
    agent: AgentId,
    count: u32,
    status: IntentStatus,
    amount: u64,
    executed_at: &str,
) {
    let executed_at = match status {
        IntentStatus::Executed => executed_at,
        _ => "NULL",
    };
    execute(
        fixture,
        &format!(
            "INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain, \
             recipient_address, amount_atomic, tx_hash, nonce, executed_at) \
             SELECT gen_random_uuid(), wallets.agent_id, wallets.id, '{status}', 'USDC', 'base', \
             '0x2222222222222222222222222222222222222263', {amount}, \
             '0x' || md5(random()::text), n, {executed_at} \
             FROM wallets, generate_series(1, {count}) AS n WHERE wallets.agent_id = '{agent}'",
            status = status.as_str(),
        ),
    )
    .await;
}

#[derive(diesel::QueryableByName)]
struct Totals {
    #[diesel(sql_type = Text)]
    open: String,
    #[diesel(sql_type = Text)]
    executed: String,
}

/// The wallet's running totals as stored: the open sum and the executed sum.
async fn stored_totals(fixture: &Fixture, agent: AgentId) -> (String, String) {
    let mut connection = fixture.database.connection().await;
    let totals: Totals = diesel::sql_query(
        "SELECT open_atomic::text AS open, daily_executed_atomic::text AS executed \
         FROM wallet_spend_totals WHERE agent_id = $1",
    )
    .bind::<SqlUuid, _>(agent.0)
    .get_result(&mut connection)
    .await
    .expect("every wallet has totals");
    (totals.open, totals.executed)
}

#[tokio::test]
async fn one_reading_holds_the_wallet_its_policy_and_a_recipients_day_before_and_after_its_totals()
{
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 31, true).await;
    let capped = RecipientLimit {
        address: address(99),
        max_per_tx: None,
        max_daily: Some(amount("1000")),
    };
    let change = PolicyChange {
        recipient_limits: RecipientLimitsChange::Replace(vec![capped]),
        ..PolicyChange::default()
    };
    change_policy(&fixture, agent, change).await;
    // To the capped recipient: 3 pending of 5, 2 executed of 7 within the day, 4 of 100 before.
    seed_intents(
        &fixture,
        agent,
        3,
        IntentStatus::PendingConfirmation,
        5,
        "NULL",
    )
    .await;
    let within = "now() - interval '1 hour'";
    seed_intents(&fixture, agent, 2, IntentStatus::Executed, 7, within).await;
    let before = "now() - interval '25 hours'";
    seed_intents(&fixture, agent, 4, IntentStatus::Executed, 100, before).await;
    let (wallet, held) = ledger_held(&fixture, agent, Some(address(99))).await;
    let policy = wallet.spend_policy.expect("a policy");
    assert_eq!(
        policy.rules.recipient_limits.daily_capped(&address(99)),
        Some(address(99))
    );
    assert_eq!(
        (held.daily, held.recipient_daily),
        (U256::from(29), U256::from(29)),
        "a recipient without totals is read from a scan of its intents"
    );
    assert_eq!(
        ledger_held(&fixture, agent, Some(address(7)))
            .await
            .1
            .recipient_daily,
        U256::ZERO,
        "another recipient's intents are its own"
    );
    assert_eq!(
        ledger_held(&fixture, agent, None).await.1.recipient_daily,
        U256::ZERO,
        "no recipient, no recipient's day"
    );
    // The first send to the capped recipient makes its totals; the reading then takes them.
    admit_value(&fixture, agent, "10").await;
    let stored: i64 = {
        let mut connection = fixture.database.connection().await;
        diesel::dsl::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "(SELECT count(*) FROM recipient_spend_totals)",
        ))
        .get_result(&mut connection)
        .await
        .expect("count")
    };
    assert_eq!(stored, 1, "the capped recipient has totals now");
    let (_, held) = ledger_held(&fixture, agent, Some(address(99))).await;
    assert_eq!(
        (held.daily, held.recipient_daily),
        (U256::from(39), U256::from(39))
    );
    // A mark only the totals carry: the reading is theirs, not a scan's.
    execute(
        &fixture,
        "UPDATE recipient_spend_totals SET open_atomic = open_atomic + 1000",
    )
    .await;
    let (_, held) = ledger_held(&fixture, agent, Some(address(99))).await;
    assert_eq!(held.recipient_daily, U256::from(1039));
    let walletless = new_agent(&fixture, 32, false).await;
    assert!(fixture
        .intents
        .wallet_and_held(walletless, Some(address(99)))
        .await
        .expect("read")
        .is_none());
}

#[tokio::test]
async fn the_held_amount_follows_every_change_of_an_intent_as_a_scan_would() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 30, true).await;
    assert_held(&fixture, agent, 0).await;
    let mut admitted = Vec::new();
    for (value, held) in [("1", 1), ("10", 11), ("100", 111), ("1000", 1111)] {
        admitted.push(created(admit(&fixture, send(agent, value, None)).await).id);
        assert_held(&fixture, agent, held).await;
    }
    let [one, ten, hundred, thousand] = admitted[..] else {
        panic!("four intents")
    };
    fixture
        .intents
        .transition(one, IntentEvent::Confirm, None, on_cli())
        .await
        .expect("confirmed");
    assert_held(&fixture, agent, 1111).await;
    fixture
        .intents
        .transition(ten, IntentEvent::Reject, Some("no".into()), on_cli())
        .await
        .expect("rejected");
    assert_held(&fixture, agent, 1101).await;
    execute(
        &fixture,
        &format!("UPDATE transfer_intents SET created_at = now() - interval '2 hours' WHERE id = '{hundred}'"),
    )
    .await;
    let expired = fixture
        .intents
        .expire_pending(Duration::from_secs(3600), 10)
        .await
        .expect("expired");
    assert_eq!(expired.len(), 1);
    assert_held(&fixture, agent, 1001).await;
    let (claim, transfer) = submit_next(&fixture, 0).await;
    assert_eq!(claim.intent.id, one);
    assert_held(&fixture, agent, 1001).await;
    fixture
        .intents
        .settle(
            one,
            Settlement::Executed {
                tx_hash: transfer.hash,
                block_number: None,
            },
            None,
        )
        .await
        .expect("executed");
    assert_held(&fixture, agent, 1001).await;
    fixture
        .intents
        .transition(thousand, IntentEvent::Confirm, None, on_cli())
        .await
        .expect("confirmed");
    submit_next(&fixture, 1).await;
    fixture
        .intents
        .settle(thousand, Settlement::Failed("reverted".into()), None)
        .await
        .expect("failed");
    assert_held(&fixture, agent, 1).await;
    execute(
        &fixture,
        &format!("UPDATE transfer_intents SET executed_at = now() - interval '25 hours' WHERE id = '{one}'"),
    )
    .await;
    assert_held(&fixture, agent, 0).await;
    admit_value(&fixture, agent, "7").await;
    assert_held(&fixture, agent, 7).await;
    assert_eq!(
        stored_totals(&fixture, agent).await,
        ("7".into(), "0".into())
    );
}

#[tokio::test]
async fn executed_intents_leave_the_window_as_they_age_and_return_when_their_time_moves_back() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 31, true).await;
    for (amount, hours_ago) in [(1, 1), (10, 10), (100, 20), (1000, 23), (10_000, 30)] {
        let executed_at = format!("now() - interval '{hours_ago} hours'");
        seed_intents(
            &fixture,
            agent,
            1,
            IntentStatus::Executed,
            amount,
            &executed_at,
        )
        .await;
    }
    assert_held(&fixture, agent, 1111).await;
    admit_value(&fixture, agent, "2").await;
    assert_held(&fixture, agent, 1113).await;
    let age = |hours: u32| {
        format!("UPDATE transfer_intents SET executed_at = executed_at - interval '{hours} hours' WHERE status = 'executed'")
    };
    // Two hours on: the 1000 executed 23 hours ago is 25 hours old.
    execute(&fixture, &age(2)).await;
    assert_held(&fixture, agent, 113).await;
    admit_value(&fixture, agent, "2").await;
    assert_held(&fixture, agent, 115).await;
    // Three more: the 100 is out too.
    execute(&fixture, &age(3)).await;
    admit_value(&fixture, agent, "2").await;
    assert_held(&fixture, agent, 17).await;
    assert_eq!(
        stored_totals(&fixture, agent).await,
        ("6".into(), "11".into()),
        "what aged out was taken out of the totals"
    );
    // An execution time moved from before the window's start into it counts again.
    execute(
        &fixture,
        "UPDATE transfer_intents SET executed_at = now() - interval '1 hour' WHERE amount_atomic = 1000",
    )
    .await;
    assert_held(&fixture, agent, 1017).await;
}

#[tokio::test]
async fn each_window_counts_exactly_the_executions_of_its_length() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 32, true).await;
    let days_ago = [
        (1, 0.5),
        (10, 3.0),
        (100, 8.0),
        (1000, 29.0),
        (10_000, 31.0),
    ];
    for (amount, days) in days_ago {
        let executed_at = format!("now() - interval '{} hours'", days * 24.0);
        seed_intents(
            &fixture,
            agent,
            1,
            IntentStatus::Executed,
            amount,
            &executed_at,
        )
        .await;
    }
    let windows = &fixture;
    let check = |daily, weekly, monthly| async move {
        assert_held_in(windows, agent, SpendWindow::Daily, daily).await;
        assert_held_in(windows, agent, SpendWindow::Weekly, weekly).await;
        assert_held_in(windows, agent, SpendWindow::Monthly, monthly).await;
    };
    check(1, 11, 1111).await;
    admit_value(&fixture, agent, "20000").await;
    check(20_001, 20_011, 21_111).await;
    // Two days on: the 1 leaves the day, the 1000 the month. Reading moves nothing, admitting
    // moves every window's point.
    execute(
        &fixture,
        "UPDATE transfer_intents SET executed_at = executed_at - interval '2 days' WHERE status = 'executed'",
    )
    .await;
    check(20_000, 20_011, 20_111).await;
    admit_value(&fixture, agent, "1").await;
    check(20_001, 20_012, 20_112).await;
    // Moved back into every window, the 10,000 counts in each again.
    execute(
        &fixture,
        "UPDATE transfer_intents SET executed_at = now() - interval '1 hour' WHERE amount_atomic = 10000",
    )
    .await;
    check(30_001, 30_012, 30_112).await;
}

#[tokio::test]
async fn open_intents_and_recent_executions_hold_their_amount_and_no_other_status_does() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 33, true).await;
    let mut expected = 0;
    for (power, status) in (0u32..).zip(IntentStatus::ALL) {
        let amount = 10u64.pow(power);
        seed_intents(&fixture, agent, 1, status, amount, "now()").await;
        if !status.is_terminal() || status == IntentStatus::Executed {
            expected += amount;
        }
    }
    assert_eq!(
        expected, 11111,
        "pending, confirmed, authorized, submitted and executed"
    );
    assert_held(&fixture, agent, expected).await;
}

#[tokio::test]
async fn ten_thousand_intents_in_the_window_leave_the_held_amount_exact() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 34, true).await;
    set_daily(&fixture, agent, "20000").await;
    seed_intents(
        &fixture,
        agent,
        5000,
        IntentStatus::PendingConfirmation,
        1,
        "",
    )
    .await;
    seed_intents(&fixture, agent, 2500, IntentStatus::Submitted, 1, "").await;
    let within = "now() - n * interval '30 seconds'";
    seed_intents(&fixture, agent, 2500, IntentStatus::Executed, 2, within).await;
    let aged_out = "now() - interval '25 hours' - n * interval '1 second'";
    seed_intents(&fixture, agent, 1000, IntentStatus::Executed, 3, aged_out).await;
    seed_intents(&fixture, agent, 1000, IntentStatus::Rejected, 4, "").await;
    assert_held(&fixture, agent, 12_500).await;
    let refused = admit(&fixture, send(agent, "7501", None)).await;
    assert!(
        matches!(refused, Err(AdmissionError::Refused(AdmissionRefusal::Policy(PolicyViolation::ExceedsWindowMax { window: SpendWindow::Daily, available, .. }))) if available == U256::from(7500)),
        "{refused:?}"
    );
    created(admit(&fixture, send(agent, "7500", None)).await);
    assert_held(&fixture, agent, 20_000).await;
    assert_eq!(
        stored_totals(&fixture, agent).await,
        ("15000".into(), "5000".into())
    );
    assert!(admit(&fixture, send(agent, "1", None)).await.is_err());
}

#[tokio::test]
async fn concurrent_admissions_transitions_and_sweeps_keep_the_totals_exact() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 35, true).await;
    set_daily(&fixture, agent, "60").await;
    let mut earlier = Vec::new();
    for _ in 0..30 {
        earlier.push(created(admit(&fixture, send(agent, "1", None)).await).id);
    }
    // Ten of them wait past their time; ten are judged by an operator while sends arrive.
    let stale: Vec<String> = earlier[..10].iter().map(|id| format!("'{id}'")).collect();
    execute(
        &fixture,
        &format!(
            "UPDATE transfer_intents SET created_at = now() - interval '2 hours' WHERE id IN ({})",
            stale.join(", ")
        ),
    )
    .await;
    let mut tasks = Vec::new();
    for _ in 0..40 {
        let intents = fixture.intents.clone();
        tasks.push(tokio::spawn(async move {
            let intent = send(agent, "1", None);
            let check = policy_check(intent.terms.recipient, intent.terms.amount);
            matches!(
                intents.admit(intent, LIMITS, &check, None).await,
                Ok(Admission::Created(_))
            )
        }));
    }
    for (index, id) in earlier[10..20].iter().copied().enumerate() {
        let intents = fixture.intents.clone();
        tasks.push(tokio::spawn(async move {
            let event = match index % 2 {
                0 => IntentEvent::Reject,
                _ => IntentEvent::Confirm,
            };
            intents
                .transition(id, event, None, on_cli())
                .await
                .expect("moved");
            false
        }));
    }
    for _ in 0..2 {
        let intents = fixture.intents.clone();
        tasks.push(tokio::spawn(async move {
            intents
                .expire_pending(Duration::from_secs(3600), 5)
                .await
                .expect("swept");
            false
        }));
    }
    let mut admitted = 0;
    for task in tasks {
        admitted += u64::from(task.await.expect("task"));
    }
    let wallet = wallet_of(&fixture, agent).await;
    let scanned = scanned_held(&fixture, wallet, DAY).await;
    assert!(scanned <= U256::from(60), "{scanned} held of 60");
    assert_eq!(ledger_held(&fixture, agent, None).await.1.daily, scanned);
    assert_eq!(admission_held(&fixture, agent).await.daily, scanned);
    assert!(admitted > 0);
}

#[tokio::test]
async fn concurrent_sweeps_over_many_wallets_never_wait_for_each_other() {
    let fixture = fixture().await;
    let mut agents = Vec::new();
    for seed in 40..48 {
        let agent = new_agent(&fixture, seed, true).await;
        seed_intents(
            &fixture,
            agent,
            25,
            IntentStatus::PendingConfirmation,
            1,
            "",
        )
        .await;
        agents.push(agent);
    }
    // Stale in an order that interleaves the wallets differently in every batch.
    execute(
        &fixture,
        "UPDATE transfer_intents SET created_at = now() - interval '2 hours' - random() * interval '1 hour'",
    )
    .await;
    let sweeps: Vec<_> = (0..4)
        .map(|_| {
            let intents = fixture.intents.clone();
            tokio::spawn(async move {
                let mut expired = 0;
                loop {
                    let batch = intents
                        .expire_pending(Duration::from_secs(3600), 20)
                        .await
                        .expect("swept");
                    if batch.is_empty() {
                        return expired;
                    }
                    expired += batch.len();
                }
            })
        })
        .collect();
    let mut expired = 0;
    for sweep in sweeps {
        expired += sweep.await.expect("sweep");
    }
    assert_eq!(expired, 200);
    for agent in agents {
        assert_held(&fixture, agent, 0).await;
        assert_eq!(stored_totals(&fixture, agent).await.0, "0");
    }
}

#[tokio::test]
async fn every_new_send_takes_a_token_of_its_agents_bucket_a_replay_none_and_past_the_burst_none_is_stored(
) {
    let fixture = fixture().await;
    let (one, two) = (
        new_agent(&fixture, 71, true).await,
        new_agent(&fixture, 72, true).await,
    );
    let limits = AdmissionLimits {
        rate: RateLimit {
            per_minute: 60,
            burst: 3,
        },
        ..LIMITS
    };
    let allow = |_: &AdmissionContext<'_>| Ok(Admitted::AwaitsApprovals(ApprovalCount::ONE));
    let refuse = |_: &AdmissionContext<'_>| {
        Err(AdmissionRefusal::Policy(
            PolicyViolation::RecipientNotAllowlisted {
                recipient: address(99),
            },
        ))
    };
    let first = created(
        fixture
            .intents
            .admit(send(one, "1", Some("k1")), limits, &allow, None)
            .await,
    );
    assert!(matches!(
        fixture
            .intents
            .admit(send(one, "1", None), limits, &refuse, None)
            .await,
        Err(AdmissionError::Refused(_))
    ));
    for _ in 0..5 {
        assert!(matches!(
            fixture.intents.admit(send(one, "1", Some("k1")), limits, &allow, None).await,
            Ok(Admission::Replayed(replayed)) if replayed.id == first.id
        ));
    }
    assert!(matches!(
        fixture.intents.admit(send(one, "2", Some("k1")), limits, &allow, None).await,
        Err(AdmissionError::Keyed(KeyedRefusal::IdempotencyMismatch { original })) if original == first.id
    ));
    let third = created(
        fixture
            .intents
            .admit(send(one, "1", None), limits, &allow, None)
            .await,
    );
    match fixture
        .intents
        .admit(send(one, "1", None), limits, &allow, None)
        .await
    {
        Err(AdmissionError::Keyed(KeyedRefusal::RateLimited { retry_after })) => assert!(
            retry_after > Duration::ZERO && retry_after <= Duration::from_secs(1),
            "one token a second comes back: {retry_after:?}"
        ),
        other => panic!("two created and a refused send spent the burst: {other:?}"),
    }
    let page = fixture.intents.page(one, None, 10).await.expect("page");
    assert_eq!(
        page.iter().map(|intent| intent.id).collect::<Vec<_>>(),
        vec![third.id, first.id],
        "neither the refused nor the limited send stored anything"
    );
    created(
        fixture
            .intents
            .admit(send(two, "1", None), limits, &allow, None)
            .await,
    );
}

/// An approver of the console's registry named `name`: only a registered operator's approval
/// counts toward a quorum.
async fn registered(fixture: &Fixture, name: &str) -> Operator {
    TestDatabase::execute(
        &fixture.database,
        &format!(
            "INSERT INTO operators (id, name, role) VALUES (gen_random_uuid(), '{name}', 'approver')"
        ),
    )
    .await;
    Operator::Named(OperatorName::parse(name).expect("valid"))
}

#[tokio::test]
async fn an_approval_counts_against_what_the_intents_row_requires_when_it_is_locked() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 34, true).await;
    let intent = created(admit(&fixture, send(agent, "5", None)).await);
    assert_eq!(intent.approvals.required, 1, "no quorum: one approval does");
    let quorum = |required: Option<u8>| PolicyChange {
        approvals_required: Some(
            required.map(|count| ApprovalCount::new(count).expect("in range")),
        ),
        ..PolicyChange::default()
    };
    // Raised after an operator read the policy and before the approval arrives: the approval
    // counts against the raised quorum.
    change_policy(&fixture, agent, quorum(Some(2))).await;
    let alice = registered(&fixture, "alice").await;
    let first = fixture
        .intents
        .approve(intent.id, Actor::local(alice), &approve_any)
        .await
        .expect("approved");
    assert!(first.counted);
    assert_eq!(first.intent.status, IntentStatus::PendingConfirmation);
    assert_eq!(
        (
            first.intent.approvals.required,
            first.intent.approvals.received
        ),
        (2, 1)
    );
    // Lowered again: the next distinct approval meets it.
    change_policy(&fixture, agent, quorum(None)).await;
    let bob = registered(&fixture, "bob").await;
    let second = fixture
        .intents
        .approve(intent.id, Actor::local(bob), &approve_any)
        .await
        .expect("approved");
    assert_eq!(second.intent.status, IntentStatus::Confirmed);
    assert_eq!(second.intent.approvals.received, 2);
}

#[tokio::test]
async fn an_approval_of_an_operator_disabled_since_stops_counting_at_the_next_one() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 40, true).await;
    change_policy(
        &fixture,
        agent,
        PolicyChange {
            approvals_required: Some(Some(ApprovalCount::quorum(2).expect("in range"))),
            ..PolicyChange::default()
        },
    )
    .await;
    let intent = created(admit(&fixture, send(agent, "5", None)).await);
    let (alice, bob, carol) = (
        registered(&fixture, "alice").await,
        registered(&fixture, "bob").await,
        registered(&fixture, "carol").await,
    );
    let approve = |approver: &Operator| {
        fixture
            .intents
            .approve(intent.id, Actor::local(approver.clone()), &approve_any)
    };
    let first = approve(&alice).await.expect("approved");
    assert_eq!(first.intent.approvals.received, 1);
    TestDatabase::execute(
        &fixture.database,
        "UPDATE operators SET disabled_at = now() WHERE name = 'alice'",
    )
    .await;
    let shown = fixture.intents.approvals(intent.id).await.expect("read");
    assert_eq!(
        shown
            .iter()
            .map(|approval| (approval.approver.clone(), approval.counts))
            .collect::<Vec<_>>(),
        [(alice.clone(), false)],
        "the page shows alice's approval as no longer counting"
    );
    let second = approve(&bob).await.expect("approved");
    assert_eq!(
        (second.intent.status, second.intent.approvals.received),
        (IntentStatus::PendingConfirmation, 1),
        "alice's approval was counted after she was disabled"
    );
    // A name no operator holds was never proven: its approval counts for nothing either.
    let stranger = Operator::Named(OperatorName::parse("mallory").expect("valid"));
    let third = approve(&stranger).await.expect("recorded");
    assert_eq!(third.intent.approvals.received, 1);
    let fourth = approve(&carol).await.expect("approved");
    assert_eq!(
        (fourth.intent.status, fourth.intent.approvals.received),
        (IntentStatus::Confirmed, 2)
    );
    let shown = fixture.intents.approvals(intent.id).await.expect("read");
    assert_eq!(
        shown.iter().filter(|approval| approval.counts).count(),
        2,
        "{shown:?}"
    );
}

#[tokio::test]
async fn the_ledgers_windows_count_what_the_domains_definition_counts() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 35, true).await;
    // To the microsecond, as PostgreSQL keeps it: the executions are written at these instants.
    let now = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .expect("a valid nanosecond");
    // Every status, confirmed by an operator or by the policy, to two recipients; the executed
    // ones an hour, two days, ten days and forty days ago: hours from any window's edge.
    let mut reservations = Vec::new();
    let mut rows = Vec::new();
    for status in IntentStatus::ALL {
        for confirmed_by in [None, Some(ConfirmedBy::Policy)] {
            for recipient in [99, 7] {
                let ages = match status {
                    IntentStatus::Executed => vec![Some(1), Some(48), Some(240), Some(960)],
                    _ => vec![None],
                };
                for age in ages {
                    let value = reservations.len() as u64 + 1;
                    reservations.push(Reservation {
                        status,
                        recipient: address(recipient),
                        amount: amount(&value.to_string()),
                        confirmed_by,
                        executed_at: age.map(|age| now - time::Duration::hours(age)),
                    });
                    rows.push(format!(
                        "('{status}', '0x{prefix}{recipient:02x}', {value}, {value}, {executed_at}, \
                         {confirmed_by})",
                        status = status.as_str(),
                        prefix = "22".repeat(19),
                        executed_at = age.map_or("NULL".to_owned(), |age| format!(
                            "'{}'::timestamptz",
                            (now - time::Duration::hours(age))
                                .format(&time::format_description::well_known::Rfc3339)
                                .expect("formatted")
                        )),
                        confirmed_by = confirmed_by
                            .map_or("NULL".to_owned(), |by| format!("'{}'", by.as_str())),
                    ));
                }
            }
        }
    }
    execute(
        &fixture,
        &format!(
            "INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain, \
             recipient_address, amount_atomic, nonce, tx_hash, executed_at, confirmed_by) \
             SELECT gen_random_uuid(), wallets.agent_id, wallets.id, seeded.status, 'USDC', \
                 'base', seeded.recipient, seeded.amount, seeded.nonce, \
                 '0x' || md5(random()::text), seeded.executed_at, seeded.confirmed_by \
             FROM wallets, (VALUES {}) AS seeded (status, recipient, amount, nonce, \
                 executed_at, confirmed_by) \
             WHERE wallets.agent_id = '{agent}'",
            rows.join(", ")
        ),
    )
    .await;
    assert_windows_as_defined(&fixture, agent, &reservations, now).await;
    // A send moves every window's expiry point to its start: the amounts stay the definition's.
    admit_value(&fixture, agent, "1000").await;
    reservations.push(Reservation {
        status: IntentStatus::PendingConfirmation,
        recipient: address(99),
        amount: amount("1000"),
        confirmed_by: None,
        executed_at: None,
    });
    assert_windows_as_defined(&fixture, agent, &reservations, now).await;
}

/// Checks that what the ledger reads of the agent's windows, for either recipient, and what its
/// usage reading reads of them with the earliest execution each counts, are what the domain's
/// definition counts of `reservations` at `now`.
async fn assert_windows_as_defined(
    fixture: &Fixture,
    agent: AgentId,
    reservations: &[Reservation],
    now: time::OffsetDateTime,
) {
    for recipient in [address(99), address(7)] {
        assert_eq!(
            ledger_held(fixture, agent, Some(recipient)).await.1,
            Held::tally(reservations, &recipient, now),
            "to {recipient}"
        );
    }
    let usage = fixture
        .intents
        .usage(agent)
        .await
        .expect("read")
        .expect("a wallet");
    assert_eq!(
        usage.held,
        Held {
            recipient_daily: U256::ZERO,
            ..Held::tally(reservations, &address(99), now)
        }
    );
    assert_eq!(usage.earliest, EarliestExecutions::tally(reservations, now));
}

#[tokio::test]
async fn the_usage_version_moves_with_the_agents_intents_and_its_policy_alone() {
    let fixture = fixture().await;
    let (agent, other) = (
        new_agent(&fixture, 36, true).await,
        new_agent(&fixture, 37, true).await,
    );
    let reading = || async {
        let usage = fixture
            .intents
            .usage(agent)
            .await
            .expect("read")
            .expect("a wallet");
        let (version, _) = fixture
            .intents
            .usage_version(agent, usage.wallet.id)
            .await
            .expect("read");
        assert_eq!(version, usage.version, "both readings say where it stands");
        version
    };
    let start = reading().await;
    assert_eq!(
        (start.intents.changes, start.policy.changes),
        (0, 1),
        "the wallet's policy was set once"
    );
    admit_value(&fixture, other, "5").await;
    set_daily(&fixture, other, "10").await;
    assert_eq!(
        reading().await,
        start,
        "another agent's changes move nothing"
    );
    set_daily(&fixture, agent, "500").await;
    let changed = reading().await;
    assert_eq!(
        (changed.intents, changed.policy.changes),
        (start.intents, 2),
        "a policy change moves the policy's count"
    );
    admit_value(&fixture, agent, "5").await;
    let sent = reading().await;
    assert_eq!(
        (sent.intents.changes, sent.policy),
        (1, changed.policy),
        "a send moves the intents' count"
    );
}

#[tokio::test]
async fn one_recipients_intents_and_one_intents_decisions_are_read_alone() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 39, true).await;
    let awaiting_one = created(admit(&fixture, send(agent, "5", None)).await);
    change_policy(
        &fixture,
        agent,
        PolicyChange {
            approvals_required: Some(Some(ApprovalCount::quorum(2).expect("in range"))),
            approvals_above: Some(Some(amount("5"))),
            auto_confirm_max: Some(Some(amount("1"))),
            auto_confirm_daily: Some(Some(amount("10"))),
            ..PolicyChange::default()
        },
    )
    .await;
    let awaiting_two = created(admit(&fixture, send(agent, "6", None)).await);
    let by_policy = created(admit(&fixture, send(agent, "1", None)).await);
    let mut elsewhere = send(agent, "7", None);
    elsewhere.terms.recipient = address(98);
    let elsewhere = created(admit(&fixture, elsewhere).await);
    let to_each = |recipient| {
        fixture.intents.list(IntentFilter {
            agent: Some(agent),
            recipient: Some(recipient),
            ..IntentFilter::default()
        })
    };
    let ids = |intents: Vec<domain::TransferIntentRecord>| -> Vec<IntentId> {
        intents.into_iter().map(|intent| intent.id).collect()
    };
    assert_eq!(
        (
            ids(to_each(address(99)).await.expect("list")),
            ids(to_each(address(98)).await.expect("list"))
        ),
        (
            vec![by_policy.id, awaiting_two.id, awaiting_one.id],
            vec![elsewhere.id]
        ),
        "each recipient's intents, newest first"
    );
    change_policy(
        &fixture,
        agent,
        PolicyChange {
            approvals_required: Some(Some(ApprovalCount::quorum(3).expect("in range"))),
            ..PolicyChange::default()
        },
    )
    .await;
    let now_required = fixture
        .intents
        .find(awaiting_two.id)
        .await
        .expect("read")
        .expect("found")
        .approvals
        .required;
    assert_eq!(now_required, 3, "the policy in force asks more of it now");
    assert_eq!(
        [&awaiting_one, &awaiting_two, &by_policy].map(|intent| intent.admitted_as()),
        [
            IntentStatus::PendingConfirmation,
            IntentStatus::PendingConfirmation,
            IntentStatus::Confirmed
        ],
        "where the policy put each at its creation"
    );

    let alice = Actor {
        operator: Operator::Named(OperatorName::parse("alice").expect("valid")),
        address: None,
    };
    fixture
        .intents
        .approve(awaiting_two.id, alice.clone(), &approve_any)
        .await
        .expect("approved");
    fixture
        .intents
        .transition(
            awaiting_one.id,
            IntentEvent::Reject,
            Some("unknown payee".into()),
            alice,
        )
        .await
        .expect("rejected");
    let rejected_log = crate::audit_log(
        &fixture.database,
        Some(AuditTarget::Intent(awaiting_one.id)),
    )
    .await;
    let rows: Vec<_> = rejected_log
        .iter()
        .map(|row| (row.action, row.reason.as_deref()))
        .collect();
    assert_eq!(rows, [(AuditAction::Reject, Some("unknown payee"))]);
}

#[tokio::test]
async fn each_decision_on_an_intent_is_audited_with_it_and_a_repeated_approval_is_not() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 38, true).await;
    change_policy(
        &fixture,
        agent,
        PolicyChange {
            approvals_required: Some(Some(ApprovalCount::quorum(2).expect("in range"))),
            ..PolicyChange::default()
        },
    )
    .await;
    let (approved, rejected) = (
        created(admit(&fixture, send(agent, "5", None)).await),
        created(admit(&fixture, send(agent, "6", None)).await),
    );
    let alice = Actor {
        operator: Operator::Named(OperatorName::parse("alice").expect("valid")),
        address: Some("198.51.100.1".into()),
    };
    for _ in 0..2 {
        fixture
            .intents
            .approve(approved.id, alice.clone(), &approve_any)
            .await
            .expect("approved");
    }
    fixture
        .intents
        .transition(
            rejected.id,
            IntentEvent::Reject,
            Some("unknown payee".into()),
            alice.clone(),
        )
        .await
        .expect("rejected");
    let decisions: Vec<_> = crate::audit_log(&fixture.database, None)
        .await
        .into_iter()
        .filter(|row| {
            row.target
                .as_deref()
                .is_some_and(|t| t.starts_with("intent:"))
        })
        .map(|row| (row.action, row.target, row.reason, row.address))
        .collect();
    assert_eq!(
        decisions,
        [
            (
                domain::AuditAction::Approve,
                Some(format!("intent:{}", approved.id)),
                None,
                Some("198.51.100.1".into())
            ),
            (
                domain::AuditAction::Reject,
                Some(format!("intent:{}", rejected.id)),
                Some("unknown payee".into()),
                Some("198.51.100.1".into())
            ),
        ]
    );
}

#[tokio::test]
async fn an_approval_is_judged_under_the_locks_with_what_the_wallet_commits_and_a_refusal_records_nothing(
) {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 39, true).await;
    let confirmed = created(admit(&fixture, send(agent, "7", None)).await);
    fixture
        .intents
        .transition(confirmed.id, IntentEvent::Confirm, None, on_cli())
        .await
        .expect("confirmed");
    let pending = created(admit(&fixture, send(agent, "5", None)).await);
    let seen = Arc::new(Mutex::new(None));
    let looked = seen.clone();
    let refuse = move |context: &ports::ApprovalContext<'_>| {
        *looked.lock().expect("lock") = Some((
            context.intent.id,
            context.intent.status,
            context.agent_active,
            context.held.daily,
            context.committed,
        ));
        Err(domain::ApprovalRefusal::Balance {
            balance: U256::from(10),
            committed: context.committed,
            amount: context.intent.amount.value(),
        })
    };
    let refused = fixture.intents.approve(pending.id, on_cli(), &refuse).await;
    assert!(
        matches!(
            refused,
            Err(TransitionError::Judged(
                domain::ApprovalRefusal::Balance { .. }
            ))
        ),
        "{refused:?}"
    );
    assert_eq!(
        *seen.lock().expect("lock"),
        Some((
            pending.id,
            IntentStatus::PendingConfirmation,
            true,
            U256::from(12),
            U256::from(7)
        )),
        "the intent as locked, its agent, the day holding both, 7 committed by the confirmed one"
    );
    let unchanged = fixture
        .intents
        .find(pending.id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(
        (unchanged.status, unchanged.approvals.received),
        (IntentStatus::PendingConfirmation, 0),
        "a refused approval records nothing"
    );
    assert_eq!(
        crate::audit_log(&fixture.database, Some(AuditTarget::Intent(pending.id))).await,
        []
    );
}

/// An offer of `value` of the test USDC on Base, as a challenge's payable entry is chosen.
fn x402_offer(value: &str) -> domain::x402::ChosenOffer {
    let usdc_address = usdc().token_address.expect("a token");
    domain::x402::PaymentChallenge::from_value(serde_json::json!({
        "x402Version": 2,
        "resource": {"url": "https://api.example.com/report"},
        "accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": value,
                     "asset": usdc_address.to_string(), "payTo": address(77).to_string(),
                     "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}}],
    }))
    .expect("a challenge")
    .choose(&domain::x402::PayableBy {
        chain_id: 8453,
        usdc: usdc_address,
    })
    .expect("payable")
}

/// An x402 payment of `value` the policy confirms, signed with nonce `[seed; 32]` valid before
/// `valid_before` (seconds) and recorded to be searched from `watch_from_block`.
async fn authorized_payment(
    fixture: &Fixture,
    agent: AgentId,
    value: &str,
    seed: u8,
    valid_before: u64,
    watch_from_block: u64,
) -> IntentId {
    use ports::X402Authorizations;
    let offer = x402_offer(value);
    let mut intent = send(agent, value, None);
    intent.terms.recipient = offer.pay_to;
    intent.x402 = Some(offer.clone());
    let confirmed = created(
        fixture
            .intents
            .admit(intent, LIMITS, &|_| Ok(Admitted::ConfirmedByPolicy), None)
            .await,
    );
    assert_eq!(confirmed.status, IntentStatus::Confirmed);
    let recorded = fixture
        .intents
        .record_authorization(
            confirmed.id,
            &ports::SignedAuthorization {
                offer,
                nonce: [seed; 32],
                window: domain::x402::AuthorizationWindow {
                    valid_after: 0,
                    valid_before,
                },
                payment: format!("payment-{seed}"),
                watch_from_block,
            },
        )
        .await
        .expect("recorded");
    assert_eq!(recorded.intent.status, IntentStatus::Authorized);
    confirmed.id
}

#[tokio::test]
async fn two_watches_never_hold_one_authorization_and_its_search_only_moves_forward() {
    use ports::{AuthorizationWatch, X402Authorizations};
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 41, true).await;
    let mut ids = Vec::new();
    for (seed, from) in [(1, 30), (2, 10), (3, 20)] {
        ids.push(authorized_payment(&fixture, agent, "5", seed, 4_000_000_000, from).await);
    }
    let first = fixture
        .intents
        .watched_authorizations(2, LOOK)
        .await
        .expect("held");
    let from_blocks: Vec<u64> = first.iter().map(|watched| watched.from_block).collect();
    assert_eq!(from_blocks, [10, 20], "the least searched first");
    assert_eq!(first[0].intent, ids[1]);
    assert_eq!(first[0].nonce, [2; 32]);
    assert_eq!(first[0].authorizer, address(41));
    assert_eq!(first[0].token, usdc().token_address.expect("a token"));
    assert_eq!(first[0].valid_before, 4_000_000_000);
    let second = fixture
        .intents
        .watched_authorizations(10, LOOK)
        .await
        .expect("held");
    assert_eq!(
        second
            .iter()
            .map(|watched| watched.intent)
            .collect::<Vec<_>>(),
        [ids[0]],
        "what one watch holds, another does not get"
    );

    let held_first: Vec<IntentId> = first.iter().map(|watched| watched.intent).collect();
    fixture
        .intents
        .put_back(&held_first, Some(15))
        .await
        .expect("put back");
    let again = fixture
        .intents
        .watched_authorizations(10, LOOK)
        .await
        .expect("held");
    let searched: Vec<(IntentId, u64)> = again
        .iter()
        .map(|watched| (watched.intent, watched.from_block))
        .collect();
    assert_eq!(
        searched,
        [(ids[1], 16), (ids[2], 20)],
        "searched through 15: 10 moves on to 16, 20 stays"
    );

    let head = |number| domain::x402::BlockHead {
        number,
        timestamp: 1_800_000_000,
    };
    fixture
        .intents
        .record_head(8453, head(100))
        .await
        .expect("noted");
    fixture
        .intents
        .record_head(8453, head(90))
        .await
        .expect("noted");
    let basis = fixture
        .intents
        .signing_basis(agent, 8453)
        .await
        .expect("read")
        .expect("an intent");
    assert_eq!(basis.known_head, Some(100), "a head never goes back");
    let elsewhere = fixture
        .intents
        .signing_basis(agent, 1)
        .await
        .expect("read")
        .expect("an intent");
    assert_eq!(
        elsewhere.known_head, None,
        "another chain's head is not this one's"
    );
}

#[tokio::test]
async fn a_used_authorization_is_executed_by_its_transaction_and_an_expired_one_frees_its_amount() {
    use ports::{AuthorizationSettled, AuthorizationWatch};
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 42, true).await;
    let used = authorized_payment(&fixture, agent, "300", 1, 4_000_000_000, 5).await;
    let lapsed = authorized_payment(&fixture, agent, "200", 2, 1_800_000_000, 5).await;
    assert_eq!(
        stored_totals(&fixture, agent).await,
        ("500".to_owned(), "0".to_owned()),
        "authorized payments hold their amounts"
    );
    let tx_hash = format!("0x{}", "ab".repeat(32));
    let executed = fixture
        .intents
        .settle_authorization(
            used,
            AuthorizationSettled::Used {
                tx_hash: tx_hash.clone(),
                block_number: 12,
            },
        )
        .await
        .expect("settled");
    assert_eq!(executed.status, IntentStatus::Executed);
    assert_eq!(executed.tx_hash.as_deref(), Some(tx_hash.as_str()));
    assert!(executed.x402.is_some(), "shown with its payment");
    let expired = fixture
        .intents
        .settle_authorization(lapsed, AuthorizationSettled::Expired)
        .await
        .expect("settled");
    assert_eq!(expired.status, IntentStatus::Expired);
    assert_eq!(
        stored_totals(&fixture, agent).await,
        ("0".to_owned(), "300".to_owned()),
        "the used one counts as executed, the expired one no more"
    );
    let twice = fixture
        .intents
        .settle_authorization(lapsed, AuthorizationSettled::Expired)
        .await;
    assert!(
        matches!(twice, Err(TransitionError::Refused(_))),
        "{twice:?}"
    );
    assert!(
        fixture
            .intents
            .watched_authorizations(10, LOOK)
            .await
            .expect("held")
            .is_empty(),
        "settled payments are watched no more"
    );
}

#[tokio::test]
async fn executions_within_a_range_are_listed_by_their_time_and_only_the_agents() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 41, true).await;
    let other = new_agent(&fixture, 42, true).await;
    for (amount, at) in [
        (3, "2026-11-02T12:00:00Z"),
        (1, "2026-11-01T00:00:00Z"),
        (2, "2026-11-01T23:59:59Z"),
        (9, "2026-11-03T00:00:00Z"),
        (8, "2026-10-31T23:59:59Z"),
    ] {
        seed_intents(
            &fixture,
            agent,
            1,
            IntentStatus::Executed,
            amount,
            &format!("'{at}'::timestamptz"),
        )
        .await;
    }
    seed_intents(&fixture, agent, 1, IntentStatus::Submitted, 7, "NULL").await;
    seed_intents(
        &fixture,
        other,
        1,
        IntentStatus::Executed,
        6,
        "'2026-11-02T00:00:00Z'::timestamptz",
    )
    .await;
    let at = |text: &str| {
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
            .expect("a time")
    };
    let within = |oldest_first| IntentFilter {
        agent: Some(agent),
        status: Some(IntentStatus::Executed),
        executed_from: Some(at("2026-11-01T00:00:00Z")),
        executed_before: Some(at("2026-11-03T00:00:00Z")),
        oldest_first,
        ..IntentFilter::default()
    };
    let amounts = |listed: Vec<domain::TransferIntentRecord>| {
        listed
            .iter()
            .map(|intent| intent.amount.to_string())
            .collect::<Vec<_>>()
    };
    let oldest_first = fixture.intents.list(within(true)).await.expect("listed");
    assert_eq!(amounts(oldest_first), ["1", "2", "3"]);
    let newest_first = fixture.intents.list(within(false)).await.expect("listed");
    assert_eq!(amounts(newest_first), ["3", "2", "1"]);
}

#[tokio::test]
async fn a_confirmed_transfer_wakes_the_executors_and_a_confirmed_payment_does_not() {
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 43, true).await;
    let (_client, mut hearing) = crate::events::raw_listener(&fixture.database).await;
    authorized_payment(&fixture, agent, "5", 9, 4_000_000_000, 0).await;
    execute(
        &fixture,
        &format!("NOTIFY {NOTIFICATION_CHANNEL}, 'after the payment'"),
    )
    .await;
    let heard = crate::events::heard_until(&mut hearing, "after the payment").await;
    assert!(
        !heard
            .iter()
            .any(|payload| payload == CONFIRMED_INTENTS_TOPIC),
        "the executor sends no payment: {heard:?}"
    );
    let confirmed = created(
        fixture
            .intents
            .admit(
                send(agent, "5", None),
                LIMITS,
                &|_| Ok(Admitted::ConfirmedByPolicy),
                None,
            )
            .await,
    );
    assert_eq!(confirmed.status, IntentStatus::Confirmed);
    crate::events::heard_until(&mut hearing, CONFIRMED_INTENTS_TOPIC).await;
}

/// Signs as a wallet's signer would, from the basis it is given, which it keeps; or refuses.
struct TestSigner {
    signs: bool,
    seen: Mutex<Option<ports::SigningBasis>>,
}

#[async_trait::async_trait]
impl ports::AdmissionSigner for TestSigner {
    fn chain_id(&self) -> u64 {
        8453
    }

    async fn sign(
        &self,
        basis: ports::SigningBasis,
    ) -> Result<ports::SignedAuthorization, ports::SigningFailed> {
        let from = basis.known_head.unwrap_or_default();
        *self.seen.lock().expect("unpoisoned") = Some(basis);
        if !self.signs {
            return Err(ports::SigningFailed);
        }
        Ok(ports::SignedAuthorization {
            offer: x402_offer("5"),
            nonce: [4; 32],
            window: domain::x402::AuthorizationWindow {
                valid_after: 0,
                valid_before: 4_000_000_000,
            },
            payment: "signed at admission".into(),
            watch_from_block: from,
        })
    }
}

#[tokio::test]
async fn a_payment_the_policy_confirms_is_stored_authorized_by_its_admission_or_not_at_all() {
    use ports::{AuthorizationWatch, X402Authorizations};
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 44, true).await;
    fixture
        .intents
        .record_head(
            8453,
            domain::x402::BlockHead {
                number: 70,
                timestamp: 1_800_000_000,
            },
        )
        .await
        .expect("noted");
    let payment = || {
        let mut intent = send(agent, "5", Some("paid-at-admission"));
        intent.terms.recipient = x402_offer("5").pay_to;
        intent.x402 = Some(x402_offer("5"));
        intent
    };
    let confirm = |_: &AdmissionContext<'_>| Ok(Admitted::ConfirmedByPolicy);
    let refusing = TestSigner {
        signs: false,
        seen: Mutex::new(None),
    };
    let unsigned = fixture
        .intents
        .admit(payment(), LIMITS, &confirm, Some(&refusing))
        .await;
    assert_eq!(unsigned, Err(AdmissionError::Signing(ports::SigningFailed)));
    let seen = refusing.seen.lock().expect("unpoisoned").clone();
    assert_eq!(
        seen,
        Some(ports::SigningBasis {
            wallet_address: address(44),
            sealed_key: vec![44],
            known_head: Some(70),
        }),
        "the wallet's key and the head the watch saw, read under the admission"
    );
    let listed = fixture
        .intents
        .list(IntentFilter {
            agent: Some(agent),
            ..IntentFilter::default()
        })
        .await
        .expect("listed");
    assert_eq!(
        listed,
        [],
        "a payment that could not be signed is not admitted"
    );

    let signing = TestSigner {
        signs: true,
        seen: Mutex::new(None),
    };
    let authorized = created(
        fixture
            .intents
            .admit(payment(), LIMITS, &confirm, Some(&signing))
            .await,
    );
    assert_eq!(authorized.status, IntentStatus::Authorized);
    assert_eq!(
        authorized.x402.as_ref().and_then(|payment| payment.nonce),
        Some([4; 32])
    );
    let recorded = fixture
        .intents
        .recorded_authorization(authorized.id)
        .await
        .expect("read")
        .expect("recorded with its admission");
    assert_eq!(recorded.payment, "signed at admission");
    assert_eq!(recorded.intent.status, IntentStatus::Authorized);
}
