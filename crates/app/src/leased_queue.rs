//! The worker side of every leased queue (decision 0052): claim the oldest due job under a lease
//! the worker names, attempt it, record the outcome under that lease. A transient failure keeps
//! the job queued with a growing, spread wait (never shorter than the far side's `Retry-After`),
//! a refusal fails it with the reason. What the store could not take (a claim whose answer was
//! lost, an outcome not recorded) is owed, and settled before anything new is claimed, so an
//! outage neither holds a job for a whole lease nor attempts it again.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use domain::{LeaseId, RetryRule};
use ports::{Claimed, DeliveryError, JobOutcome, LeasedJob, LeasedQueue, StoreError};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    /// How long a claim keeps other workers off a job. Longer than an attempt's timeout, so an
    /// attempt in progress is never started twice.
    pub lease: Duration,
    pub retry: RetryRule,
}

/// What became of one claimed job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOff {
    Sent,
    /// Kept queued, due again after the wait.
    Retrying(Duration),
    Failed,
    /// The lease passed to another worker before the outcome was recorded.
    LeaseLost,
}

/// One attempt at a job: the hand-off of a message to its provider, a webhook's POST.
#[async_trait]
pub trait Deliver<J: LeasedJob>: Send + Sync {
    async fn deliver(&self, job: &J) -> Result<J::Done, DeliveryError>;
}

/// What a worker owes the store after it refused: settled, oldest first, before anything new is
/// claimed. Every leased queue's worker keeps one (the outbox's, the executor's).
pub(crate) struct Owed<T>(Mutex<Vec<T>>);

impl<T> Default for Owed<T> {
    fn default() -> Self {
        Self(Mutex::default())
    }
}

impl<T: Clone> Owed<T> {
    fn lock(&self) -> MutexGuard<'_, Vec<T>> {
        // The list stays whole whatever panicked while it was held.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn push(&self, owed: T) {
        self.lock().push(owed);
    }

    /// Settles each debt with `settle`; at the first the store refuses, keeps it and the rest
    /// and returns the refusal.
    pub(crate) async fn settle<F, Settled>(&self, mut settle: F) -> Result<(), StoreError>
    where
        F: FnMut(T) -> Settled,
        Settled: Future<Output = Result<(), StoreError>>,
    {
        let mut pending = std::mem::take(&mut *self.lock()).into_iter();
        while let Some(owed) = pending.next() {
            if let Err(error) = settle(owed.clone()).await {
                self.lock().extend(std::iter::once(owed).chain(pending));
                return Err(error);
            }
        }
        Ok(())
    }
}

/// Work the store refused while it was unreachable.
enum Unsettled<J: LeasedJob> {
    /// A claim whose answer never came: it may hold a job, which is given back.
    Claim(LeaseId),
    /// An attempt that happened but is not recorded; its lease still keeps others off it.
    Outcome {
        id: J::Id,
        lease: LeaseId,
        outcome: JobOutcome<J::Done>,
    },
}

// By hand: a derive would ask for `J: Clone`, which only the job's id and outcome need.
impl<J: LeasedJob> Clone for Unsettled<J> {
    fn clone(&self) -> Self {
        match self {
            Self::Claim(lease) => Self::Claim(*lease),
            Self::Outcome { id, lease, outcome } => Self::Outcome {
                id: *id,
                lease: *lease,
                outcome: outcome.clone(),
            },
        }
    }
}

fn hand_off<D>(outcome: &JobOutcome<D>) -> HandOff {
    match outcome {
        JobOutcome::Done(_) => HandOff::Sent,
        JobOutcome::Retry { wait, .. } => HandOff::Retrying(*wait),
        JobOutcome::Failed(_) => HandOff::Failed,
    }
}

/// A spread from -1 to 1 for a retry's wait.
fn random_spread() -> f64 {
    rand::random::<f64>() * 2.0 - 1.0
}

pub struct LeasedWorker<J: LeasedJob> {
    queue: Arc<dyn LeasedQueue<J>>,
    deliver: Arc<dyn Deliver<J>>,
    settings: QueueSettings,
    unsettled: Owed<Unsettled<J>>,
}

impl<J: LeasedJob> LeasedWorker<J> {
    pub fn new(
        queue: Arc<dyn LeasedQueue<J>>,
        deliver: Arc<dyn Deliver<J>>,
        settings: QueueSettings,
    ) -> Self {
        Self {
            queue,
            deliver,
            settings,
            unsettled: Owed::default(),
        }
    }

    /// Attempts the oldest due job; `None` when none is due.
    pub async fn work_next(&self) -> Result<Option<HandOff>, StoreError> {
        self.unsettled
            .settle(|unsettled| async move {
                match unsettled {
                    Unsettled::Claim(lease) => self.queue.release(lease).await,
                    Unsettled::Outcome { id, lease, outcome } => {
                        self.record(id, lease, &outcome).await.map(drop)
                    }
                }
            })
            .await?;
        let lease = LeaseId(Uuid::now_v7());
        let claimed = match self.queue.claim_due(lease, self.settings.lease).await {
            Ok(Some(claimed)) => claimed,
            Ok(None) => return Ok(None),
            Err(error) => {
                // The claim may have been committed with its answer lost.
                self.unsettled.push(Unsettled::Claim(lease));
                return Err(error);
            }
        };
        self.attempt(claimed).await.map(Some)
    }

    /// Records `outcome` under `lease`; `LeaseLost` when the lease passed to another worker.
    async fn record(
        &self,
        id: J::Id,
        lease: LeaseId,
        outcome: &JobOutcome<J::Done>,
    ) -> Result<HandOff, StoreError> {
        if self.queue.record(id, lease, outcome).await? {
            return Ok(hand_off(outcome));
        }
        tracing::warn!(job_id = %id, "lease lost before the outcome was recorded");
        Ok(HandOff::LeaseLost)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(job_id = %claimed.job.id(), attempt = claimed.attempts))]
    async fn attempt(&self, claimed: Claimed<J>) -> Result<HandOff, StoreError> {
        let Claimed {
            job,
            lease,
            attempts,
            age,
        } = claimed;
        let id = job.id();
        let outcome = match self.deliver.deliver(&job).await {
            Ok(done) => JobOutcome::Done(done),
            Err(DeliveryError::Transient {
                reason,
                retry_after,
            }) => {
                let retry = self.settings.retry;
                match retry.after_transient(attempts, age, retry_after, random_spread()) {
                    Some(wait) => {
                        tracing::warn!(job_id = %id, attempts, error = %reason, retry_in = ?wait, "the far side is unavailable; the job stays queued");
                        JobOutcome::Retry {
                            error: reason,
                            wait,
                        }
                    }
                    None => {
                        let reason = format!(
                            "gave up after {attempts} attempts over {}s: {reason}",
                            age.as_secs()
                        );
                        tracing::warn!(job_id = %id, %reason, "job failed");
                        JobOutcome::Failed(reason)
                    }
                }
            }
            Err(DeliveryError::Refused(reason)) => {
                tracing::warn!(job_id = %id, %reason, "the far side refused the job");
                JobOutcome::Failed(reason)
            }
        };
        self.record(id, lease, &outcome).await.inspect_err(|error| {
            tracing::warn!(job_id = %id, %error, "recording the attempt failed; it is recorded at the next round");
            self.unsettled
                .push(Unsettled::Outcome { id, lease, outcome });
        })
    }

    /// How long the oldest due job has waited; zero when none is due.
    pub async fn queue_lag(&self) -> Result<Duration, StoreError> {
        Ok(self.queue.oldest_due_wait().await?.unwrap_or_default())
    }
}
