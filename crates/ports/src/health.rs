//! Health of the database, for readiness probes and metrics.

use async_trait::async_trait;

use crate::StoreError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUsage {
    pub max_size: usize,
    pub open: usize,
    pub idle: usize,
    pub waiting: usize,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait DatabaseHealth: Send + Sync {
    /// Succeeds when a round trip to the database works.
    async fn ping(&self) -> Result<(), StoreError>;

    fn pool_usage(&self) -> PoolUsage;
}
