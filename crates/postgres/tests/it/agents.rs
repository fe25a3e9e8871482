use std::sync::Arc;

use domain::keys::{KeyGrant, KeyId};
use domain::{
    AgentId, AgentKey, AgentKeyHash, Allowlist, AllowlistChange, AtomicAmount, Chain, Custody,
    EmailAddress, EvmAddress, Label, PhoneNumber, PolicyAsset, PolicyChange, SpendLimits,
    WalletStatus,
};
use std::time::Duration;

use diesel_async::{RunQueryDsl, SimpleAsyncConnection};
use ports::{
    AgentStore, Conflict, NewAgent, NewEmailInbox, NewPhoneNumber, NewWallet, Notifications,
    StoreError, AGENT_PROFILES_TOPIC,
};
use postgres_store::{Connector, Database, PgAgentStore, PgNotificationHub, PoolSettings};
use test_support::TestDatabase;
use uuid::Uuid;

pub(crate) fn store(database: &TestDatabase) -> PgAgentStore {
    PgAgentStore::new(
        Database::connect(&database.connector(), PoolSettings::default()).expect("pool"),
    )
}

fn key(seed: u8) -> AgentKey {
    AgentKey::from_random_bytes([seed; 32])
}

/// The first key `full_agent` gives the agent `id`: its id's bytes, twice.
pub(crate) fn key_of(id: AgentId) -> AgentKey {
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(id.0.as_bytes());
    bytes[16..].copy_from_slice(id.0.as_bytes());
    AgentKey::from_random_bytes(bytes)
}

fn usdc() -> PolicyAsset {
    PolicyAsset::usdc_on_base(
        EvmAddress::parse("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913").expect("valid"),
    )
}

fn address(last: u8) -> EvmAddress {
    let mut bytes = [0x11u8; 20];
    bytes[19] = last;
    EvmAddress::from_bytes(bytes)
}

fn bare_agent(seed: u8) -> NewAgent {
    NewAgent {
        id: AgentId(Uuid::now_v7()),
        sponsor: "acme".into(),
        label: None,
        key_id: KeyId::generate(),
        key_hash: key(seed).hash(),
        phone_number: None,
        email_inbox: None,
        wallet: None,
    }
}

pub(crate) fn full_agent(seed: u8) -> NewAgent {
    let id = AgentId(Uuid::now_v7());
    NewAgent {
        id,
        key_hash: key_of(id).hash(),
        label: Some(Label::parse("full").expect("valid")),
        phone_number: Some(NewPhoneNumber {
            number: PhoneNumber::parse(&format!("+1555010{seed:04}")).expect("valid"),
            country_iso2: Some("US".into()),
            provider: "sandbox".into(),
        }),
        email_inbox: Some(NewEmailInbox {
            address: EmailAddress::parse(&format!("agent-{}@inbox.test", id.0.simple()))
                .expect("valid"),
            provider: "sandbox".into(),
        }),
        wallet: Some(NewWallet {
            provider: "local".into(),
            chain: Chain::Base,
            address: address(seed),
            custody: Custody::SelfCustodial,
            sealed_key: vec![1, seed],
            policy_asset: usdc(),
        }),
        ..bare_agent(seed)
    }
}

fn amount(digits: &str) -> AtomicAmount {
    AtomicAmount::parse(digits).expect("valid amount")
}

#[tokio::test]
async fn a_created_agent_reads_back_with_every_resource_and_a_default_policy() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let new = full_agent(1);
    let created = store
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    let read = store.profile(new.id).await.expect("read").expect("exists");
    assert_eq!(created, read);
    assert_eq!(read.agent.label.as_ref().map(Label::as_str), Some("full"));
    assert!(read.agent.is_active);
    assert_eq!(
        read.phone_number.expect("phone").number.as_str(),
        "+15550100001"
    );
    assert!(read
        .email_inbox
        .expect("inbox")
        .address
        .as_str()
        .starts_with("agent-"));
    let wallet = read.wallet.expect("wallet");
    assert_eq!(wallet.address, address(1));
    assert_eq!(
        (wallet.status, wallet.custody, wallet.delegated),
        (WalletStatus::Active, Custody::SelfCustodial, false)
    );
    let policy = wallet.spend_policy.expect("policy");
    assert_eq!(policy.asset, usdc());
    assert_eq!(policy.rules.limits, SpendLimits::default());
    assert_eq!(policy.rules.allowlist, Allowlist::unrestricted());
}

#[tokio::test]
async fn an_agent_without_resources_has_none() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let new = bare_agent(2);
    let profile = store
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    assert!(
        profile.phone_number.is_none() && profile.email_inbox.is_none() && profile.wallet.is_none()
    );
    assert_eq!(profile.agent.label, None);
}

#[tokio::test]
async fn lookup_by_key_hash_finds_only_active_agents() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let new = bare_agent(3);
    store
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    let found = store
        .active_profile_by_key_hash(&key(3).hash())
        .await
        .expect("query");
    let (profile, first) = found.expect("found");
    assert_eq!(profile.agent.id, new.id);
    assert_eq!((first.id, first.hash), (new.key_id, new.key_hash));
    assert!(first.first && first.grant == KeyGrant::first());
    assert_eq!(
        store
            .active_profile_by_key_hash(&key(4).hash())
            .await
            .expect("query"),
        None
    );
    assert!(store
        .deactivate(new.id, &crate::actor())
        .await
        .expect("deactivated"));
    assert!(store
        .deactivate(new.id, &crate::actor())
        .await
        .expect("twice is harmless"));
    assert_eq!(
        store
            .active_profile_by_key_hash(&key(3).hash())
            .await
            .expect("query"),
        None
    );
    assert!(
        !store
            .profile(new.id)
            .await
            .expect("read")
            .expect("still exists")
            .agent
            .is_active
    );
    assert!(!store
        .deactivate(AgentId(Uuid::now_v7()), &crate::actor())
        .await
        .expect("unknown agent"));
}

#[tokio::test]
async fn replacing_the_key_hash_retires_the_old_key_at_once() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let new = bare_agent(5);
    store
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    assert_eq!(
        store
            .replace_first_key(new.id, KeyId::generate(), key(6).hash(), &crate::actor())
            .await
            .expect("replaced"),
        Some(Vec::new()),
        "it had no endpoint to disable"
    );
    assert_eq!(
        store
            .active_profile_by_key_hash(&key(5).hash())
            .await
            .expect("query"),
        None
    );
    assert!(store
        .active_profile_by_key_hash(&key(6).hash())
        .await
        .expect("query")
        .is_some());
    assert_eq!(
        store
            .replace_first_key(
                AgentId(Uuid::now_v7()),
                KeyId::generate(),
                key(7).hash(),
                &crate::actor()
            )
            .await
            .expect("unknown"),
        None
    );
}

#[tokio::test]
async fn a_taken_phone_number_is_a_named_conflict_and_nothing_is_half_created() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    store
        .create(full_agent(8), &crate::actor())
        .await
        .expect("created");
    let mut clash = full_agent(9);
    clash.phone_number = full_agent(8).phone_number;
    let error = store
        .create(clash.clone(), &crate::actor())
        .await
        .expect_err("conflict");
    assert_eq!(error, StoreError::Conflict(Conflict::PhoneNumber));
    assert_eq!(store.profile(clash.id).await.expect("read"), None);
    assert_eq!(store.list().await.expect("list").len(), 1);
}

#[tokio::test]
async fn a_duplicate_key_hash_is_refused() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    store
        .create(bare_agent(10), &crate::actor())
        .await
        .expect("created");
    let error = store
        .create(bare_agent(10), &crate::actor())
        .await
        .expect_err("conflict");
    assert_eq!(error, StoreError::Conflict(Conflict::AgentKey));
}

#[tokio::test]
async fn agents_list_oldest_first_and_share_a_sponsor_by_name() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let first = store
        .create(bare_agent(11), &crate::actor())
        .await
        .expect("created");
    let second = store
        .create(full_agent(12), &crate::actor())
        .await
        .expect("created");
    let listed = store.list().await.expect("list");
    assert_eq!(listed, vec![first.clone(), second.clone()]);
    assert_eq!(first.agent.sponsor_id, second.agent.sponsor_id);
}

#[tokio::test]
async fn policy_changes_apply_and_persist() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let new = full_agent(13);
    store
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    let change = PolicyChange {
        max_per_tx: Some(Some(amount("1000000"))),
        max_daily: Some(Some(amount(
            "115792089237316195423570985008687907853269984665640564039457584007913129639935",
        ))),
        allowlist: AllowlistChange::Extend(vec![address(200), address(201)]),
        ..PolicyChange::default()
    };
    let updated = store
        .update_policy(new.id, usdc(), change, &crate::actor())
        .await
        .expect("updated")
        .expect("has wallet");
    assert_eq!(updated.rules.limits.max_per_tx, Some(amount("1000000")));
    assert_eq!(
        updated.rules.limits.max_daily.map(|a| a.value()),
        Some(alloy_max())
    );
    assert_eq!(
        updated.rules.allowlist,
        Allowlist::of([address(200), address(201)])
    );
    let read = store.profile(new.id).await.expect("read").expect("exists");
    assert_eq!(
        read.wallet.expect("wallet").spend_policy,
        Some(updated.clone())
    );

    let cleared = PolicyChange {
        max_per_tx: Some(None),
        max_daily: None,
        allowlist: AllowlistChange::Replace(Allowlist::of([])),
        ..PolicyChange::default()
    };
    let updated = store
        .update_policy(new.id, usdc(), cleared, &crate::actor())
        .await
        .expect("updated")
        .expect("has wallet");
    assert_eq!(updated.rules.limits.max_per_tx, None);
    assert_eq!(
        updated.rules.limits.max_daily.map(|a| a.value()),
        Some(alloy_max())
    );
    assert_eq!(updated.rules.allowlist.addresses(), Some(&[][..]));
}

fn alloy_max() -> alloy_primitives::U256 {
    alloy_primitives::U256::MAX
}

#[tokio::test]
async fn a_policy_change_for_an_agent_without_wallet_changes_nothing() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let new = bare_agent(14);
    store
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    let change = PolicyChange {
        max_per_tx: Some(Some(amount("5"))),
        ..PolicyChange::default()
    };
    assert_eq!(
        store
            .update_policy(new.id, usdc(), change, &crate::actor())
            .await
            .expect("query"),
        None
    );
}

#[tokio::test]
async fn concurrent_allowlist_extensions_lose_no_address() {
    let database = TestDatabase::new().await;
    let store = Arc::new(store(&database));
    let new = full_agent(15);
    store
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    let tasks: Vec<_> = (0..12u8)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                let change = PolicyChange {
                    allowlist: AllowlistChange::Extend(vec![address(100 + n)]),
                    ..PolicyChange::default()
                };
                store
                    .update_policy(new.id, usdc(), change, &crate::actor())
                    .await
                    .expect("updated");
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    let policy = store
        .profile(new.id)
        .await
        .expect("read")
        .expect("exists")
        .wallet
        .expect("wallet")
        .spend_policy
        .expect("policy");
    assert_eq!(policy.rules.allowlist.addresses().map(<[_]>::len), Some(12));
}

#[tokio::test]
async fn an_unreachable_database_is_reported_unavailable() {
    let pool = Database::connect(
        &Connector::from_url("postgres://postgres@127.0.0.1:1/nothing").expect("a valid URL"),
        PoolSettings {
            max_size: 1,
            acquire_timeout: std::time::Duration::from_secs(2),
            ..PoolSettings::default()
        },
    )
    .expect("pool builds lazily");
    let store = PgAgentStore::new(pool);
    let error = store
        .active_profile_by_key_hash(&AgentKeyHash([0; 32]))
        .await
        .expect_err("unavailable");
    assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
}

const FRENCH: &str = "fr_FR.UTF-8";

/// The connector of the test database whose sessions start with these settings (libpq's
/// `options`, each `-c name=value`).
fn with_session_settings(database: &TestDatabase, settings: &[(&str, &str)]) -> Connector {
    let options = settings
        .iter()
        .map(|(name, value)| format!("-c%20{name}%3D{value}"))
        .collect::<Vec<_>>()
        .join("%20");
    let url = database.url();
    let separator = if url.contains('?') { '&' } else { '?' };
    Connector::from_url(&format!("{url}{separator}options={options}")).expect("a valid URL")
}

/// Whether the test server may speak French: `lc_messages` takes only a locale the server's
/// system has.
async fn french_available(database: &TestDatabase) -> bool {
    let available = database
        .connection()
        .await
        .batch_execute(&format!("SET lc_messages = '{FRENCH}'"))
        .await
        .is_ok();
    if !available {
        eprintln!("the test server has no {FRENCH} locale: its French part is skipped");
    }
    available
}

async fn language_of(connector: &Connector) -> String {
    diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
        "current_setting('lc_messages')",
    ))
    .get_result(&mut connector.open().await.expect("a session"))
    .await
    .expect("the session's language")
}

#[tokio::test]
async fn a_lock_timeout_is_busy_and_a_statement_timeout_timed_out_in_the_servers_language() {
    let database = TestDatabase::new().await;
    let connector = if french_available(&database).await {
        let french = with_session_settings(&database, &[("lc_messages", FRENCH)]);
        assert_eq!(
            language_of(&french).await,
            FRENCH,
            "the server speaks French"
        );
        french
    } else {
        database.connector()
    };
    let store_timing_out = |lock_timeout, statement_timeout| {
        PgAgentStore::new(
            Database::connect(
                &connector,
                PoolSettings {
                    max_size: 1,
                    lock_timeout,
                    statement_timeout,
                    ..PoolSettings::default()
                },
            )
            .expect("pool"),
        )
    };
    let new = bare_agent(16);
    store(&database)
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    let _held = database.hold("SELECT id FROM agents FOR UPDATE").await;
    let short = Duration::from_millis(100);
    let long = Duration::from_secs(30);
    let error = store_timing_out(short, long)
        .deactivate(new.id, &crate::actor())
        .await
        .expect_err("the agent's row is held");
    assert!(matches!(error, StoreError::Busy(_)), "{error:?}");
    let error = store_timing_out(long, short)
        .deactivate(new.id, &crate::actor())
        .await
        .expect_err("the agent's row is held");
    assert!(matches!(error, StoreError::TimedOut(_)), "{error:?}");
}

#[tokio::test]
async fn a_role_that_may_not_change_the_servers_language_still_has_its_sessions() {
    let database = TestDatabase::new().await;
    if !french_available(&database).await {
        return;
    }
    let new = bare_agent(17);
    store(&database)
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    // A role of every server that may read every table but not set `lc_messages`.
    let reader = with_session_settings(
        &database,
        &[("lc_messages", FRENCH), ("role", "pg_read_all_data")],
    );
    let store =
        PgAgentStore::new(Database::connect(&reader, PoolSettings::default()).expect("pool"));
    assert!(store.profile(new.id).await.expect("read").is_some());
}

/// A hub listening through `connector`.
pub(crate) async fn listening_hub(connector: Connector) -> PgNotificationHub {
    let hub = PgNotificationHub::start(connector);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !hub.is_listening() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the hub never listened"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    hub
}

#[tokio::test]
async fn every_change_to_a_profile_publishes_the_profiles_topic_on_commit() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let new = full_agent(14);
    store
        .create(new.clone(), &crate::actor())
        .await
        .expect("created");
    let hub = listening_hub(database.connector()).await;
    let mut connection = database.connection().await;

    let nonce = hub.subscribe(AGENT_PROFILES_TOPIC);
    connection
        .batch_execute("UPDATE wallets SET next_nonce = 7")
        .await
        .expect("nonce moved");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), nonce)
            .await
            .is_err(),
        "a nonce is no part of a profile"
    );
    let policy = PolicyChange {
        max_per_tx: Some(Some(amount("5"))),
        ..PolicyChange::default()
    };
    wakes_profiles(&hub, "policy", async {
        store
            .update_policy(new.id, usdc(), policy, &crate::actor())
            .await
            .expect("set");
    })
    .await;
    wakes_profiles(&hub, "key", async {
        store
            .replace_first_key(new.id, KeyId::generate(), key(15).hash(), &crate::actor())
            .await
            .expect("replaced");
    })
    .await;
    wakes_profiles(&hub, "number", async {
        connection
            .batch_execute("UPDATE phone_numbers SET country_iso2 = 'CA'")
            .await
            .expect("moved");
    })
    .await;
    wakes_profiles(&hub, "deactivation", async {
        store
            .deactivate(new.id, &crate::actor())
            .await
            .expect("deactivated");
    })
    .await;
}

/// Makes `change` and waits for the profiles topic to wake a subscription taken before it.
async fn wakes_profiles(
    hub: &PgNotificationHub,
    change: &str,
    made: impl std::future::Future<Output = ()>,
) {
    let woken = hub.subscribe(AGENT_PROFILES_TOPIC);
    made.await;
    tokio::time::timeout(Duration::from_secs(10), woken)
        .await
        .unwrap_or_else(|_| panic!("the {change} change woke no one"));
}

#[tokio::test]
async fn every_operator_action_on_an_agent_is_audited_with_it_and_a_refused_one_is_not() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let alice = domain::Actor {
        operator: domain::Operator::Named(domain::OperatorName::parse("alice").expect("valid")),
        address: Some("192.0.2.7".into()),
    };
    let new = full_agent(40);
    let id = new.id;
    store.create(new, &alice).await.expect("created");
    let daily = PolicyChange {
        max_daily: Some(Some(amount("500"))),
        ..PolicyChange::default()
    };
    store
        .update_policy(id, usdc(), daily.clone(), &alice)
        .await
        .expect("set");
    // The same change again changes nothing, and records nothing.
    store
        .update_policy(id, usdc(), daily, &alice)
        .await
        .expect("set");
    let too_many = PolicyChange {
        recipient_limits: domain::RecipientLimitsChange::Replace(
            (0..=domain::MAX_RECIPIENT_LIMITS)
                .map(|n| domain::RecipientLimit {
                    address: address(u8::try_from(n % 250).expect("small")),
                    max_per_tx: Some(amount(&(n + 1).to_string())),
                    max_daily: None,
                })
                .collect(),
        ),
        ..PolicyChange::default()
    };
    assert!(store
        .update_policy(id, usdc(), too_many, &alice)
        .await
        .is_err());
    assert!(store
        .replace_first_key(id, KeyId::generate(), key(41).hash(), &alice)
        .await
        .expect("rotated")
        .is_some());
    assert!(store.deactivate(id, &alice).await.expect("deactivated"));
    assert!(
        store.deactivate(id, &alice).await.expect("again"),
        "deactivating twice finds the agent"
    );
    let rows = crate::audit_log(&database, None).await;
    assert_eq!(
        rows.iter().map(|row| row.action).collect::<Vec<_>>(),
        [
            domain::AuditAction::Create,
            domain::AuditAction::PolicyChange,
            domain::AuditAction::Rotate,
            domain::AuditAction::Deactivate,
        ],
        "one row per change made, none for a change refused or making no difference"
    );
    for row in &rows {
        assert_eq!(
            (
                row.operator.as_str(),
                row.address.as_deref(),
                row.target.clone()
            ),
            (
                "operator:alice",
                Some("192.0.2.7"),
                Some(format!("agent:{id}"))
            )
        );
    }
    let change: serde_json::Value =
        serde_json::from_str(rows[1].after.as_deref().expect("after")).expect("JSON");
    assert_eq!(change["max_daily_atomic"], serde_json::json!(500));
    let hash: String = key(41)
        .hash()
        .as_bytes()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    assert!(
        rows.iter().all(|row| !format!("{row:?}").contains(&hash)),
        "no key nor hash in the log"
    );
}
