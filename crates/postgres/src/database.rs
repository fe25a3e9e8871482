//! The connection pool and the database health port.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;

use async_trait::async_trait;
use deadpool::managed::TimeoutType::Create;
use deadpool::managed::{Hook, HookError};
use deadpool::Runtime;
use diesel_async::pooled_connection::deadpool::{Object, Pool, PoolError};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::scoped_futures::ScopedBoxFuture;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures_util::FutureExt;
use ports::{DatabaseHealth, PoolUsage, StoreError};

use crate::connector::Connector;
use crate::errors::{from_diesel, from_pool, refused_as_standby, TxError};

#[derive(Debug, Clone, Copy)]
pub struct PoolSettings {
    pub max_size: usize,
    /// How long a request waits for a free connection, and for a new one to open, before the
    /// database is reported unavailable.
    pub acquire_timeout: Duration,
    /// The longest any statement may run (`statement_timeout` of every connection).
    pub statement_timeout: Duration,
    /// The longest a statement may wait for a row lock (`lock_timeout`), e.g. a send for its
    /// wallet's lock; after it the operation answers "busy".
    pub lock_timeout: Duration,
    /// Pools the connections are split into: each thread draws from one, so a connection's IO
    /// runs on the thread of the requests that use it (decision 0035). One per HTTP worker.
    pub shards: usize,
    /// A connection this old is closed, not reused, when next drawn from the pool. PostgreSQL keeps a
    /// connection's plans of prepared statements for its life, made for the tables as they were
    /// then (decision 0039): a fresh connection plans for them as they are.
    pub max_connection_age: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_size: 16,
            acquire_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(10),
            lock_timeout: Duration::from_secs(2),
            shards: 1,
            max_connection_age: Duration::from_secs(30 * 60),
        }
    }
}

/// Pools of connections to one PostgreSQL database. Cheap to clone.
#[derive(Clone)]
pub struct Database {
    shards: Arc<[Pool<AsyncPgConnection>]>,
    /// Whose connections end when a write finds their node turned standby.
    connector: Connector,
    /// Connections to a standby of a formation (a URL of several hosts asking for the primary),
    /// for the reads served while no node takes writes (decision 0097).
    standby: Option<Pool<AsyncPgConnection>>,
}

/// Connections to a standby: a few reads at a time while no node takes writes.
const STANDBY_CONNECTIONS: usize = 4;

/// A pool of `size` connections through `connector`, `timeouts` set on each.
fn pool(
    connector: &Connector,
    timeouts: &str,
    size: usize,
    settings: PoolSettings,
) -> Result<Pool<AsyncPgConnection>, deadpool::managed::BuildError> {
    let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
        "",
        manager_config(connector.clone(), timeouts.to_owned()),
    );
    Pool::builder(manager)
        .max_size(size)
        .wait_timeout(Some(settings.acquire_timeout))
        .create_timeout(Some(settings.acquire_timeout))
        .recycle_timeout(Some(settings.acquire_timeout))
        .pre_recycle({
            let connector = connector.clone();
            Hook::sync_fn(move |_, metrics| {
                if metrics.age() >= settings.max_connection_age {
                    Err(HookError::message("past its maximum age"))
                } else if connector.ended_since(metrics.created) {
                    Err(HookError::message("its node left the primary's place"))
                } else {
                    Ok(())
                }
            })
        })
        .runtime(Runtime::Tokio1)
        .build()
}

/// The shard of the threads that have used a database, handed out in turn.
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD_SHARD: usize = NEXT_SHARD.fetch_add(1, Ordering::Relaxed);
}

/// How every connection is opened, through `connector` with its TLS, and checked: `timeouts`
/// set on it first.
fn manager_config(connector: Connector, timeouts: String) -> ManagerConfig<AsyncPgConnection> {
    let mut config = ManagerConfig::default();
    // No `SELECT 1` on every checkout (the default, `Verified`): it doubled the round trips
    // of a one-query request (decision 0031). A connection found broken by a query is marked
    // so and dropped when returned; a dead one costs that one request a 503.
    config.recycling_method = RecyclingMethod::Fast;
    // The manager's URL goes unused: the connector holds it.
    config.custom_setup = Box::new(move |_unused_url| {
        let connector = connector.clone();
        let timeouts = timeouts.clone();
        async move {
            let mut connection = connector.open().await?;
            connection
                .batch_execute(&timeouts)
                .await
                .map_err(|error| diesel::ConnectionError::BadConnection(error.to_string()))?;
            speak_untranslated(&mut connection)
                .await
                .map_err(|error| diesel::ConnectionError::BadConnection(error.to_string()))?;
            Ok(connection)
        }
        .boxed()
    });
    config
}

/// Whether PostgreSQL's messages in `language`, an `lc_messages` value, are its untranslated
/// words: those of C and POSIX, and English, which has no catalogue of its own.
fn untranslated(language: &str) -> bool {
    let name = language.split(['.', '@']).next().unwrap_or_default();
    matches!(name, "C" | "POSIX" | "en") || name.starts_with("en_")
}

/// `errors::from_diesel` tells a lock timeout, a statement timeout and a server going away by
/// the server's untranslated words, as diesel passes no SQLSTATE on (decision 0048). A session
/// whose server speaks another language is switched to them, where its role may set
/// `lc_messages`; where it may not, the first such session is logged with the remedy.
async fn speak_untranslated(
    connection: &mut AsyncPgConnection,
) -> Result<(), diesel::result::Error> {
    let language: String = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
        "current_setting('lc_messages')",
    ))
    .get_result(connection)
    .await?;
    if untranslated(&language) {
        return Ok(());
    }
    if let Err(refused) = connection.batch_execute("SET lc_messages = 'C'").await {
        static WARNED: Once = Once::new();
        WARNED.call_once(|| {
            tracing::warn!(
                %language,
                error = %refused,
                "the database speaks another language and this role may not change it: lock and \
                 statement timeouts and restarts are reported as failures, not as busy or \
                 unavailable; set the role's lc_messages to 'C' (docs/operations.md)"
            );
        });
    }
    Ok(())
}

impl Database {
    /// Builds the pools; connections open lazily, so this succeeds while the database is down.
    pub fn connect(connector: &Connector, settings: PoolSettings) -> anyhow::Result<Self> {
        let timeouts = format!(
            "SET statement_timeout = {}; SET lock_timeout = {}",
            settings.statement_timeout.as_millis(),
            settings.lock_timeout.as_millis()
        );
        let shards = settings.shards.max(1);
        let per_shard = (settings.max_size / shards).max(1);
        let shards = (0..shards)
            .map(|_| pool(connector, &timeouts, per_shard, settings))
            .collect::<Result<Vec<_>, _>>()?;
        let standby = connector
            .to_a_standby()
            .map(|standby| pool(&standby, &timeouts, STANDBY_CONNECTIONS, settings))
            .transpose()?;
        Ok(Self {
            shards: shards.into(),
            connector: connector.clone(),
            standby,
        })
    }

    pub(crate) async fn connection(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        self.primary().await.map_err(from_pool)
    }

    async fn primary(&self) -> Result<Object<AsyncPgConnection>, PoolError> {
        let shard = THREAD_SHARD.with(|shard| *shard) % self.shards.len();
        self.shards[shard].get().await
    }

    /// A connection for a read that may be answered from a moment ago: the primary's, or, when
    /// no node of a formation can be reached as the primary, a standby's (decision 0097). Not
    /// for reads a write or an outside effect follows: those wait for the primary.
    pub(crate) async fn read_connection(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        match (self.primary().await, &self.standby) {
            (Ok(connection), _) => Ok(connection),
            (
                Err(no_primary @ (PoolError::Backend(_) | PoolError::Timeout(Create))),
                Some(standby),
            ) => standby.get().await.map_err(|_| from_pool(no_primary)),
            (Err(error), _) => Err(from_pool(error)),
        }
    }

    /// Runs `work` in one transaction on a pooled connection. `TxError::Abort(e)` rolls back and
    /// returns `e`; diesel's errors become store errors.
    pub(crate) async fn in_transaction<'a, R, E, F>(&self, work: F) -> Result<R, E>
    where
        F: for<'r> FnOnce(
                &'r mut AsyncPgConnection,
            ) -> ScopedBoxFuture<'a, 'r, Result<R, TxError<E>>>
            + Send
            + 'a,
        E: From<StoreError> + Send + 'a,
        R: Send + 'a,
    {
        let mut lease = TransactionLease(Some(self.connection().await?));
        let outcome = lease
            .connection()
            .transaction::<R, TxError<E>, _>(work)
            .await;
        if let Err(TxError::Diesel(error)) = &outcome {
            if refused_as_standby(error) {
                // Demoted in place: the connections opened to it would refuse every write.
                self.connector
                    .end_open_connections("a write was refused by a node turned standby");
            }
        }
        lease.ended();
        outcome.map_err(TxError::into_error)
    }
}

/// A pooled connection lent to one transaction. A transaction whose future is dropped before it
/// ends (the request of a client that hung up) may have left its connection inside it, holding
/// its row locks: that connection is closed, so PostgreSQL rolls the transaction back at once,
/// rather than given back to the pool, where it would hold them until the pool next handed it out.
struct TransactionLease(Option<Object<AsyncPgConnection>>);

impl TransactionLease {
    fn connection(&mut self) -> &mut AsyncPgConnection {
        self.0
            .as_deref_mut()
            .expect("a lease holds its connection until it ends")
    }

    /// The transaction committed or rolled back: the connection goes back to the pool.
    fn ended(mut self) {
        self.0.take();
    }
}

impl Drop for TransactionLease {
    fn drop(&mut self) {
        if let Some(abandoned) = self.0.take() {
            drop(Object::take(abandoned));
        }
    }
}

#[async_trait]
impl DatabaseHealth for Database {
    async fn ping(&self) -> Result<(), StoreError> {
        let mut connection = self.connection().await?;
        diesel::sql_query("SELECT 1")
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(())
    }

    fn pool_usage(&self) -> PoolUsage {
        self.shards.iter().map(Pool::status).fold(
            PoolUsage {
                max_size: 0,
                open: 0,
                idle: 0,
                waiting: 0,
            },
            |usage, status| PoolUsage {
                max_size: usage.max_size + status.max_size,
                open: usage.open + status.size,
                idle: usage.idle + status.available,
                waiting: usage.waiting + status.waiting,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use test_support::TestDatabase;

    use super::*;
    use diesel_async::scoped_futures::ScopedFutureExt;

    #[test]
    fn the_c_posix_and_english_locales_speak_the_untranslated_words() {
        for language in ["C", "C.UTF-8", "POSIX", "en", "en_US.UTF-8", "en_GB@euro"] {
            assert!(untranslated(language), "{language}");
        }
        // Empty: the language of the server's environment, whatever it is.
        for language in ["", "fr_FR.UTF-8", "ca_ES", "Catalan", "de_DE@euro"] {
            assert!(!untranslated(language), "{language}");
        }
    }

    #[tokio::test]
    async fn a_thread_draws_from_its_own_shard_and_usage_counts_every_shard() {
        let database = TestDatabase::new().await;
        // This crate's own `Connector`: test-support's is of the crate as a dependency.
        let connector = Connector::from_url(database.url()).expect("the test database's URL");
        let sharded = Database::connect(
            &connector,
            PoolSettings {
                max_size: 4,
                shards: 2,
                acquire_timeout: Duration::from_millis(200),
                ..PoolSettings::default()
            },
        )
        .expect("pools");
        let first = sharded.connection().await.expect("a connection");
        let second = sharded.connection().await.expect("a connection");
        assert!(
            matches!(sharded.connection().await, Err(StoreError::Unavailable(_))),
            "this thread's shard holds two of the four connections"
        );
        let usage = sharded.pool_usage();
        assert_eq!(
            (usage.max_size, usage.open, usage.idle),
            (4, 2, 0),
            "usage counts both shards"
        );
        drop((first, second));
        assert_eq!(sharded.pool_usage().idle, 2);
    }

    #[tokio::test]
    async fn a_transaction_dropped_midway_releases_its_locks_at_once() {
        let database = TestDatabase::new().await;
        let connector = Connector::from_url(database.url()).expect("the test database's URL");
        let pool = Database::connect(&connector, PoolSettings::default()).expect("pool");
        let mut other = pool.connection().await.expect("a connection");
        other
            .batch_execute(
                "CREATE TABLE locked (id int PRIMARY KEY); INSERT INTO locked VALUES (1)",
            )
            .await
            .expect("a table");
        let (locked, lock_taken) = tokio::sync::oneshot::channel();
        let holding = pool.in_transaction::<(), StoreError, _>(|connection| {
            async move {
                connection
                    .batch_execute("SELECT id FROM locked WHERE id = 1 FOR UPDATE")
                    .await
                    .map_err(|error| TxError::store(from_diesel(error)))?;
                locked.send(()).expect("the test waits for the lock");
                std::future::pending::<()>().await;
                Ok(())
            }
            .scope_boxed()
        });
        tokio::select! {
            _ = holding => unreachable!("the transaction never ends by itself"),
            taken = lock_taken => taken.expect("the lock was taken"),
        }
        // The transaction's future is gone; its row is free again within the deadline.
        other
            .batch_execute("SET lock_timeout = '100ms'")
            .await
            .expect("a timeout");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while let Err(error) = other
            .batch_execute("SELECT id FROM locked WHERE id = 1 FOR UPDATE")
            .await
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the dropped transaction still holds its lock: {error}"
            );
        }
    }

    #[tokio::test]
    async fn a_write_refused_as_on_a_standby_is_unavailable_and_ends_the_connections_opened() {
        let database = TestDatabase::new().await;
        let connector = Connector::from_url(database.url()).expect("the test database's URL");
        let pool = Database::connect(
            &connector,
            PoolSettings {
                max_size: 2,
                ..PoolSettings::default()
            },
        )
        .expect("pool");
        let before = backend_of(&pool).await;
        // As a node demoted in place answers: the driver reports SQLSTATE 25006 by its kind.
        let refused = pool
            .in_transaction::<(), StoreError, _>(|connection| {
                async move {
                    connection
                        .batch_execute(
                            "SET TRANSACTION READ ONLY; CREATE TABLE never_made (id int)",
                        )
                        .await
                        .map_err(TxError::from)
                }
                .scope_boxed()
            })
            .await;
        assert!(
            matches!(refused, Err(StoreError::Unavailable(_))),
            "a refused write is unavailability, not a failure: {refused:?}"
        );
        assert_ne!(
            backend_of(&pool).await,
            before,
            "the connections opened before the refusal are not reused"
        );
    }

    #[tokio::test]
    async fn reads_are_served_by_a_standby_while_no_node_takes_writes_and_writes_are_unavailable() {
        let database = TestDatabase::new().await;
        let connector = Connector::from_url(&database.formation_url()).expect("a formation's URL");
        let pool = Database::connect(&connector, PoolSettings::default()).expect("pool");
        let primary = backend_of(&pool).await;
        let mut own = database.connection().await;
        // No node takes writes: every session opened from now on is read-only, as on a standby,
        // and the primary's sessions are gone.
        own.batch_execute(&format!(
            "ALTER DATABASE \"{}\" SET default_transaction_read_only = on; \
             SELECT pg_terminate_backend({primary})",
            database.name()
        ))
        .await
        .expect("no primary");
        // The first write finds its pooled session gone, the next no node that takes writes.
        for attempt in ["on the primary's session", "on a new session"] {
            let write = match pool.connection().await {
                Ok(mut connection) => connection
                    .batch_execute("CREATE TABLE never_made (id int)")
                    .await
                    .map_err(from_diesel),
                Err(error) => Err(error),
            };
            assert!(
                matches!(write, Err(StoreError::Unavailable(_))),
                "no primary to write on, {attempt}: {write:?}"
            );
        }

        let mut standby = pool
            .read_connection()
            .await
            .expect("a standby's connection");
        let read_only: String = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
            "current_setting('transaction_read_only')",
        ))
        .get_result(&mut *standby)
        .await
        .expect("a read served");
        assert_eq!(read_only, "on", "served by a read-only session");
        let write = standby
            .batch_execute("CREATE TABLE never_made (id int)")
            .await
            .map_err(from_diesel);
        assert!(
            matches!(write, Err(StoreError::Unavailable(_))),
            "a write on the standby is unavailability: {write:?}"
        );
        drop(standby);

        own.batch_execute(&format!(
            "ALTER DATABASE \"{}\" RESET default_transaction_read_only",
            database.name()
        ))
        .await
        .expect("a primary again");
        pool.connection()
            .await
            .expect("a primary's connection")
            .batch_execute("CREATE TABLE made_again (id int)")
            .await
            .expect("writes go to the primary again");
    }

    #[test]
    fn only_a_formations_url_asking_for_the_primary_has_a_standby_to_read_from() {
        let one = "postgres://u@127.0.0.1:5432/db?target_session_attrs=read-write";
        let any = "postgres://u@127.0.0.1:5432,127.0.0.1:5433/db";
        let formation =
            "postgres://u@127.0.0.1:5432,127.0.0.1:5433/db?target_session_attrs=read-write";
        for (url, standby) in [(one, false), (any, false), (formation, true)] {
            let connector = Connector::from_url(url).expect("a URL");
            assert_eq!(connector.to_a_standby().is_some(), standby, "{url}");
        }
    }

    async fn backend_of(database: &Database) -> i32 {
        diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
            "pg_backend_pid()",
        ))
        .get_result(&mut database.connection().await.expect("a connection"))
        .await
        .expect("the backend's pid")
    }

    #[tokio::test]
    async fn a_connection_is_reused_until_it_reaches_its_maximum_age() {
        let database = TestDatabase::new().await;
        let connector = Connector::from_url(database.url()).expect("the test database's URL");
        let pool = |max_connection_age| {
            Database::connect(
                &connector,
                PoolSettings {
                    max_size: 1,
                    max_connection_age,
                    ..PoolSettings::default()
                },
            )
            .expect("pool")
        };
        let young = pool(Duration::from_secs(3600));
        assert_eq!(backend_of(&young).await, backend_of(&young).await);
        let aged = pool(Duration::ZERO);
        assert_ne!(
            backend_of(&aged).await,
            backend_of(&aged).await,
            "a connection past its age is replaced by a new one"
        );
    }
}
