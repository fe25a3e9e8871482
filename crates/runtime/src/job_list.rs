//! The background jobs an instance runs and how often: the one list of them, read from the
//! settings. The server binary starts it; `agentctl` runs none.

use std::sync::Arc;
use std::time::Duration;

use ports::{Notifications, OutboundEmail, WebhookDelivery, CONFIRMED_INTENTS_TOPIC};
use postgres_store::PgNotificationHub;
use prometheus::Registry;

use crate::config::ServicesConfig;
use crate::jobs::{
    AttachmentSweepJob, AuthorizationWatchJob, EventRetentionJob, ExecutorJob, ExpiryJob,
    LeasedQueueJob, QueueAttempts, Supervisor,
};
use crate::wiring::{self, Chain, Database};

/// How often events past their retention are looked for.
const EVENT_RETENTION_INTERVAL: Duration = Duration::from_secs(600);
/// How often due webhook deliveries are looked for besides the wake-up each queued one sends:
/// retries come due without one.
const WEBHOOK_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The outbox hands queued mail to the provider one message at a time.
const OUTBOX_CONCURRENCY: usize = 1;

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
    jobs.spawn(
        AuthorizationWatchJob(wiring::authorization_watcher(
            database,
            chain,
            &config.intents,
        )),
        config.intents.authorization_watch_interval,
    );
    if let Some((sweep, interval)) = wiring::attachment_sweep(database, &config.email) {
        jobs.spawn(AttachmentSweepJob(sweep), interval);
    }
    let hub: Arc<dyn Notifications> = notifications.clone();
    if config.intents.executor_enabled {
        // Woken by every confirmation; its interval follows submitted intents to their receipts.
        jobs.spawn_woken(
            ExecutorJob(wiring::executor(
                database,
                chain,
                &config.provisioning,
                &config.intents,
            )),
            config.intents.executor_interval,
            Some((hub.clone(), CONFIRMED_INTENTS_TOPIC)),
        );
    } else {
        tracing::info!("EXECUTOR_ENABLED=false: confirmed intents are left to other instances");
    }
    if config.email.outbox_enabled {
        jobs.spawn_woken(
            LeasedQueueJob::new(
                "outbox",
                wiring::outbox_worker(database, &config.email)?,
                OUTBOX_CONCURRENCY,
                QueueAttempts::Emails,
            ),
            config.email.outbox_interval,
            Some(LeasedQueueJob::<OutboundEmail>::woken_by(hub.clone())),
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
            LeasedQueueJob::new(
                "webhooks",
                wiring::webhook_worker(database, &events.webhooks)?,
                events.webhooks.concurrency,
                QueueAttempts::WebhookDeliveries,
            ),
            WEBHOOK_POLL_INTERVAL,
            Some(LeasedQueueJob::<WebhookDelivery>::woken_by(hub)),
        );
    } else {
        tracing::info!(
            "WEBHOOK_DELIVERY_ENABLED=false: webhook deliveries are left to other instances"
        );
    }
    Ok(jobs)
}
