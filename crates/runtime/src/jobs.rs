//! Background jobs under one supervisor: each runs on its own interval until the supervisor is
//! stopped, and then finishes the step in hand (one intent, one batch) before it ends. Every tick
//! runs in a `job` span and is counted in Prometheus.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use app::{
    AttachmentSweep, AuthorizationWatcher, Executor, HandOff, IntentExpiry, LeasedWorker,
    SubmitOutcome,
};
use async_trait::async_trait;
use ports::{EventLog, LeasedJob, Notifications};
use prometheus::{GaugeVec, IntCounterVec, Opts, Registry};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// Work done again and again in the background.
#[async_trait]
pub trait Job: Send + Sync + 'static {
    /// The job's name in logs and metrics.
    fn name(&self) -> &'static str;

    /// One round of work. It checks `stop` between steps and returns once it is cancelled,
    /// leaving no step half done.
    async fn tick(&self, stop: &CancellationToken, metrics: &JobMetrics) -> anyhow::Result<()>;

    /// Once the job is told to stop: waits for the work its rounds handed to tasks of their own
    /// to end. Most jobs do all their work within a round, and have none.
    async fn drain(&self) {}
}

/// What the jobs did, for `/metrics`.
pub struct JobMetrics {
    ticks: IntCounterVec,
    intents: IntCounterVec,
    emails: IntCounterVec,
    webhooks: IntCounterVec,
    events_pruned: IntCounterVec,
    last_success: GaugeVec,
    queue_lag: GaugeVec,
}

impl JobMetrics {
    fn new(registry: &Registry) -> anyhow::Result<Self> {
        let ticks = IntCounterVec::new(
            Opts::new("job_ticks_total", "Background job rounds by job and result"),
            &["job", "result"],
        )?;
        let intents = IntCounterVec::new(
            Opts::new(
                "job_intents_total",
                "Transfer intents handled by background jobs, by job and outcome \
                 (claimed, submitted, released, executed, failed, expired)",
            ),
            &["job", "outcome"],
        )?;
        let emails = IntCounterVec::new(
            Opts::new(
                "job_emails_total",
                "Outbound mail handed to the provider by the outbox, by outcome \
                 (sent, retrying, failed, lease_lost)",
            ),
            &["job", "outcome"],
        )?;
        let webhooks = IntCounterVec::new(
            Opts::new(
                "job_webhook_deliveries_total",
                "Webhook delivery attempts, by outcome (delivered, retrying, failed, lease_lost)",
            ),
            &["job", "outcome"],
        )?;
        let events_pruned = IntCounterVec::new(
            Opts::new(
                "job_events_pruned_total",
                "Events removed once older than EVENT_RETENTION_DAYS",
            ),
            &["job"],
        )?;
        let last_success = GaugeVec::new(
            Opts::new(
                "job_last_success_timestamp_seconds",
                "Unix time at which each job last finished a round without error",
            ),
            &["job"],
        )?;
        let queue_lag = GaugeVec::new(
            Opts::new(
                "job_queue_lag_seconds",
                "How long the oldest item waiting for a job has waited (executor: the oldest \
                 confirmed intent since its confirmation); 0 when none waits",
            ),
            &["job"],
        )?;
        registry.register(Box::new(ticks.clone()))?;
        registry.register(Box::new(intents.clone()))?;
        registry.register(Box::new(emails.clone()))?;
        registry.register(Box::new(webhooks.clone()))?;
        registry.register(Box::new(events_pruned.clone()))?;
        registry.register(Box::new(last_success.clone()))?;
        registry.register(Box::new(queue_lag.clone()))?;
        Ok(Self {
            ticks,
            intents,
            emails,
            webhooks,
            events_pruned,
            last_success,
            queue_lag,
        })
    }

    pub fn count_intents(&self, job: &str, outcome: &str, count: usize) {
        self.intents
            .with_label_values(&[job, outcome])
            .inc_by(u64::try_from(count).unwrap_or(u64::MAX));
    }

    pub fn set_queue_lag(&self, job: &str, lag: Duration) {
        self.queue_lag
            .with_label_values(&[job])
            .set(lag.as_secs_f64());
    }

    fn finished(&self, job: &str, succeeded: bool) {
        let result = if succeeded { "ok" } else { "error" };
        self.ticks.with_label_values(&[job, result]).inc();
        if succeeded {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            self.last_success
                .with_label_values(&[job])
                .set(now.as_secs_f64());
        }
    }
}

/// Runs jobs until told to stop.
pub struct Supervisor {
    stop: CancellationToken,
    metrics: Arc<JobMetrics>,
    running: Vec<(&'static str, JoinHandle<()>)>,
}

impl Supervisor {
    /// A supervisor whose jobs' metrics go to `registry`.
    pub fn new(registry: &Registry) -> anyhow::Result<Self> {
        Ok(Self {
            stop: CancellationToken::new(),
            metrics: Arc::new(JobMetrics::new(registry)?),
            running: Vec::new(),
        })
    }

    /// Runs `job` every `every` (the first round at once) until the supervisor stops. A failed
    /// round is logged and the job goes on at its next round.
    pub fn spawn(&mut self, job: impl Job, every: Duration) {
        self.spawn_woken(job, every, None);
    }

    /// Runs `job` as `spawn` does, and also at once whenever `woken`'s topic is notified on any
    /// instance (a round already running is followed by another).
    pub fn spawn_woken(
        &mut self,
        job: impl Job,
        every: Duration,
        woken: Option<(Arc<dyn Notifications>, &'static str)>,
    ) {
        let stop = self.stop.clone();
        let metrics = self.metrics.clone();
        let name = job.name();
        let handle = tokio::spawn(async move {
            let mut ticker = tokio::time::interval(every);
            ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
            let wakeup = || match &woken {
                Some((hub, topic)) => hub.subscribe(topic),
                None => Box::pin(std::future::pending()),
            };
            let mut wake = wakeup();
            loop {
                tokio::select! {
                    biased;
                    () = stop.cancelled() => break,
                    _ = ticker.tick() => {}
                    () = &mut wake => {}
                }
                // Listening again before the round: what commits during it wakes the next.
                wake = wakeup();
                let round = job
                    .tick(&stop, &metrics)
                    .instrument(tracing::info_span!("job", job = name));
                let outcome = round.await;
                metrics.finished(name, outcome.is_ok());
                if let Err(error) = outcome {
                    tracing::warn!(
                        job = name,
                        error = format!("{error:#}"),
                        "job round failed; retrying at its next round"
                    );
                }
            }
            job.drain().await;
            tracing::info!(job = name, "job stopped");
        });
        self.running.push((name, handle));
    }

    /// A handle that tells every job to stop after the step in hand, e.g. from a signal handler.
    pub fn stopper(&self) -> Stopper {
        Stopper(self.stop.clone())
    }

    /// Tells every job to stop after the step in hand, and waits until they have.
    pub async fn stop(self) {
        self.stop.cancel();
        for (name, handle) in self.running {
            if let Err(error) = handle.await {
                tracing::error!(job = name, %error, "job ended abnormally");
            }
        }
    }
}

/// Tells a supervisor's jobs to stop; `Supervisor::stop` then waits for them.
#[derive(Clone)]
pub struct Stopper(CancellationToken);

impl Stopper {
    pub fn stop(&self) {
        self.0.cancel();
    }
}

/// Submits confirmed intents, one at a time, then follows the submitted ones to their receipts.
pub struct ExecutorJob(pub Executor);

#[async_trait]
impl Job for ExecutorJob {
    fn name(&self) -> &'static str {
        "executor"
    }

    async fn tick(&self, stop: &CancellationToken, metrics: &JobMetrics) -> anyhow::Result<()> {
        let name = self.name();
        // A failed submission must not keep the submitted intents from being followed.
        let mut submitting = Ok(());
        while !stop.is_cancelled() {
            match self.0.submit_next().await {
                Ok(None) => break,
                Ok(Some(outcome)) => {
                    metrics.count_intents(name, "claimed", 1);
                    let outcome = match outcome {
                        SubmitOutcome::Submitted => "submitted",
                        SubmitOutcome::Failed => "failed",
                        SubmitOutcome::Released => "released",
                    };
                    metrics.count_intents(name, outcome, 1);
                }
                Err(error) => {
                    submitting = Err(anyhow::Error::new(error).context("submitting"));
                    break;
                }
            }
        }
        if !stop.is_cancelled() {
            let followed = self.0.follow_submitted().await?;
            metrics.count_intents(name, "executed", followed.executed);
            metrics.count_intents(name, "failed", followed.failed);
        }
        metrics.set_queue_lag(name, self.0.queue_lag().await?.unwrap_or_default());
        submitting
    }
}

/// Expires intents nobody confirmed in time. Every instance sweeps; skipped row locks keep them
/// from doing the same work twice.
pub struct ExpiryJob(pub IntentExpiry);

#[async_trait]
impl Job for ExpiryJob {
    fn name(&self) -> &'static str {
        "expiry"
    }

    async fn tick(&self, _stop: &CancellationToken, metrics: &JobMetrics) -> anyhow::Result<()> {
        let expired = self.0.sweep().await?;
        if !expired.is_empty() {
            tracing::info!(
                count = expired.len(),
                "expired transfer intents left pending"
            );
        }
        metrics.count_intents(self.name(), "expired", expired.len());
        Ok(())
    }
}

/// Follows x402 authorizations handed out until the token reports them used or they expire.
/// Every instance watches; each round holds its batch from the others.
pub struct AuthorizationWatchJob(pub AuthorizationWatcher);

#[async_trait]
impl Job for AuthorizationWatchJob {
    fn name(&self) -> &'static str {
        "authorization_watch"
    }

    async fn tick(&self, _stop: &CancellationToken, metrics: &JobMetrics) -> anyhow::Result<()> {
        let round = self.0.watch().await?;
        for executed in &round.executed {
            tracing::info!(intent = %executed.id, tx_hash = executed.tx_hash.as_deref().unwrap_or_default(), "x402 payment settled by its payee");
        }
        if !round.expired.is_empty() {
            tracing::info!(
                count = round.expired.len(),
                "x402 authorizations expired unused"
            );
        }
        metrics.count_intents(self.name(), "executed", round.executed.len());
        metrics.count_intents(self.name(), "expired", round.expired.len());
        Ok(())
    }
}

/// Removes attachment bytes in the object store that no stored message owns. Every instance
/// sweeps; skipped row locks keep them from taking the same record.
pub struct AttachmentSweepJob(pub AttachmentSweep);

#[async_trait]
impl Job for AttachmentSweepJob {
    fn name(&self) -> &'static str {
        "attachment_sweep"
    }

    async fn tick(&self, _stop: &CancellationToken, _metrics: &JobMetrics) -> anyhow::Result<()> {
        let removed = self.0.sweep().await?;
        if removed > 0 {
            tracing::info!(
                messages = removed,
                "removed attachment bytes of messages never stored"
            );
        }
        Ok(())
    }
}

/// What a leased queue's attempts are counted as in the metrics.
#[derive(Debug, Clone, Copy)]
pub enum QueueAttempts {
    /// `job_emails_total`: mail handed to the provider.
    Emails,
    /// `job_webhook_deliveries_total`: webhook deliveries posted.
    WebhookDeliveries,
}

impl QueueAttempts {
    fn counter(self, metrics: &JobMetrics) -> IntCounterVec {
        match self {
            Self::Emails => metrics.emails.clone(),
            Self::WebhookDeliveries => metrics.webhooks.clone(),
        }
    }

    /// How a done attempt is counted: mail is sent, a delivery delivered.
    fn outcome(self, handed_off: &HandOff) -> &'static str {
        match (handed_off, self) {
            (HandOff::Sent, Self::Emails) => "sent",
            (HandOff::Sent, Self::WebhookDeliveries) => "delivered",
            (HandOff::Retrying(_), _) => "retrying",
            (HandOff::Failed, _) => "failed",
            (HandOff::LeaseLost, _) => "lease_lost",
        }
    }
}

/// Works a leased queue (outbound mail, webhook deliveries): up to `concurrency` workers at a
/// time, each in a task of its own that goes on until nothing is due. A round starts workers in
/// the free places and returns: a far side that is slow to answer holds one place for up to its
/// timeout, while the next rounds do everything else on time. Woken at once by the queue's
/// `QUEUED_TOPIC`, from any instance; its interval only brings retries that came due. Every
/// instance runs it; leases keep two from doing one job.
pub struct LeasedQueueJob<J: LeasedJob> {
    name: &'static str,
    worker: Arc<LeasedWorker<J>>,
    places: Arc<Semaphore>,
    concurrency: u32,
    attempts: QueueAttempts,
    /// Counts the rounds: a worker whose last look found nothing looks again when a round came
    /// meanwhile, since that round may have found every place taken (by this very worker).
    rounds: Arc<AtomicU64>,
}

impl<J: LeasedJob> LeasedQueueJob<J> {
    pub fn new(
        name: &'static str,
        worker: LeasedWorker<J>,
        concurrency: usize,
        attempts: QueueAttempts,
    ) -> Self {
        let concurrency =
            u32::try_from(concurrency.clamp(1, Semaphore::MAX_PERMITS)).unwrap_or(u32::MAX);
        Self {
            name,
            worker: Arc::new(worker),
            places: Arc::new(Semaphore::new(concurrency as usize)),
            concurrency,
            attempts,
            rounds: Arc::new(AtomicU64::new(0)),
        }
    }

    /// What wakes the job at once: a job queued on any instance.
    pub fn woken_by(hub: Arc<dyn Notifications>) -> (Arc<dyn Notifications>, &'static str) {
        (hub, J::QUEUED_TOPIC)
    }
}

#[async_trait]
impl<J: LeasedJob> Job for LeasedQueueJob<J> {
    fn name(&self) -> &'static str {
        self.name
    }

    async fn tick(&self, stop: &CancellationToken, metrics: &JobMetrics) -> anyhow::Result<()> {
        let name = self.name;
        self.rounds.fetch_add(1, Ordering::SeqCst);
        while let Ok(place) = Arc::clone(&self.places).try_acquire_owned() {
            if stop.is_cancelled() {
                break;
            }
            let (worker, stop) = (Arc::clone(&self.worker), stop.clone());
            let (places, rounds) = (Arc::clone(&self.places), Arc::clone(&self.rounds));
            let (counter, attempts) = (self.attempts.counter(metrics), self.attempts);
            tokio::spawn(
                async move {
                    let mut place = place;
                    loop {
                        let rounds_before = rounds.load(Ordering::SeqCst);
                        let mut found_nothing = false;
                        while !stop.is_cancelled() {
                            let handed_off = match worker.work_next().await {
                                Ok(Some(handed_off)) => handed_off,
                                Ok(None) => {
                                    found_nothing = true;
                                    break;
                                }
                                Err(error) => {
                                    tracing::warn!(job = name, %error, "a worker of the queue stopped; the next round goes on");
                                    break;
                                }
                            };
                            counter
                                .with_label_values(&[name, attempts.outcome(&handed_off)])
                                .inc();
                        }
                        // The place goes back before the check: a round after it finds it free.
                        drop(place);
                        if !found_nothing || rounds.load(Ordering::SeqCst) == rounds_before {
                            break;
                        }
                        // A round came while this worker held its place, woken by a job queued
                        // after this worker's last look; if no other worker took a place since,
                        // no one would look for that job until the next interval.
                        match Arc::clone(&places).try_acquire_owned() {
                            Ok(again) => place = again,
                            Err(_) => break,
                        }
                    }
                }
                .in_current_span(),
            );
        }
        metrics.set_queue_lag(name, self.worker.queue_lag().await?);
        Ok(())
    }

    async fn drain(&self) {
        // Every place given back: no job is left half done.
        let _all = self.places.acquire_many(self.concurrency).await;
    }
}

/// Removes events older than the retention, a batch at a time.
pub struct EventRetentionJob {
    pub log: Arc<dyn EventLog>,
    pub kept_for: Duration,
}

/// Events removed per statement: a short transaction each.
const PRUNE_BATCH: usize = 10_000;

#[async_trait]
impl Job for EventRetentionJob {
    fn name(&self) -> &'static str {
        "event_retention"
    }

    async fn tick(&self, stop: &CancellationToken, metrics: &JobMetrics) -> anyhow::Result<()> {
        while !stop.is_cancelled() {
            let pruned = self.log.prune(self.kept_for, PRUNE_BATCH).await?;
            metrics
                .events_pruned
                .with_label_values(&[self.name()])
                .inc_by(u64::try_from(pruned).unwrap_or(u64::MAX));
            if pruned < PRUNE_BATCH {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::Notify;

    /// A job of the test queue.
    #[derive(Debug)]
    struct Parcel(u32);

    impl LeasedJob for Parcel {
        type Id = u32;
        type Done = ();
        type Owner = std::convert::Infallible;
        const QUEUED_TOPIC: &'static str = "parcels";

        fn id(&self) -> u32 {
            self.0
        }

        fn owner(&self) -> Option<Self::Owner> {
            None
        }
    }

    /// A queue whose claims can be held at their answer: a look that began before a job was
    /// queued and answers after.
    #[derive(Default)]
    struct HeldQueue {
        due: std::sync::Mutex<Vec<u32>>,
        /// While set, the next claim waits for `answer` before it looks.
        hold: std::sync::Mutex<Option<(Arc<Notify>, Arc<Notify>)>>,
        delivered: std::sync::Mutex<Vec<u32>>,
    }

    #[async_trait]
    impl ports::LeasedQueue<Parcel> for HeldQueue {
        async fn claim_due(
            &self,
            lease: domain::LeaseId,
            _lease_for: Duration,
            _full: &[std::convert::Infallible],
        ) -> Result<Option<ports::Claimed<Parcel>>, ports::StoreError> {
            let held = self.hold.lock().expect("not poisoned").take();
            let due = self.due.lock().expect("not poisoned").pop();
            if let Some((asked, answer)) = held {
                asked.notify_one();
                answer.notified().await;
            }
            Ok(due.map(|id| ports::Claimed {
                job: Parcel(id),
                lease,
                attempts: 1,
                age: Duration::ZERO,
            }))
        }

        async fn release(&self, _lease: domain::LeaseId) -> Result<(), ports::StoreError> {
            Ok(())
        }

        async fn record(
            &self,
            id: u32,
            _lease: domain::LeaseId,
            _outcome: &ports::JobOutcome<()>,
        ) -> Result<bool, ports::StoreError> {
            self.delivered.lock().expect("not poisoned").push(id);
            Ok(true)
        }

        async fn oldest_due_wait(&self) -> Result<Option<Duration>, ports::StoreError> {
            Ok(None)
        }
    }

    struct Courier;

    #[async_trait]
    impl app::Deliver<Parcel> for Courier {
        async fn deliver(&self, _job: &Parcel) -> Result<(), ports::DeliveryError> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_job_queued_while_the_only_worker_finishes_its_last_look_is_still_taken() {
        let queue = Arc::new(HeldQueue::default());
        let job = LeasedQueueJob::new(
            "parcels",
            LeasedWorker::new(
                queue.clone(),
                Arc::new(Courier),
                app::QueueSettings {
                    lease: Duration::from_secs(60),
                    retry: domain::RetryRule::AtOffsets(
                        domain::RetryOffsets::parse("0").expect("offsets"),
                    ),
                    places_per_owner: None,
                },
            ),
            1,
            QueueAttempts::Emails,
        );
        let metrics = JobMetrics::new(&Registry::new()).expect("metrics register");
        let stop = CancellationToken::new();
        // The only worker looks, finds nothing, and its answer is held back.
        let (asked, answer) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        *queue.hold.lock().expect("not poisoned") = Some((asked.clone(), answer.clone()));
        job.tick(&stop, &metrics).await.expect("round");
        asked.notified().await;
        // A job is queued, and the round it wakes finds the only place taken.
        queue.due.lock().expect("not poisoned").push(2);
        job.tick(&stop, &metrics).await.expect("round");
        // The worker's look answers what it saw before the job came: nothing.
        answer.notify_one();
        wait_until(|| queue.delivered.lock().expect("not poisoned").contains(&2)).await;
    }

    async fn wait_until(done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "never happened");
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A job whose rounds wait for a go-ahead, to stop it in the middle of one.
    struct Gated {
        started: Arc<Notify>,
        proceed: Arc<Notify>,
        finished: Arc<AtomicUsize>,
    }

    #[async_trait]
    impl Job for Gated {
        fn name(&self) -> &'static str {
            "gated"
        }

        async fn tick(&self, _stop: &CancellationToken, _: &JobMetrics) -> anyhow::Result<()> {
            self.started.notify_one();
            self.proceed.notified().await;
            self.finished.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    }

    #[tokio::test]
    async fn stopping_lets_the_round_in_hand_finish_and_starts_no_other() {
        let registry = Registry::new();
        let mut supervisor = Supervisor::new(&registry).expect("metrics register");
        let (started, proceed) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let finished = Arc::new(AtomicUsize::new(0));
        supervisor.spawn(
            Gated {
                started: started.clone(),
                proceed: proceed.clone(),
                finished: finished.clone(),
            },
            Duration::from_millis(1),
        );
        started.notified().await;
        supervisor.stopper().stop();
        proceed.notify_one();
        supervisor.stop().await;
        assert_eq!(
            finished.load(Ordering::SeqCst),
            1,
            "the round in hand ran to its end"
        );
        let rendered = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .expect("text");
        assert!(
            rendered.contains(r#"job_ticks_total{job="gated",result="ok"} 1"#),
            "{rendered}"
        );
    }

    struct Failing;

    #[async_trait]
    impl Job for Failing {
        fn name(&self) -> &'static str {
            "failing"
        }

        async fn tick(&self, _stop: &CancellationToken, _: &JobMetrics) -> anyhow::Result<()> {
            anyhow::bail!("the database is down")
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_round_is_counted_and_the_job_goes_on() {
        let registry = Registry::new();
        let mut supervisor = Supervisor::new(&registry).expect("metrics register");
        supervisor.spawn(Failing, Duration::from_secs(1));
        let errors = || {
            prometheus::TextEncoder::new()
                .encode_to_string(&registry.gather())
                .expect("text")
                .lines()
                .find(|line| line.starts_with(r#"job_ticks_total{job="failing",result="error"}"#))
                .map(str::to_owned)
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while errors().as_deref() != Some(r#"job_ticks_total{job="failing",result="error"} 3"#) {
            assert!(tokio::time::Instant::now() < deadline, "{:?}", errors());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        supervisor.stop().await;
    }
}
