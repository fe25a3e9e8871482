//! Rate limits shared by every server instance.

use async_trait::async_trait;
use domain::{AgentId, RateDecision, RateLimit};

use crate::StoreError;

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RateLimiter: Send + Sync {
    /// Takes one request of `action` from the agent's bucket, if it holds one.
    async fn take(
        &self,
        agent: AgentId,
        action: &'static str,
        limit: RateLimit,
    ) -> Result<RateDecision, StoreError>;
}
