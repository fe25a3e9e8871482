//! The connection pool and the database health port.

use std::time::Duration;

use async_trait::async_trait;
use deadpool::Runtime;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::scoped_futures::ScopedBoxFuture;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures_util::FutureExt;
use ports::{DatabaseHealth, PoolUsage, StoreError};

use crate::connector::Connector;
use crate::errors::{from_diesel, from_pool, TxError};

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
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_size: 16,
            acquire_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(10),
            lock_timeout: Duration::from_secs(2),
        }
    }
}

/// A pool of connections to one PostgreSQL database. Cheap to clone.
#[derive(Clone)]
pub struct Database {
    pool: Pool<AsyncPgConnection>,
}

impl Database {
    /// Builds the pool; connections open lazily, so this succeeds while the database is down.
    pub fn connect(connector: &Connector, settings: PoolSettings) -> anyhow::Result<Self> {
        let timeouts = format!(
            "SET statement_timeout = {}; SET lock_timeout = {}",
            settings.statement_timeout.as_millis(),
            settings.lock_timeout.as_millis()
        );
        let mut config = ManagerConfig::default();
        // No `SELECT 1` on every checkout (the default, `Verified`): it doubled the round trips
        // of a one-query request (decision 0031). A connection found broken by a query is marked
        // so and dropped when returned; a dead one costs that one request a 503.
        config.recycling_method = RecyclingMethod::Fast;
        let connector = connector.clone();
        // Connections open through the connector, with its TLS; the manager's URL goes unused.
        config.custom_setup = Box::new(move |_unused_url| {
            let connector = connector.clone();
            let timeouts = timeouts.clone();
            async move {
                let mut connection = connector.open().await?;
                connection
                    .batch_execute(&timeouts)
                    .await
                    .map_err(|error| diesel::ConnectionError::BadConnection(error.to_string()))?;
                Ok(connection)
            }
            .boxed()
        });
        let manager =
            AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config("", config);
        let pool = Pool::builder(manager)
            .max_size(settings.max_size)
            .wait_timeout(Some(settings.acquire_timeout))
            .create_timeout(Some(settings.acquire_timeout))
            .recycle_timeout(Some(settings.acquire_timeout))
            .runtime(Runtime::Tokio1)
            .build()?;
        Ok(Self { pool })
    }

    pub(crate) async fn connection(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        self.pool.get().await.map_err(from_pool)
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
        let mut pooled = self.connection().await?;
        let connection: &mut AsyncPgConnection = &mut pooled;
        connection
            .transaction::<R, TxError<E>, _>(work)
            .await
            .map_err(TxError::into_error)
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
        let status = self.pool.status();
        PoolUsage {
            max_size: status.max_size,
            open: status.size,
            idle: status.available,
            waiting: status.waiting,
        }
    }
}
