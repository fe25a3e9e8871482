//! Migrations embedded in the binaries, applied under an advisory lock so that several
//! instances starting at once migrate exactly once.

use anyhow::Context;
use diesel::RunQueryDsl;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::AsyncPgConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::connector::Connector;

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

/// Arbitrary but fixed key of the advisory lock that serialises migration runs.
const MIGRATION_LOCK_KEY: i64 = 0x6167_656e_7472_756e;

/// Changes whenever a migration is added, so tests can tell whether a migrated template is current.
pub const MIGRATIONS_FINGERPRINT: &str = env!("MIGRATIONS_FINGERPRINT");

/// Applies every pending migration and returns the versions it applied.
pub async fn run_migrations(connector: &Connector) -> anyhow::Result<Vec<String>> {
    let connection = connector
        .open()
        .await
        .context("connecting to the database to migrate it")?;
    // diesel's migration harness is synchronous: it runs on a blocking thread, through a wrapper
    // that waits on the async connection.
    tokio::task::spawn_blocking(move || {
        let mut connection = AsyncConnectionWrapper::<AsyncPgConnection>::from(connection);
        diesel::sql_query(format!("SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})"))
            .execute(&mut connection)
            .context("taking the migration lock")?;
        let applied = connection
            .run_pending_migrations(MIGRATIONS)
            .map(|versions| versions.iter().map(ToString::to_string).collect())
            .map_err(|error| anyhow::anyhow!("applying migrations: {error}"));
        diesel::sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})"))
            .execute(&mut connection)
            .context("releasing the migration lock")?;
        applied
    })
    .await
    .context("migration task panicked")?
}
