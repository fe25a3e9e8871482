//! Store tests against real PostgreSQL: each test has a database of its own.

mod agents;
mod barrier;
mod distribution;
mod email;
mod events;
mod failover;
mod intents;
mod migrations;
mod operators;
mod sandbox_chain;
mod sms;
mod tls;
mod wallet_keys;

/// The operator the tests act as, on the control plane's host.
pub fn actor() -> domain::Actor {
    domain::Actor::local(domain::Operator::Cli { user: None })
}

/// The audit log of `database`, oldest first: every row, or only those about `target`.
pub async fn audit_log(
    database: &test_support::TestDatabase,
    target: Option<domain::AuditTarget<'_>>,
) -> Vec<domain::AuditRecord> {
    let operators = postgres_store::PgOperatorStore::new(
        postgres_store::Database::connect(
            &database.connector(),
            postgres_store::PoolSettings::default(),
        )
        .expect("pool"),
    );
    let mut rows = ports::AuditLog::audit(
        &operators,
        ports::AuditPage {
            before: None,
            target: target.map(|target| target.to_string()),
            limit: 100,
        },
    )
    .await
    .expect("audit log read");
    rows.reverse();
    rows.into_iter().map(|(_, row)| row).collect()
}
