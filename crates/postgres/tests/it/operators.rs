use std::time::Duration;

use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use domain::{
    Actor, AuditAction, OneTimeSecret, Operator, OperatorId, OperatorName, OperatorRole,
    RateDecision, RateLimit, SESSION_IDLE_TIMEOUT,
};
use ports::{
    AuditPage, Ceremony, CeremonyKind, NewOperator, NewSession, OperatorStore, OperatorStoreError,
    StoredPasskey,
};
use postgres_store::{Database, PgOperatorStore, PoolSettings};
use test_support::TestDatabase;
use uuid::Uuid;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

fn cli() -> Actor {
    Actor::local(Operator::Cli {
        user: Some(OperatorName::parse("root-shell").expect("valid")),
    })
}

fn name(name: &str) -> OperatorName {
    OperatorName::parse(name).expect("valid")
}

fn secret(seed: u8) -> OneTimeSecret {
    OneTimeSecret::from_random_bytes([seed; 32])
}

fn passkey(seed: u8) -> StoredPasskey {
    StoredPasskey {
        credential_id: vec![seed; 16],
        record: format!("{{\"counter\": {seed}}}"),
    }
}

async fn store(database: &TestDatabase) -> PgOperatorStore {
    PgOperatorStore::new(
        Database::connect(&database.connector(), PoolSettings::default()).expect("pool"),
    )
}

async fn invite(
    store: &PgOperatorStore,
    operator: &str,
    role: OperatorRole,
    link: &OneTimeSecret,
) -> domain::OperatorAccount {
    store
        .invite(
            NewOperator {
                id: OperatorId(Uuid::now_v7()),
                name: name(operator),
                role,
                enrollment: link.hash(),
                enrollment_ttl: DAY,
            },
            &cli(),
        )
        .await
        .expect("invited")
}

/// The actions of the audit log, oldest first, with their operators and targets.
async fn audited(store: &PgOperatorStore) -> Vec<(AuditAction, String, Option<String>)> {
    let mut rows = store
        .audit(AuditPage {
            before: None,
            target: None,
            limit: 100,
        })
        .await
        .expect("audit");
    rows.reverse();
    rows.into_iter()
        .map(|(_, row)| (row.action, row.operator, row.target))
        .collect()
}

#[tokio::test]
async fn an_invited_operator_enrolls_one_passkey_through_their_link_once() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let link = secret(1);
    let alice = invite(&store, "alice", OperatorRole::Approver, &link).await;
    assert_eq!(
        (alice.role, alice.is_active()),
        (OperatorRole::Approver, true)
    );
    assert!(matches!(
        store
            .invite(
                NewOperator {
                    id: OperatorId(Uuid::now_v7()),
                    name: name("alice"),
                    role: OperatorRole::Admin,
                    enrollment: secret(2).hash(),
                    enrollment_ttl: DAY,
                },
                &cli(),
            )
            .await,
        Err(OperatorStoreError::NameTaken(_))
    ));
    assert_eq!(
        store.enrollment(link.hash()).await.expect("read"),
        Some(alice.clone())
    );
    assert_eq!(
        store.enrollment(secret(9).hash()).await.expect("read"),
        None
    );
    let enrolled = store
        .enroll(link.hash(), passkey(1), Some("10.0.0.1".into()))
        .await
        .expect("enrolled");
    assert_eq!(enrolled.id, alice.id);
    assert_eq!(
        store.enrollment(link.hash()).await.expect("read"),
        None,
        "the link is used up"
    );
    assert!(matches!(
        store.enroll(link.hash(), passkey(2), None).await,
        Err(OperatorStoreError::EnrollmentClosed)
    ));
    let (found, stored) = store
        .passkey(&passkey(1).credential_id)
        .await
        .expect("read")
        .expect("registered");
    assert_eq!((found.id, stored.credential_id), (alice.id, vec![1; 16]));
    // Another operator's link cannot register a passkey already taken.
    let bob_link = secret(3);
    invite(&store, "bob", OperatorRole::Viewer, &bob_link).await;
    assert!(matches!(
        store.enroll(bob_link.hash(), passkey(1), None).await,
        Err(OperatorStoreError::PasskeyTaken)
    ));
    assert_eq!(
        audited(&store).await,
        [
            (
                AuditAction::Invite,
                "cli:root-shell".into(),
                Some("operator:alice".into())
            ),
            (
                AuditAction::Enroll,
                "operator:alice".into(),
                Some("operator:alice".into())
            ),
            (
                AuditAction::Invite,
                "cli:root-shell".into(),
                Some("operator:bob".into())
            ),
        ]
    );
}

#[tokio::test]
async fn an_expired_link_or_a_disabled_operators_opens_nothing() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let (stale, disabled) = (secret(4), secret(5));
    invite(&store, "carol", OperatorRole::Admin, &stale).await;
    invite(&store, "dave", OperatorRole::Admin, &disabled).await;
    TestDatabase::execute(
        &database,
        "UPDATE operator_enrollments SET expires_at = now() - interval '1 second' WHERE operator_id = (SELECT id FROM operators WHERE name = 'carol')")
        .await;
    store
        .disable(&name("dave"), &cli())
        .await
        .expect("disabled");
    for link in [&stale, &disabled] {
        assert_eq!(store.enrollment(link.hash()).await.expect("read"), None);
        assert!(matches!(
            store.enroll(link.hash(), passkey(7), None).await,
            Err(OperatorStoreError::EnrollmentClosed)
        ));
    }
}

#[tokio::test]
async fn a_ceremony_is_taken_once_and_never_after_it_expires() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let (id, late) = (Uuid::now_v7(), Uuid::now_v7());
    for (ceremony, expires_in) in [(id, DAY), (late, Duration::from_millis(1))] {
        store
            .begin_ceremony(
                Ceremony {
                    id: ceremony,
                    kind: CeremonyKind::Authentication,
                    state: r#"{"challenge": "c"}"#.into(),
                },
                expires_in,
            )
            .await
            .expect("begun");
    }
    let taken = store.take_ceremony(id).await.expect("read").expect("taken");
    assert_eq!(
        (
            taken.kind,
            serde_json::from_str::<serde_json::Value>(&taken.state).ok()
        ),
        (
            CeremonyKind::Authentication,
            Some(serde_json::json!({"challenge": "c"}))
        )
    );
    assert_eq!(store.take_ceremony(id).await.expect("read"), None);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while store.take_ceremony(late).await.expect("read").is_some() {
        assert!(tokio::time::Instant::now() < deadline, "never expired");
    }
}

async fn open(store: &PgOperatorStore, operator: OperatorId, cookie: &OneTimeSecret) -> bool {
    store
        .open_session(
            operator,
            passkey(1),
            NewSession {
                token: cookie.hash(),
                csrf: "csrf-token".into(),
            },
            Some("10.0.0.2".into()),
        )
        .await
        .expect("opened")
}

#[tokio::test]
async fn a_session_lives_while_used_and_ends_with_its_operator_or_its_idleness() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let link = secret(6);
    let erin = invite(&store, "erin", OperatorRole::Approver, &link).await;
    store
        .enroll(link.hash(), passkey(1), None)
        .await
        .expect("enrolled");
    let (first, second) = (secret(10), secret(11));
    assert!(open(&store, erin.id, &first).await);
    assert!(open(&store, erin.id, &second).await);
    let session = store
        .session(first.hash(), SESSION_IDLE_TIMEOUT, true)
        .await
        .expect("read")
        .expect("live");
    assert_eq!(
        (session.operator.id, session.csrf.as_str()),
        (erin.id, "csrf-token")
    );
    assert_eq!(
        store
            .session(secret(12).hash(), SESSION_IDLE_TIMEOUT, true)
            .await
            .expect("read"),
        None
    );
    // Idle past the timeout: over, and closed for good.
    TestDatabase::execute(
        &database,
        "UPDATE operator_sessions SET last_seen_at = now() - interval '31 minutes'",
    )
    .await;
    assert_eq!(
        store
            .session(second.hash(), SESSION_IDLE_TIMEOUT, true)
            .await
            .expect("read"),
        None
    );
    TestDatabase::execute(
        &database,
        "UPDATE operator_sessions SET last_seen_at = now()",
    )
    .await;
    assert_eq!(
        store
            .session(second.hash(), SESSION_IDLE_TIMEOUT, true)
            .await
            .expect("read"),
        None,
        "an idle session does not come back"
    );
    assert!(open(&store, erin.id, &second).await);
    let disabled = store
        .disable(&name("erin"), &cli())
        .await
        .expect("disabled")
        .expect("found");
    assert!(!disabled.is_active());
    for cookie in [&first, &second] {
        assert_eq!(
            store
                .session(cookie.hash(), SESSION_IDLE_TIMEOUT, true)
                .await
                .expect("read"),
            None,
            "a disabled operator's sessions end at once"
        );
    }
    assert!(
        !open(&store, erin.id, &secret(13)).await,
        "nor opens a new one"
    );
    store
        .close_session(first.hash(), None)
        .await
        .expect("closed");
    let actions: Vec<_> = audited(&store)
        .await
        .into_iter()
        .map(|(action, _, _)| action)
        .collect();
    assert_eq!(
        actions,
        [
            AuditAction::Invite,
            AuditAction::Enroll,
            AuditAction::Login,
            AuditAction::Login,
            AuditAction::Login,
            AuditAction::Disable,
        ],
        "closing a session already gone records nothing"
    );
}

#[tokio::test]
async fn sign_in_attempts_of_one_address_are_limited_and_anothers_are_not() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let limit = RateLimit {
        per_minute: 1,
        burst: 2,
    };
    let mut decisions = Vec::new();
    for _ in 0..3 {
        decisions.push(
            store
                .take_sign_in_attempt("10.0.0.3", limit)
                .await
                .expect("taken"),
        );
    }
    assert!(matches!(
        decisions.as_slice(),
        [
            RateDecision::Allowed,
            RateDecision::Allowed,
            RateDecision::Limited { .. }
        ]
    ));
    assert_eq!(
        store
            .take_sign_in_attempt("10.0.0.4", limit)
            .await
            .expect("taken"),
        RateDecision::Allowed
    );
}

#[tokio::test]
async fn no_one_changes_or_removes_a_row_of_the_audit_log() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    invite(&store, "frank", OperatorRole::Viewer, &secret(14)).await;
    let mut connection = database.connection().await;
    for refused in [
        "UPDATE operator_audit SET reason = 'rewritten'",
        "DELETE FROM operator_audit",
        "TRUNCATE operator_audit",
    ] {
        let error = connection
            .batch_execute(refused)
            .await
            .expect_err("refused");
        assert!(
            error.to_string().contains("append-only"),
            "{refused}: {error}"
        );
    }
    assert_eq!(audited(&store).await.len(), 1);
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    rows: i64,
}

/// The service's role as `docs/operations.md` sets it up: not a superuser, owning its database,
/// running the migrations itself. It may append to the audit log and read it; the grants refuse
/// it any change or removal, before any trigger is reached.
#[tokio::test]
async fn the_services_own_role_may_only_append_to_the_audit_log() {
    let role = format!(
        "audit_probe_{}_{}",
        std::process::id(),
        Uuid::now_v7().simple()
    );
    let admin_url = test_support::server_url();
    let mut admin = AsyncPgConnection::establish(admin_url)
        .await
        .expect("admin connection");
    // One statement each: CREATE DATABASE runs outside any transaction.
    for statement in [
        format!("CREATE ROLE {role} LOGIN NOSUPERUSER"),
        format!("CREATE DATABASE {role} OWNER {role}"),
    ] {
        admin.batch_execute(&statement).await.expect(&statement);
    }
    let mut url = url::Url::parse(admin_url).expect("URL");
    url.set_username(&role).expect("user");
    url.set_path(&role);
    let service_url = url.to_string();
    let connector = postgres_store::Connector::from_url(&service_url).expect("connector");
    postgres_store::run_migrations(&connector)
        .await
        .expect("migrated by the service's role");
    let mut service = connector.open().await.expect("service connection");
    service
        .batch_execute(
            "INSERT INTO operator_audit (id, operator, action) \
             VALUES (gen_random_uuid(), 'cli', 'invite')",
        )
        .await
        .expect("appended");
    for refused in [
        "UPDATE operator_audit SET reason = 'rewritten'",
        "DELETE FROM operator_audit",
        "TRUNCATE operator_audit",
    ] {
        let error = service.batch_execute(refused).await.expect_err("refused");
        assert!(
            error.to_string().contains("permission denied"),
            "{refused}: {error}"
        );
    }
    let kept: Count =
        diesel::sql_query("SELECT count(*) AS rows FROM operator_audit WHERE action = $1")
            .bind::<Text, _>("invite")
            .get_result(&mut service)
            .await
            .expect("read");
    assert_eq!(kept.rows, 1);
    drop(service);
    for statement in [
        format!("DROP DATABASE {role} WITH (FORCE)"),
        format!("DROP ROLE {role}"),
    ] {
        admin.batch_execute(&statement).await.expect(&statement);
    }
}
