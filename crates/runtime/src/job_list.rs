//! The background jobs an instance runs and how often: the one list of them, read from the
//! settings. The server binary starts it; `agentctl` runs none.

use std::sync::Arc;
use std::time::Duration;

use postgres_store::PgNotificationHub;
use prometheus::Registry;

use crate::config::ServicesConfig;
use crate::jobs::{
    AttachmentSweepJob, EventRetentionJob, ExecutorJob, ExpiryJob, OutboxJob, Supervisor,
    WebhookJob,
};
use crate::wiring::{self, Chain, Database};

/// How often events past their retention are looked for.
const EVENT_RETENTION_INTERVAL: Duration = Duration::from_secs(600);
/// How often due webhook deliveries are looked for besides the wake-up each queued one sends:
/// retries come due without one.
const WEBHOOK_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Starts every job the settings ask of this instance under one supervisor, its metrics in
/// `registry`; what the settings leave to other instances is logged as such.
pub fn start(
    database: &Database,
    chain: &Chain,
    notifications: &Arc<PgNotificationHub>,
    config: &ServicesConfig,
    registry: &Registry,
) -> anyhow::Result<Supervisor> {
    let mut jobs = Supervisor::new(registry)?;
    jobs.spawn(
        ExpiryJob(wiring::intent_expiry(database, &config.intents)),
        config.intents.expiry_interval,
    );
    if let Some((sweep, interval)) = wiring::attachment_sweep(database, &config.email) {
        jobs.spawn(AttachmentSweepJob(sweep), interval);
    }
    if config.intents.executor_enabled {
        jobs.spawn(
            ExecutorJob(wiring::executor(
                database,
                chain,
                &config.provisioning,
                &config.intents,
            )),
            config.intents.executor_interval,
        );
    } else {
        tracing::info!("EXECUTOR_ENABLED=false: confirmed intents are left to other instances");
    }
    if config.email.outbox_enabled {
        jobs.spawn(
            OutboxJob(wiring::outbox_worker(database, &config.email)?),
            config.email.outbox_interval,
        );
    } else {
        tracing::info!("EMAIL_OUTBOX_ENABLED=false: queued mail is left to other instances");
    }
    let events = config.events;
    jobs.spawn(
        EventRetentionJob {
            log: wiring::event_log(database),
            kept_for: events.retention,
        },
        EVENT_RETENTION_INTERVAL,
    );
    if events.webhooks.enabled {
        jobs.spawn_woken(
            WebhookJob::new(
                Arc::new(wiring::webhook_worker(database, &events.webhooks)?),
                events.webhooks.concurrency,
            ),
            WEBHOOK_POLL_INTERVAL,
            Some(WebhookJob::woken_by(notifications.clone())),
        );
    } else {
        tracing::info!(
            "WEBHOOK_DELIVERY_ENABLED=false: webhook deliveries are left to other instances"
        );
    }
    Ok(jobs)
}
