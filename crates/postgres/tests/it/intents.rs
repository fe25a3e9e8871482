use std::sync::Arc;
use std::time::Duration;

use domain::{
    evaluate_transfer, AgentId, AgentKey, Asset, AtomicAmount, Chain, CursorPosition, Custody,
    EvmAddress, IntentEvent, IntentId, IntentStatus, Label, LeaseId, PolicyAsset, PolicyChange,
    PolicyViolation, SpendPolicyRecord, TransferTerms, TransitionRefused, U256,
};
use ports::{
    Admission, AdmissionError, AgentStore, ExecutionQueue, IntentAdmission, IntentFilter,
    IntentLedger, IntentSweeper, NewAgent, NewTransferIntent, NewWallet, TransitionError,
};
use postgres_store::{Database, PgAgentStore, PgIntentStore, PoolSettings};
use test_support::TestDatabase;
use uuid::Uuid;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

struct Fixture {
    database: TestDatabase,
    agents: PgAgentStore,
    intents: Arc<PgIntentStore>,
}

async fn fixture() -> Fixture {
    let database = TestDatabase::new().await;
    let pool = Database::connect(
        database.url(),
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
        .create(NewAgent {
            id,
            sponsor: "acme".into(),
            label: Some(Label::parse("payer").expect("valid")),
            key_hash: AgentKey::from_random_bytes([seed; 32]).hash(),
            phone_number: None,
            email_inbox: None,
            wallet,
        })
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
        idempotency_key: key.map(str::to_owned),
    }
}

/// The production check: the domain's policy evaluation.
fn policy_check(
    recipient: EvmAddress,
    value: AtomicAmount,
) -> impl Fn(&SpendPolicyRecord, U256) -> Result<(), PolicyViolation> {
    move |policy, held| {
        evaluate_transfer(&policy.limits, &policy.allowlist, &recipient, value, held)
    }
}

async fn admit(fixture: &Fixture, intent: NewTransferIntent) -> Result<Admission, AdmissionError> {
    let check = policy_check(intent.terms.recipient, intent.terms.amount);
    fixture.intents.admit(intent, DAY, &check).await
}

async fn set_daily(fixture: &Fixture, agent: AgentId, daily: &str) {
    let change = PolicyChange {
        max_daily: Some(Some(amount(daily))),
        ..PolicyChange::default()
    };
    fixture
        .agents
        .update_policy(agent, usdc(), change)
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
        matches!(refused, Err(AdmissionError::Refused(PolicyViolation::ExceedsDailyMax { available, .. })) if available == U256::from(4)),
        "{refused:?}"
    );
    fixture
        .intents
        .transition(first.id, IntentEvent::Reject, Some("not today".into()))
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
        .update_policy(agent, usdc(), change)
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
        Err(AdmissionError::IdempotencyMismatch {
            original: original.id
        })
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
                intents.admit(intent, DAY, &check).await
            })
        })
        .collect();
    let mut admitted = 0;
    for task in tasks {
        match task.await.expect("task") {
            Ok(Admission::Created(_)) => admitted += 1,
            Err(AdmissionError::Refused(PolicyViolation::ExceedsDailyMax { .. })) => {}
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
                intents
                    .admit(intent, DAY, &check)
                    .await
                    .expect("admitted or replayed")
            })
        })
        .collect();
    let mut ids = Vec::new();
    for task in tasks {
        ids.push(match task.await.expect("task") {
            Admission::Created(intent) | Admission::Replayed(intent) => intent.id,
        });
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
        .transition(intent.id, IntentEvent::Confirm, None)
        .await
        .expect("confirmed");
    assert_eq!(confirmed.status, IntentStatus::Confirmed);
    assert!(confirmed.confirmed_at.is_some());
    let refused = fixture
        .intents
        .transition(intent.id, IntentEvent::Reject, Some("late".into()))
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
        .transition(intent.id, IntentEvent::Fail, Some("reverted".into()))
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
            .transition(missing, IntentEvent::Confirm, None)
            .await,
        Err(TransitionError::NotFound(missing))
    );
    let listed = fixture
        .intents
        .list(IntentFilter {
            agent: Some(agent),
            status: Some(IntentStatus::Failed),
        })
        .await
        .expect("list");
    assert_eq!(listed.len(), 1);
    assert!(fixture
        .intents
        .list(IntentFilter {
            agent: None,
            status: Some(IntentStatus::Confirmed)
        })
        .await
        .expect("list")
        .is_empty());
}

#[tokio::test]
async fn only_intents_pending_past_their_time_expire_and_release_their_amount() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
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
        .transition(old_confirmed.id, IntentEvent::Confirm, None)
        .await
        .expect("confirmed");
    let mut connection = AsyncPgConnection::establish(fixture.database.url())
        .await
        .expect("connect");
    connection
        .batch_execute(&format!(
            "UPDATE transfer_intents SET created_at = now() - interval '2 hours' WHERE id IN ('{}', '{}')",
            old_pending.id, old_confirmed.id
        ))
        .await
        .expect("back-date");
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

fn signed_for(claim: &ports::SubmissionClaim, nonce: u64) -> ports::SignedTransfer {
    ports::SignedTransfer {
        from: claim.wallet_address,
        token: claim.intent.token_address.expect("token"),
        to: claim.intent.recipient,
        amount: claim.intent.amount.value(),
        nonce,
        raw: vec![0x02, nonce as u8],
        hash: format!("0x{:064x}", u128::from(nonce) + 1),
    }
}

/// Leases the oldest confirmed intent for 30 s, if one is free.
async fn claim_next(fixture: &Fixture) -> Option<ports::SubmissionClaim> {
    fixture
        .intents
        .claim_confirmed(Duration::from_secs(30))
        .await
        .expect("claim")
}

async fn confirmed_intent(fixture: &Fixture, agent: AgentId) -> IntentId {
    let Admission::Created(intent) = admit(fixture, send(agent, "1", None))
        .await
        .expect("admitted")
    else {
        panic!()
    };
    fixture
        .intents
        .transition(intent.id, IntentEvent::Confirm, None)
        .await
        .expect("confirmed");
    intent.id
}

#[tokio::test]
async fn a_claim_is_exclusive_and_recording_keeps_the_exact_transaction() {
    use ports::SubmissionError;
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 13, true).await;
    let id = confirmed_intent(&fixture, agent).await;
    let claim = claim_next(&fixture).await.expect("one");
    assert_eq!(
        (claim.intent.id, claim.in_flight, claim.next_nonce),
        (id, 0, None)
    );
    assert_eq!(claim.sealed_key, vec![13]);
    assert!(claim_next(&fixture).await.is_none(), "leased");
    let stranger = fixture
        .intents
        .record_submission(id, LeaseId(Uuid::new_v4()), &signed_for(&claim, 0))
        .await;
    assert_eq!(stranger, Err(SubmissionError::LeaseLost(id)));
    let transfer = signed_for(&claim, 0);
    let submitted = fixture
        .intents
        .record_submission(id, claim.lease, &transfer)
        .await
        .expect("recorded");
    assert_eq!(
        (submitted.status, submitted.tx_hash.as_deref()),
        (IntentStatus::Submitted, Some(transfer.hash.as_str()))
    );
    let pending = fixture.intents.submitted(10).await.expect("submitted");
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0].transfer, transfer,
        "the very bytes that were signed, for any re-broadcast"
    );
}

#[tokio::test]
async fn a_lapsed_claim_passes_to_another_executor_and_a_taken_nonce_is_refused() {
    use ports::SubmissionError;
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 14, true).await;
    let first = confirmed_intent(&fixture, agent).await;
    let second = confirmed_intent(&fixture, agent).await;
    let lapsed = fixture
        .intents
        .claim_confirmed(Duration::ZERO)
        .await
        .expect("claim")
        .expect("one");
    assert_eq!(lapsed.intent.id, first);
    let retaken = claim_next(&fixture).await.expect("again");
    assert_eq!(retaken.intent.id, first, "a lapsed lease is free again");
    assert_eq!(
        fixture
            .intents
            .record_submission(first, lapsed.lease, &signed_for(&lapsed, 0))
            .await,
        Err(SubmissionError::LeaseLost(first))
    );
    fixture
        .intents
        .record_submission(first, retaken.lease, &signed_for(&retaken, 0))
        .await
        .expect("recorded");
    let next = claim_next(&fixture).await.expect("second");
    assert_eq!(
        (next.intent.id, next.in_flight, next.next_nonce),
        (second, 1, Some(1))
    );
    assert_eq!(
        fixture
            .intents
            .record_submission(second, next.lease, &signed_for(&next, 0))
            .await,
        Err(SubmissionError::NonceTaken(0))
    );
    let again = claim_next(&fixture).await.expect("released");
    assert_eq!(
        again.intent.id, second,
        "a refused recording releases the claim at once"
    );
    fixture
        .intents
        .record_submission(second, again.lease, &signed_for(&again, 1))
        .await
        .expect("recorded");
}

#[tokio::test]
async fn settlement_ends_an_intent_and_the_queue_tells_how_long_confirmed_ones_wait() {
    use ports::Settlement;
    let fixture = fixture().await;
    let agent = new_agent(&fixture, 15, true).await;
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
    let claim = claim_next(&fixture).await.expect("one");
    fixture
        .intents
        .record_submission(id, claim.lease, &signed_for(&claim, 0))
        .await
        .expect("recorded");
    let executed = fixture
        .intents
        .settle(id, Settlement::Executed)
        .await
        .expect("settled");
    assert_eq!(executed.status, IntentStatus::Executed);
    assert_eq!(executed.confirmed_at, Some(confirmed_at), "kept");
    assert!(matches!(
        fixture
            .intents
            .settle(id, Settlement::Failed("late".into()))
            .await,
        Err(TransitionError::Refused(_))
    ));
    assert_eq!(
        fixture.intents.oldest_confirmed_wait().await.expect("lag"),
        None
    );
}
