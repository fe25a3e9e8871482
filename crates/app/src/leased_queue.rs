//! The worker side of every leased queue (decision 0052): claim the next due job under a lease
//! the worker names, attempt it, record the outcome under that lease. Where jobs have owners
//! (webhook deliveries, their agents), an owner's jobs hold at most `places_per_owner` of the
//! worker's attempts at once, and claims pass over owners holding them all (decision 0073). A transient failure keeps
//! the job queued with a growing, spread wait (never shorter than the far side's `Retry-After`),
//! a refusal fails it with the reason. What the store could not take (a claim whose answer was
//! lost, an outcome not recorded) is owed, and settled before anything new is claimed, so an
//! outage neither holds a job for a whole lease nor attempts it again.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use domain::{LeaseId, RetryRule};
use futures_util::lock::Mutex as AsyncMutex;
use ports::{Claimed, DeliveryError, JobOutcome, LeasedJob, LeasedQueue, StoreError};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    /// How long a claim keeps other workers off a job. Longer than an attempt's timeout, so an
    /// attempt in progress is never started twice.
    pub lease: Duration,
    pub retry: RetryRule,
    /// How many of the worker's attempts at once may be one owner's jobs (a webhook delivery's
    /// agent); `None`: no bound.
    pub places_per_owner: Option<usize>,
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

/// The attempts each owner's jobs hold on one worker, at most `per_owner` at once. Claims are
/// made one at a time while the bound is kept: two claims under way could otherwise both take
/// an owner's last place.
struct OwnerPlaces<O> {
    per_owner: usize,
    held: Mutex<HashMap<O, usize>>,
    claiming: AsyncMutex<()>,
}

impl<O: Copy + Eq + std::hash::Hash> OwnerPlaces<O> {
    fn held(&self) -> MutexGuard<'_, HashMap<O, usize>> {
        // The counts stay whole whatever panicked while they were held.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The owners holding every place they may.
    fn full(&self) -> Vec<O> {
        self.held()
            .iter()
            .filter(|(_, held)| **held >= self.per_owner)
            .map(|(owner, _)| *owner)
            .collect()
    }
}

/// One place of `owner`, given back when dropped (the attempt recorded, or abandoned).
struct OwnerPlace<O: Copy + Eq + std::hash::Hash> {
    places: Arc<OwnerPlaces<O>>,
    owner: O,
}

impl<O: Copy + Eq + std::hash::Hash> OwnerPlace<O> {
    fn take(places: &Arc<OwnerPlaces<O>>, owner: O) -> Self {
        *places.held().entry(owner).or_default() += 1;
        Self {
            places: Arc::clone(places),
            owner,
        }
    }
}

impl<O: Copy + Eq + std::hash::Hash> Drop for OwnerPlace<O> {
    fn drop(&mut self) {
        let mut held = self.places.held();
        if let Some(count) = held.get_mut(&self.owner) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.owner);
            }
        }
    }
}

pub struct LeasedWorker<J: LeasedJob> {
    queue: Arc<dyn LeasedQueue<J>>,
    deliver: Arc<dyn Deliver<J>>,
    settings: QueueSettings,
    unsettled: Owed<Unsettled<J>>,
    places: Option<Arc<OwnerPlaces<J::Owner>>>,
}

impl<J: LeasedJob> LeasedWorker<J> {
    pub fn new(
        queue: Arc<dyn LeasedQueue<J>>,
        deliver: Arc<dyn Deliver<J>>,
        settings: QueueSettings,
    ) -> Self {
        let places = settings.places_per_owner.map(|per_owner| {
            Arc::new(OwnerPlaces {
                per_owner,
                held: Mutex::default(),
                claiming: AsyncMutex::new(()),
            })
        });
        Self {
            queue,
            deliver,
            settings,
            unsettled: Owed::default(),
            places,
        }
    }

    /// Attempts the next due job of an owner with a place free; `None` when none is due.
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
        let (claimed, _place) = match &self.places {
            None => (self.claim(lease, &[]).await?, None),
            Some(places) => {
                let _claiming = places.claiming.lock().await;
                let claimed = self.claim(lease, &places.full()).await?;
                let place = claimed
                    .as_ref()
                    .and_then(|claimed| claimed.job.owner())
                    .map(|owner| OwnerPlace::take(places, owner));
                (claimed, place)
            }
        };
        match claimed {
            Some(claimed) => self.attempt(claimed).await.map(Some),
            None => Ok(None),
        }
    }

    /// Claims under `lease` a job of an owner not in `full`; a claim whose answer was lost is
    /// owed back.
    async fn claim(
        &self,
        lease: LeaseId,
        full: &[J::Owner],
    ) -> Result<Option<Claimed<J>>, StoreError> {
        self.queue
            .claim_due(lease, self.settings.lease, full)
            .await
            .inspect_err(|_| {
                // The claim may have been committed with its answer lost.
                self.unsettled.push(Unsettled::Claim(lease));
            })
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

#[cfg(test)]
mod tests {
    use std::fmt;
    use std::sync::atomic::{AtomicU32, Ordering};

    use domain::RetryOffsets;
    use ports::MockLeasedQueue;
    use tokio::sync::Semaphore;

    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct JobId(u32);

    impl fmt::Display for JobId {
        fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(formatter, "job-{}", self.0)
        }
    }

    /// A job of an owner, as a webhook delivery is its agent's.
    #[derive(Debug)]
    struct OwnedJob {
        id: JobId,
        owner: char,
    }

    impl LeasedJob for OwnedJob {
        type Id = JobId;
        type Done = ();
        type Owner = char;
        const QUEUED_TOPIC: &'static str = "owned-jobs";

        fn id(&self) -> JobId {
            self.id
        }

        fn owner(&self) -> Option<char> {
            Some(self.owner)
        }
    }

    /// Attempts that last until the test lets one finish, as receivers that hang.
    struct Held(Arc<Semaphore>);

    #[async_trait]
    impl Deliver<OwnedJob> for Held {
        async fn deliver(&self, _: &OwnedJob) -> Result<(), DeliveryError> {
            self.0.acquire().await.expect("open").forget();
            Ok(())
        }
    }

    #[tokio::test]
    async fn an_owner_holding_its_places_is_passed_over_until_an_attempt_of_its_ends() {
        let numbers = Arc::new(AtomicU32::new(0));
        let claims_seen: Arc<Mutex<Vec<Vec<char>>>> = Arc::default();
        let mut queue = MockLeasedQueue::<OwnedJob>::new();
        let (seen, next) = (claims_seen.clone(), numbers.clone());
        // The queue holds jobs of `a` only; it answers a claim that passes over `a` with none.
        queue.expect_claim_due().returning(move |lease, _, full| {
            seen.lock().expect("seen").push(full.to_vec());
            if full.contains(&'a') {
                return Ok(None);
            }
            Ok(Some(Claimed {
                job: OwnedJob {
                    id: JobId(next.fetch_add(1, Ordering::SeqCst)),
                    owner: 'a',
                },
                lease,
                attempts: 1,
                age: Duration::ZERO,
            }))
        });
        queue.expect_record().returning(|_, _, _| Ok(true));
        let finish = Arc::new(Semaphore::new(0));
        let worker = Arc::new(LeasedWorker::new(
            Arc::new(queue),
            Arc::new(Held(finish.clone())),
            QueueSettings {
                lease: Duration::from_secs(60),
                retry: RetryRule::AtOffsets(RetryOffsets::parse("0,1").expect("offsets")),
                places_per_owner: Some(2),
            },
        ));
        let attempt = || {
            let worker = worker.clone();
            tokio::spawn(async move { worker.work_next().await })
        };
        let first = attempt();
        let second = attempt();
        while numbers.load(Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await;
        }
        // `a` holds both its places: the next claim passes over it and finds nothing (instead
        // of taking a third job of `a`, whose attempt would hang).
        let passed_over = tokio::time::timeout(Duration::from_secs(5), worker.work_next()).await;
        assert_eq!(passed_over, Ok(Ok(None)));
        assert_eq!(claims_seen.lock().expect("seen").last(), Some(&vec!['a']));
        finish.add_permits(1);
        let ended = tokio::select! {
            ended = first => ended,
            ended = second => ended,
        };
        assert_eq!(ended.expect("joined"), Ok(Some(HandOff::Sent)));
        // One place of `a` is free again: the claim asks for its jobs too.
        let third = attempt();
        while numbers.load(Ordering::SeqCst) < 3 {
            tokio::task::yield_now().await;
        }
        assert_eq!(claims_seen.lock().expect("seen").last(), Some(&Vec::new()));
        finish.add_permits(2);
        assert_eq!(third.await.expect("joined"), Ok(Some(HandOff::Sent)));
    }
}
