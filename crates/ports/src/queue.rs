//! A leased queue: work that workers on any number of instances take one item at a time, each
//! under a lease the worker names itself, and whose outcome is recorded only while that lease
//! holds (decision 0052). Outbound mail and webhook deliveries are its jobs.

use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::time::Duration;

use async_trait::async_trait;
use domain::LeaseId;

use crate::StoreError;

/// What a leased queue holds.
pub trait LeasedJob: Debug + Send + Sync + 'static {
    /// What the queue knows a job by.
    type Id: Copy + Debug + Display + PartialEq + Send + Sync + 'static;
    /// What a job that was done leaves to record, e.g. the provider's id of a message.
    type Done: Clone + Debug + Send + Sync + 'static;
    /// Whose the job is, when jobs share a worker's places by owner (a webhook delivery's
    /// agent); `Infallible` for a queue whose jobs have none.
    type Owner: Copy + Debug + Eq + Hash + Send + Sync + 'static;

    /// The notification topic published when a job is queued, on whatever instance: it wakes
    /// the queue's workers at once.
    const QUEUED_TOPIC: &'static str;

    fn id(&self) -> Self::Id;

    /// The job's owner; `None` when jobs of the queue have none.
    fn owner(&self) -> Option<Self::Owner>;
}

/// A job claimed for one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed<J> {
    pub job: J,
    pub lease: LeaseId,
    /// Attempts so far, this one included.
    pub attempts: u32,
    /// How long ago the job was queued; for a queue whose retries count from the first attempt
    /// (webhook deliveries), since that attempt.
    pub age: Duration,
}

/// How an attempt at a job went, as the one who does the work tells it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// The far side could not be reached, or asked to come back later: try again, not before
    /// `retry_after` when it named a time (an HTTP `Retry-After`).
    #[error("provider unavailable: {reason}")]
    Transient {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// The far side refused the job and would refuse it again.
    #[error("provider refused the message: {0}")]
    Refused(String),
}

impl DeliveryError {
    /// A transient failure that names no time to come back.
    pub fn transient(reason: impl Into<String>) -> Self {
        Self::Transient {
            reason: reason.into(),
            retry_after: None,
        }
    }
}

/// What the queue records of an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobOutcome<D> {
    Done(D),
    /// Kept queued, due again after `wait`.
    Retry {
        error: String,
        wait: Duration,
    },
    Failed(String),
}

/// The store side of a leased queue. Every record is refused (`false`) when the claim's lease
/// has passed to another worker.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait LeasedQueue<J: LeasedJob>: Send + Sync {
    /// The next due job no one holds, of an owner not in `full` (those holding every place
    /// they may on the caller's worker), leased to the caller as `lease` for `lease_for`: the
    /// oldest, or for a queue whose owners take turns (webhook deliveries), the oldest of the
    /// owner whose turn it is. The caller names the lease so that a claim whose answer was lost
    /// can still be given back.
    async fn claim_due(
        &self,
        lease: LeaseId,
        lease_for: Duration,
        full: &[J::Owner],
    ) -> Result<Option<Claimed<J>>, StoreError>;

    /// Gives back the job `lease` holds, if any, due at once; a lease that lapsed or never took
    /// hold changes nothing.
    async fn release(&self, lease: LeaseId) -> Result<(), StoreError>;

    /// Records the outcome of the attempt at job `id` made under `lease`.
    async fn record(
        &self,
        id: J::Id,
        lease: LeaseId,
        outcome: &JobOutcome<J::Done>,
    ) -> Result<bool, StoreError>;

    /// How long the oldest due job has waited; `None` when none is due.
    async fn oldest_due_wait(&self) -> Result<Option<Duration>, StoreError>;
}
