use std::time::Duration;

use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use domain::{
    Actor, AuditAction, OneTimeSecret, Operator, OperatorId, OperatorName, OperatorRole,
    RateDecision, RateLimit, SESSION_IDLE_TIMEOUT,
};
use ports::{
    AuditLog, AuditPage, Ceremony, ConsoleSessions, FailedSignIn, NewOperator, NewSession,
    OperatorAccounts, OperatorStoreError, OperatorTokens, SessionOpening, StoredPasskey,
    TokenRecord, UsedChallenge,
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
async fn a_registration_is_taken_once_and_never_after_it_expires() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let link = secret(8);
    invite(&store, "gina", OperatorRole::Approver, &link).await;
    let (id, late) = (Uuid::now_v7(), Uuid::now_v7());
    for (ceremony, expires_in) in [(id, DAY), (late, Duration::from_millis(1))] {
        store
            .begin_ceremony(
                Ceremony {
                    id: ceremony,
                    enrollment: link.hash(),
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
            taken.enrollment,
            serde_json::from_str::<serde_json::Value>(&taken.state).ok()
        ),
        (link.hash(), Some(serde_json::json!({"challenge": "c"})))
    );
    assert_eq!(store.take_ceremony(id).await.expect("read"), None);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while store.take_ceremony(late).await.expect("read").is_some() {
        assert!(tokio::time::Instant::now() < deadline, "never expired");
    }
}

#[tokio::test]
async fn every_instance_seals_challenges_with_the_first_key_drawn() {
    let database = TestDatabase::new().await;
    let (first, second) = (store(&database).await, store(&database).await);
    let kept = first.challenge_key([1; 32]).await.expect("kept");
    assert_eq!(kept, [1; 32]);
    assert_eq!(
        second.challenge_key([2; 32]).await.expect("read"),
        kept,
        "a later draw is not kept"
    );
}

/// A challenge of `id` kept until `seconds` from now (negative: already past).
fn used(id: Uuid, seconds: i64) -> UsedChallenge {
    UsedChallenge {
        id,
        kept_until: time::OffsetDateTime::now_utc() + time::Duration::seconds(seconds),
    }
}

/// Opens a session of `operator` answering `challenge`.
async fn open_answering(
    store: &PgOperatorStore,
    operator: OperatorId,
    cookie: &OneTimeSecret,
    challenge: UsedChallenge,
) -> SessionOpening {
    store
        .open_session(
            operator,
            passkey(1),
            NewSession {
                token: cookie.hash(),
                csrf: "csrf-token".into(),
            },
            challenge,
            Some("10.0.0.2".into()),
        )
        .await
        .expect("opened")
}

/// Opens a session of `operator` answering a challenge of its own: whether it opened.
async fn open(store: &PgOperatorStore, operator: OperatorId, cookie: &OneTimeSecret) -> bool {
    open_answering(store, operator, cookie, used(Uuid::now_v7(), 600)).await
        == SessionOpening::Opened
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
async fn a_challenge_opens_one_session_until_its_record_expires() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let link = secret(15);
    let hana = invite(&store, "hana", OperatorRole::Approver, &link).await;
    store
        .enroll(link.hash(), passkey(1), None)
        .await
        .expect("enrolled");
    let challenge = Uuid::now_v7();
    assert_eq!(
        open_answering(&store, hana.id, &secret(16), used(challenge, 600)).await,
        SessionOpening::Opened
    );
    assert_eq!(
        open_answering(&store, hana.id, &secret(17), used(challenge, 600)).await,
        SessionOpening::ChallengeUsed,
        "a second answer to one challenge"
    );
    assert_eq!(
        store
            .session(secret(17).hash(), SESSION_IDLE_TIMEOUT, true)
            .await
            .expect("read"),
        None,
        "nothing opened by the replay"
    );
    // Records past their time go as new challenges are used: the table holds the live ones.
    let stale = Uuid::now_v7();
    assert_eq!(
        open_answering(&store, hana.id, &secret(18), used(stale, -1)).await,
        SessionOpening::Opened
    );
    assert_eq!(
        open_answering(&store, hana.id, &secret(19), used(Uuid::now_v7(), 600)).await,
        SessionOpening::Opened
    );
    let kept: Vec<Uuid> = diesel::sql_query("SELECT id FROM console_used_challenges")
        .load::<KeptChallenge>(&mut database.connection().await)
        .await
        .expect("read")
        .into_iter()
        .map(|row| row.id)
        .collect();
    assert!(
        kept.contains(&challenge) && !kept.contains(&stale),
        "{kept:?}"
    );
}

#[derive(diesel::QueryableByName)]
struct KeptChallenge {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: Uuid,
}

/// A failed sign-in of `operator`'s passkey, from `address`.
fn failure(operator: &str, address: &str) -> FailedSignIn {
    FailedSignIn {
        actor: Actor {
            operator: Operator::Named(name(operator)),
            address: Some(address.to_owned()),
        },
        reason: "the passkey's signature counter went backwards".to_owned(),
    }
}

#[tokio::test]
async fn failed_sign_ins_hold_back_their_own_passkey_and_no_other_and_each_is_audited() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let limit = RateLimit {
        per_minute: 1,
        burst: 2,
    };
    let (guessed, other) = (b"alice's credential".as_slice(), b"bob's".as_slice());
    assert_eq!(
        store.failed_sign_ins(guessed, limit).await.expect("read"),
        RateDecision::Allowed,
        "a passkey that never failed"
    );
    for _ in 0..2 {
        store
            .count_failed_sign_in(guessed, limit, failure("alice", "203.0.113.9"))
            .await
            .expect("counted");
        assert_eq!(
            store.failed_sign_ins(other, limit).await.expect("read"),
            RateDecision::Allowed
        );
    }
    assert!(matches!(
        store.failed_sign_ins(guessed, limit).await.expect("read"),
        RateDecision::Limited { .. }
    ));
    // Reading a bucket takes nothing from it: a full one stays full however often it is read.
    store
        .count_failed_sign_in(other, limit, failure("bob", "203.0.113.9"))
        .await
        .expect("counted");
    for _ in 0..5 {
        assert_eq!(
            store.failed_sign_ins(other, limit).await.expect("read"),
            RateDecision::Allowed
        );
    }
    let rows = store
        .audit(AuditPage {
            before: None,
            target: None,
            limit: 10,
        })
        .await
        .expect("audit");
    let failed: Vec<_> = rows
        .iter()
        .map(|(_, row)| (row.action, row.operator.as_str(), row.target.as_deref()))
        .collect();
    assert_eq!(
        failed,
        [
            (
                AuditAction::LoginFailed,
                "operator:bob",
                Some("operator:bob")
            ),
            (
                AuditAction::LoginFailed,
                "operator:alice",
                Some("operator:alice")
            ),
            (
                AuditAction::LoginFailed,
                "operator:alice",
                Some("operator:alice")
            ),
        ]
    );
    let (_, newest) = &rows[0];
    assert_eq!(newest.address.as_deref(), Some("203.0.113.9"));
    assert!(newest
        .reason
        .as_deref()
        .is_some_and(|reason| reason.contains("counter went backwards")));
}

#[tokio::test]
async fn a_token_is_issued_by_its_operator_replaced_revoked_and_proves_only_an_active_one() {
    let database = TestDatabase::new().await;
    let store = store(&database).await;
    let ivy = invite(&store, "ivy", OperatorRole::Approver, &secret(20)).await;
    let herself = Actor {
        operator: ivy.principal(),
        address: Some("198.51.100.4".into()),
    };
    let (first, second) = (secret(21), secret(22));
    assert_eq!(store.token_of(ivy.id).await.expect("read"), None);
    assert!(store
        .issue_token(ivy.id, first.hash(), &herself)
        .await
        .expect("issued"));
    assert!(matches!(
        store.token_of(ivy.id).await.expect("read"),
        Some(TokenRecord {
            last_used_at: None,
            ..
        })
    ));
    let proven = store
        .use_token(first.hash(), Some("intent:x".into()))
        .await
        .expect("read");
    assert_eq!(proven.map(|account| account.id), Some(ivy.id));
    assert!(store
        .token_of(ivy.id)
        .await
        .expect("read")
        .is_some_and(|live| live.last_used_at.is_some()));
    // A new token replaces the one before.
    assert!(store
        .issue_token(ivy.id, second.hash(), &herself)
        .await
        .expect("issued"));
    assert_eq!(
        store.use_token(first.hash(), None).await.expect("read"),
        None,
        "the replaced token"
    );
    assert_eq!(
        store
            .revoke_token(&name("ivy"), &cli())
            .await
            .expect("revoked"),
        Some(true)
    );
    assert_eq!(
        store
            .revoke_token(&name("ivy"), &cli())
            .await
            .expect("read"),
        Some(false),
        "nothing left to revoke: nothing audited"
    );
    assert_eq!(
        store
            .revoke_token(&name("nobody"), &cli())
            .await
            .expect("read"),
        None
    );
    assert_eq!(
        store.use_token(second.hash(), None).await.expect("read"),
        None
    );
    // A disabled operator's token proves nobody, and they are issued none.
    let third = secret(23);
    assert!(store
        .issue_token(ivy.id, third.hash(), &herself)
        .await
        .expect("issued"));
    store.disable(&name("ivy"), &cli()).await.expect("disabled");
    assert_eq!(
        store.use_token(third.hash(), None).await.expect("read"),
        None
    );
    assert!(!store
        .issue_token(ivy.id, secret(24).hash(), &herself)
        .await
        .expect("read"));
    let ivys = || "operator:ivy".to_owned();
    let tokens: Vec<_> = audited(&store)
        .await
        .into_iter()
        .filter(|(action, _, _)| action.as_str().starts_with("token_"))
        .collect();
    assert_eq!(
        tokens,
        [
            (AuditAction::TokenIssue, ivys(), Some(ivys())),
            (AuditAction::TokenUse, ivys(), Some("intent:x".into())),
            (AuditAction::TokenIssue, ivys(), Some(ivys())),
            (
                AuditAction::TokenRevoke,
                "cli:root-shell".into(),
                Some(ivys())
            ),
            (AuditAction::TokenIssue, ivys(), Some(ivys())),
        ]
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
