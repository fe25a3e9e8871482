//! The notification hub: one `LISTEN` connection per instance, fanned out in memory. A change
//! commits with `pg_notify(CHANNEL, topic)`; every instance's hub wakes the waiters of that topic.
//! diesel-async 0.5 has no notification API, so the listener is a plain tokio-postgres connection
//! (the driver diesel-async itself runs on). A second connection, beside it, registers the
//! watches of the events topics subscribed here (`watches`): an agent's events notify only while
//! watched. The listening connection only listens, so `pg_stat_activity` shows it by its `LISTEN`.
//!
//! A barrier (decision 0084) finds every listening connection by that `LISTEN`, publishes
//! `barrier:<token>` on the channel, and waits for each hub's answer on `BARRIER_ANSWERS`. A
//! connection delivers notifications in the order they committed, so a hub that heard the barrier
//! has heard every change committed before it; it counts the barrier, then answers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use std::collections::HashSet;

use async_trait::async_trait;
use futures_util::StreamExt;
use ports::{BarrierPassed, InstanceBarrier, Notifications, StoreError, Wakeup};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_postgres::AsyncMessage;

use crate::connector::{with_causes, ConnectError, Connector};
use crate::watches::{register, Watched, Watches, RENEW_EVERY, WATCH_LEASE};

/// The one channel every topic is published on; the payload is the topic.
pub const CHANNEL: &str = "agent_runtime_events";

/// The channel hubs answer barriers on, with `<token>:<pid of the listening connection>`.
const BARRIER_ANSWERS: &str = "agent_runtime_barrier_answers";
/// What a barrier's payload on `CHANNEL` starts with; its token follows.
const BARRIER_PREFIX: &str = "barrier:";
/// A token longer than this is no barrier's (32 hexadecimal digits): it is not answered.
const BARRIER_TOKEN_MAX: usize = 64;

/// Topics without a waiter are dropped once there are this many, so the map stays bounded.
const SWEEP_ABOVE: usize = 4096;
const RECONNECT_FIRST: Duration = Duration::from_millis(100);
const RECONNECT_CAP: Duration = Duration::from_secs(5);
/// The listening connection is asked to answer this often, and given up when it does not within
/// `PROBE_DEADLINE`: a node that froze keeps the TCP connection up and simply never delivers
/// again, and a hub that trusts it would keep the auth cache and every wait on a silent
/// connection. With these, a silent node is left within 3 s.
const PROBE_EVERY: Duration = Duration::from_secs(1);
const PROBE_DEADLINE: Duration = Duration::from_secs(2);

struct Hub {
    /// A generation per topic: a waiter wakes when it moves.
    topics: Mutex<HashMap<String, watch::Sender<u64>>>,
    /// Moves at every (re)connection: notifications may have been missed, so everyone looks again.
    epoch: watch::Sender<u64>,
    /// Where every generation and epoch is drawn from, so none takes a value it had before, even
    /// a topic dropped for want of waiters and made again.
    moves: AtomicU64,
    listening: AtomicBool,
    /// How many times the listening connection was made.
    connections: AtomicU64,
    /// The barriers heard, counted before each is answered.
    barriers_heard: AtomicU64,
    /// The events topics' watches held by subscriptions here.
    watches: Arc<Watches>,
}

impl Hub {
    fn next_move(&self) -> u64 {
        self.moves.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Wakes the waiters of `topic`, and of `kind:*` for a topic `kind:…`.
    fn wake(&self, topic: &str) {
        let every = topic
            .split_once(':')
            .filter(|(_, rest)| *rest != "*")
            .map(|(kind, _)| format!("{kind}:*"));
        self.wake_topics(std::iter::once(topic).chain(every.as_deref()));
    }

    /// Wakes the waiters of each topic, and only of those.
    fn wake_topics<'a>(&self, woken: impl Iterator<Item = &'a str>) {
        let mut topics = self.topics.lock().unwrap_or_else(PoisonError::into_inner);
        for topic in woken {
            if let Some(sender) = topics.get(topic) {
                if sender.receiver_count() == 0 {
                    topics.remove(topic);
                } else {
                    let moved = self.next_move();
                    sender.send_modify(|generation| *generation = moved);
                }
            }
        }
    }

    fn wake_everyone(&self) {
        let moved = self.next_move();
        self.epoch.send_modify(|epoch| *epoch = moved);
    }
}

/// The hub of one instance. Dropping it stops its listener.
pub struct PgNotificationHub {
    hub: Arc<Hub>,
    listener: JoinHandle<()>,
    /// Opens the connection each barrier waits for its answers on.
    connector: Connector,
}

impl PgNotificationHub {
    /// Starts listening through `connector` in the background; until the connection is up (and
    /// whenever it is lost), `is_listening` is false and the hub keeps reconnecting.
    pub fn start(connector: Connector) -> Self {
        let (watches, registrations) = Watches::new();
        let hub = Arc::new(Hub {
            topics: Mutex::new(HashMap::new()),
            epoch: watch::Sender::new(0),
            moves: AtomicU64::new(0),
            listening: AtomicBool::new(false),
            connections: AtomicU64::new(0),
            barriers_heard: AtomicU64::new(0),
            watches,
        });
        let listener = tokio::spawn(listen(connector.clone(), hub.clone(), registrations));
        Self {
            hub,
            listener,
            connector,
        }
    }
}

impl Drop for PgNotificationHub {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl Notifications for PgNotificationHub {
    fn subscribe(&self, topic: &str) -> Wakeup {
        self.subscribe_counted(topic).1
    }

    fn subscribe_counted(&self, topic: &str) -> (Option<u64>, Wakeup) {
        let mut topics = self
            .hub
            .topics
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if topics.len() > SWEEP_ABOVE {
            topics.retain(|_, sender| sender.receiver_count() > 0);
        }
        // Both receivers start at the current generation: only a later change wakes them.
        let mut topic_changed = topics
            .entry(topic.to_owned())
            .or_insert_with(|| watch::Sender::new(self.hub.next_move()))
            .subscribe();
        let mut reconnected = self.hub.epoch.subscribe();
        let stands_at = (*topic_changed.borrow()).max(*reconnected.borrow());
        let watching = Watched::of_topic(topic).map(|watched| self.hub.watches.hold(watched));
        let wakeup = Box::pin(async move {
            // Held while the subscription lives: the topic is notified for as long.
            let _watching = watching;
            tokio::select! {
                _ = topic_changed.changed() => {}
                _ = reconnected.changed() => {}
            }
        });
        (Some(stands_at), wakeup)
    }

    fn notify_here(&self, topic: &str) {
        self.hub.wake(topic);
    }

    fn is_listening(&self) -> bool {
        self.hub.listening.load(Ordering::Acquire)
    }

    fn barriers_heard(&self) -> u64 {
        self.hub.barriers_heard.load(Ordering::Acquire)
    }

    fn connections_made(&self) -> u64 {
        self.hub.connections.load(Ordering::Relaxed)
    }
}

#[async_trait]
impl InstanceBarrier for PgNotificationHub {
    async fn pass(&self, within: Duration) -> Result<BarrierPassed, StoreError> {
        let deadline = Instant::now() + within;
        let mut asked = 0;
        let mut answered = HashSet::new();
        let passing = pass_barrier(&self.connector, &mut asked, &mut answered);
        match tokio::time::timeout_at(deadline, passing).await {
            Ok(Err(error)) => Err(StoreError::Unavailable(with_causes(&error))),
            Ok(Ok(())) | Err(_) => Ok(BarrierPassed {
                asked,
                answered: answered.len(),
            }),
        }
    }
}

/// Sends a barrier to every listening hub of this database, and collects their answers into
/// `answered` until all `asked` have answered or the answers' connection ends.
async fn pass_barrier(
    connector: &Connector,
    asked: &mut usize,
    answered: &mut HashSet<i32>,
) -> Result<(), ConnectError> {
    let (client, driver, mut heard) = open_listening(connector).await?;
    // Listen before asking, so that no answer comes before it can be heard.
    client
        .batch_execute(&format!("LISTEN {BARRIER_ANSWERS}"))
        .await?;
    let hubs: HashSet<i32> = client
        .query(
            "SELECT pid FROM pg_stat_activity \
             WHERE datname = current_database() AND query = $1",
            &[&format!("LISTEN {CHANNEL}")],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    *asked = hubs.len();
    let token = uuid::Uuid::new_v4().simple().to_string();
    client
        .execute(
            "SELECT pg_notify($1, $2)",
            &[&CHANNEL, &format!("{BARRIER_PREFIX}{token}")],
        )
        .await?;
    while answered.len() < hubs.len() {
        let Some(message) = heard.recv().await else {
            break;
        };
        let AsyncMessage::Notification(notification) = message else {
            continue;
        };
        let pid = notification
            .payload()
            .split_once(':')
            .filter(|(answered_token, _)| *answered_token == token)
            .and_then(|(_, pid)| pid.parse().ok());
        if let Some(pid) = pid.filter(|pid| hubs.contains(pid)) {
            answered.insert(pid);
        }
    }
    driver.abort();
    Ok(())
}

/// Keeps one listening connection up for as long as the hub lives.
async fn listen(
    connector: Connector,
    hub: Arc<Hub>,
    mut registrations: mpsc::UnboundedReceiver<Watched>,
) {
    let mut wait = RECONNECT_FIRST;
    loop {
        match listen_once(&connector, &hub, &mut registrations).await {
            Ok(()) => wait = RECONNECT_FIRST,
            Err(error) => tracing::warn!(
                error = %with_causes(&error),
                retry_in = ?wait,
                "notification listener down"
            ),
        }
        hub.listening.store(false, Ordering::Release);
        // Whatever was published while no one listened is lost: everyone looks again.
        hub.wake_everyone();
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RECONNECT_CAP);
    }
}

/// One connection's life: connect, `LISTEN`, register the watches held, then fan out and keep
/// the watches registered until the connection ends.
async fn listen_once(
    connector: &Connector,
    hub: &Hub,
    registrations: &mut mpsc::UnboundedReceiver<Watched>,
) -> Result<(), ConnectError> {
    let (client, driver, mut received) = open_listening(connector).await?;
    let listener_pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await?
        .get(0);
    // Last, so that `pg_stat_activity` shows this connection by it.
    client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
    let (registrar, registrar_connection) = connector.open_client().await?;
    let registrar_driver = tokio::spawn(async move {
        if let Err(error) = registrar_connection.await {
            tracing::warn!(error = %with_causes(&error), "the watches' connection failed");
        }
    });
    // Whatever was asked while no one listened is among the watches held now.
    while registrations.try_recv().is_ok() {}
    let mut renewals = Renewals::new();
    renewals.renew(&registrar, hub).await;
    hub.listening.store(true, Ordering::Release);
    hub.wake_everyone();
    let connections = hub.connections.fetch_add(1, Ordering::Relaxed) + 1;
    tracing::info!(
        channel = CHANNEL,
        connections,
        "notification listener connected; waits, streams and the key cache look again"
    );
    let mut renew = tokio::time::interval_at(Instant::now() + RENEW_EVERY, RENEW_EVERY);
    let listen = format!("LISTEN {CHANNEL}");
    let mut probe = tokio::time::interval_at(Instant::now() + PROBE_EVERY, PROBE_EVERY);
    probe.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            message = received.recv() => match message {
                Some(AsyncMessage::Notification(notification)) => {
                    match notification.payload().strip_prefix(BARRIER_PREFIX) {
                        Some(token) => answer_barrier(&registrar, hub, token, listener_pid).await,
                        None => hub.wake(notification.payload()),
                    }
                }
                Some(_) => {}
                None => break,
            },
            Some(watched) = registrations.recv() => {
                if hub.watches.has(watched) {
                    renewals.register(&registrar, hub, watched).await;
                }
            }
            _ = renew.tick() => renewals.renew(&registrar, hub).await,
            // The statement the connection is known by: it listens already, so this only
            // proves the node still answers, and `pg_stat_activity` still shows it by it.
            _ = probe.tick() => {
                let answered = tokio::time::timeout(
                    PROBE_DEADLINE,
                    client.batch_execute(&listen),
                );
                match answered.await {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => {
                        tracing::warn!(error = %with_causes(&error), "the listening connection failed its probe");
                        break;
                    }
                    Err(_) => {
                        tracing::warn!(deadline = ?PROBE_DEADLINE, "the listening connection did not answer its probe");
                        break;
                    }
                }
            }
        }
        if client.is_closed() || registrar.is_closed() {
            break;
        }
    }
    driver.abort();
    registrar_driver.abort();
    tracing::warn!("notification connection closed");
    Ok(())
}

/// A client, with the task that drives its connection (abort it when done) and the messages the
/// connection receives, notifications among them.
async fn open_listening(
    connector: &Connector,
) -> Result<
    (
        tokio_postgres::Client,
        JoinHandle<()>,
        mpsc::UnboundedReceiver<AsyncMessage>,
    ),
    ConnectError,
> {
    let (client, mut connection) = connector.open_client().await?;
    let (messages, received) = mpsc::unbounded_channel();
    // The connection must be polled for the client to work at all; its messages come out here.
    let driver = tokio::spawn(async move {
        let mut stream =
            futures_util::stream::poll_fn(move |context| connection.poll_message(context));
        while let Some(message) = stream.next().await {
            match message {
                Ok(message) => {
                    if messages.send(message).is_err() {
                        break;
                    }
                }
                Err(error) => {
                    tracing::warn!(error = %with_causes(&error), "a listening connection failed");
                    break;
                }
            }
        }
    });
    Ok((client, driver, received))
}

/// Counts a barrier heard, then answers it: every notification before it has been handled.
async fn answer_barrier(
    registrar: &tokio_postgres::Client,
    hub: &Hub,
    token: &str,
    listener_pid: i32,
) {
    if token.len() > BARRIER_TOKEN_MAX {
        return;
    }
    hub.barriers_heard.fetch_add(1, Ordering::AcqRel);
    let answer = format!("{token}:{listener_pid}");
    if let Err(error) = registrar
        .execute("SELECT pg_notify($1, $2)", &[&BARRIER_ANSWERS, &answer])
        .await
    {
        tracing::warn!(error = %with_causes(&error), "could not answer a barrier");
    }
}

/// Keeps the watches held here registered, and makes good what a watch left unregistered may
/// have missed: a registration that failed, or a renewal that came after its lease lapsed, wakes
/// every waiter once it succeeds, so each reads again.
struct Renewals {
    /// Until when every watch held is known to be registered.
    covered_until: Option<Instant>,
    /// Whether a registration failed since the last renewal that succeeded.
    failed: bool,
}

impl Renewals {
    fn new() -> Self {
        Self {
            covered_until: None,
            failed: false,
        }
    }

    /// Registers a watch newly held, then wakes its topic: its watcher reads again.
    async fn register(&mut self, client: &tokio_postgres::Client, hub: &Hub, watched: Watched) {
        match register(client, &[watched]).await {
            Ok(()) => hub.wake_topics(std::iter::once(watched.topic().as_str())),
            Err(error) => self.failed(&error, client).await,
        }
    }

    /// Renews every watch held for another lease.
    async fn renew(&mut self, client: &tokio_postgres::Client, hub: &Hub) {
        let started = Instant::now();
        let held = hub.watches.to_renew();
        match register(client, &held).await {
            Ok(()) => {
                let lapsed = self.covered_until.is_some_and(|until| started > until);
                if std::mem::take(&mut self.failed) || lapsed {
                    hub.wake_everyone();
                }
                self.covered_until = Some(started + WATCH_LEASE);
            }
            Err(error) => self.failed(&error, client).await,
        }
    }

    async fn failed(&mut self, error: &tokio_postgres::Error, client: &tokio_postgres::Client) {
        self.failed = true;
        tracing::warn!(
            error = %with_causes(error),
            "could not register the watched agents' events; retrying at the next renewal"
        );
        // A watch of every agent writes in a transaction of its own, left open by its error.
        let _ = client.batch_execute("ROLLBACK").await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hub whose listener never connects (nothing listens on the discard port): what it tells
    /// of its topics is all in memory.
    fn unconnected() -> PgNotificationHub {
        PgNotificationHub::start(
            Connector::from_url("postgres://nobody@127.0.0.1:9/none").expect("a valid URL"),
        )
    }

    #[tokio::test]
    async fn a_topic_stands_at_a_new_count_after_each_notification_and_never_an_old_one() {
        let hub = unconnected();
        let (first, woken) = hub.subscribe_counted("events:a");
        let first = first.expect("the hub counts");
        hub.notify_here("events:a");
        woken.await;
        let (second, _) = hub.subscribe_counted("events:a");
        assert!(second.expect("counted") > first);
        let (other, _) = hub.subscribe_counted("events:b");
        assert_ne!(other, second, "topics are counted from one source");
        // With no waiter left, a notification drops the topic; made again, it counts on.
        let (before, dropped) = hub.subscribe_counted("events:c");
        drop(dropped);
        hub.notify_here("events:c");
        let (again, _) = hub.subscribe_counted("events:c");
        assert!(again > before, "{again:?} after {before:?}");
    }

    #[tokio::test]
    async fn a_topic_of_every_kind_wakes_with_each_topic_of_that_kind_only() {
        let hub = unconnected();
        let every = hub.subscribe("events:*");
        let mut revoked = hub.subscribe("revoked:*");
        hub.notify_here("events:a");
        every.await;
        assert!(
            futures_util::poll!(&mut revoked).is_pending(),
            "another kind's topic stays asleep"
        );
        hub.notify_here("revoked:b");
        revoked.await;
    }
}
