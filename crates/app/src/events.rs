//! What an agent hears of (decision 0058): its event log read as a feed, and followed live. A
//! follower reads what it missed, then sleeps until the notification hub says the agent's log
//! moved on any instance; followers at the same position share one read.

use std::collections::VecDeque;
use std::sync::Arc;

use domain::{AgentId, AgentProfile, EventPayload, EventRecord, EventTypes, TransferIntentRecord};
use futures_util::future::{select, Either, FutureExt};
use ports::{events_topic, revoked_topic, AgentStore, EventLog, Notifications, StoreError, Timer};

use crate::agents::Principal;
use crate::long_lived::{LongLived, LongLivedKind, LongLivedPlace};
use crate::waiting::{Joined, Shutdown, Waiter, SHUTDOWN_TOPIC};

/// The most events a feed page holds.
pub const MAX_EVENT_PAGE: usize = 100;
/// How many events a follower reads at once.
const FOLLOW_READ: usize = 100;
/// What the reads kept for the followers that come to the same position after the read ended
/// (one event to thousands of streams wakes them over some milliseconds) may hold in all,
/// weighed by what their events hold, so that no agent's events can make the cache large.
const RECENT_READS_BUDGET_BYTES: u64 = 16 * 1024 * 1024;
/// What a kept read weighs on average, to size the cache's tables: a wake-up reads an event or
/// two.
const TYPICAL_READ_BYTES: u64 = 1024;
/// The budget is split among this many independently locked parts; a read is kept only when it
/// fits in one part's share (4 MiB of 16: a hundred thin events weigh about 60 KiB).
const READ_CACHE_PARTS: usize = 4;

pub struct EventPorts {
    pub log: Arc<dyn EventLog>,
    pub agents: Arc<dyn AgentStore>,
    pub notifications: Arc<dyn Notifications>,
    pub timer: Arc<dyn Timer>,
}

/// The agent's events of `types` after `after`, oldest first, at most `limit` (1 to
/// `MAX_EVENT_PAGE`), read with one more to tell whether more follow.
pub(crate) async fn page_of(
    log: &dyn EventLog,
    agent: AgentId,
    after: u64,
    types: EventTypes,
    limit: usize,
) -> Result<EventPage, StoreError> {
    let limit = limit.clamp(1, MAX_EVENT_PAGE);
    let mut items = log.page(agent, after, types, limit + 1).await?;
    let more = items.len() > limit;
    items.truncate(limit);
    let next_after = more.then(|| items.last().map(|last| last.seq)).flatten();
    Ok(EventPage { items, next_after })
}

/// A page of the feed, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPage {
    pub items: Vec<EventRecord>,
    /// The last item's `seq` when more may follow.
    pub next_after: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error("too many event streams of this agent at once")]
    TooManyStreams,
    #[error(transparent)]
    Store(#[from] StoreError),
}

type SharedRead = Result<Arc<Vec<EventRecord>>, StoreError>;

/// A read of what follows a position, and where the agent's topic stood when it was asked for.
type ReadKey = (AgentId, u64, Option<u64>);

/// A kept read, with what its events hold in memory.
#[derive(Clone)]
struct KeptRead {
    events: Arc<Vec<EventRecord>>,
    bytes: u64,
}

impl KeptRead {
    fn of(events: Arc<Vec<EventRecord>>) -> Self {
        let bytes = std::mem::size_of::<Self>() + events.iter().map(held_bytes).sum::<usize>();
        Self {
            events,
            bytes: bytes as u64,
        }
    }
}

/// What an event holds in memory: its record and the text it carries.
fn held_bytes(event: &EventRecord) -> usize {
    fn text(value: &Option<String>) -> usize {
        value.as_ref().map_or(0, String::len)
    }
    let carried = match &event.payload {
        EventPayload::EmailReceived {
            from,
            subject,
            verification_codes,
            ..
        } => {
            text(from)
                + text(subject)
                + verification_codes
                    .iter()
                    .map(|code| std::mem::size_of::<String>() + code.len())
                    .sum::<usize>()
        }
        EventPayload::EmailSent {
            provider_message_id,
            ..
        } => text(provider_message_id),
        EventPayload::EmailFailed { reason, .. } => text(reason),
        EventPayload::SmsReceived {
            from_number,
            to_number,
            code,
            ..
        } => from_number.len() + to_number.len() + text(code),
        EventPayload::TransferIntent(intent) => {
            std::mem::size_of::<TransferIntentRecord>()
                + text(&intent.tx_hash)
                + text(&intent.failure_reason)
                + intent
                    .idempotency_key
                    .as_ref()
                    .map_or(0, |key| key.as_str().len())
        }
    };
    std::mem::size_of::<EventRecord>() + carried
}

/// A kept read weighs what its events hold, and at least one so that every read can be let go.
#[derive(Clone)]
struct ReadBytes;

impl quick_cache::Weighter<ReadKey, KeptRead> for ReadBytes {
    fn weight(&self, _: &ReadKey, read: &KeptRead) -> u64 {
        read.bytes.max(1)
    }
}

/// What followers read of the log: each read once for those at the same position while it runs,
/// and kept afterwards. A read asked for where the agent's topic stood at `n` sees everything
/// notified up to `n`, so it answers every follower that subscribed at `n` (a later change wakes
/// them), even when it found nothing; without the hub's count, only a read that found events is
/// kept, being a true start of what follows its position (`seq` has no gap and only grows).
#[derive(Clone)]
struct Reads {
    running: Arc<Joined<ReadKey, SharedRead>>,
    recent: Arc<quick_cache::sync::Cache<ReadKey, KeptRead, ReadBytes>>,
}

impl Reads {
    fn new() -> Self {
        Self::within(RECENT_READS_BUDGET_BYTES)
    }

    fn within(budget_bytes: u64) -> Self {
        let options = quick_cache::OptionsBuilder::new()
            .shards(READ_CACHE_PARTS)
            .estimated_items_capacity((budget_bytes / TYPICAL_READ_BYTES).max(1) as usize)
            .weight_capacity(budget_bytes)
            .build()
            .expect("both capacities are set");
        Self {
            running: Arc::default(),
            recent: Arc::new(quick_cache::sync::Cache::with_options(
                options,
                ReadBytes,
                quick_cache::DefaultHashBuilder::default(),
                quick_cache::sync::DefaultLifecycle::default(),
            )),
        }
    }

    async fn after(
        &self,
        log: &Arc<dyn EventLog>,
        agent: AgentId,
        position: u64,
        topic_at: Option<u64>,
    ) -> SharedRead {
        let key = (agent, position, topic_at);
        if let Some(kept) = self.recent.get(&key) {
            return Ok(kept.events);
        }
        let log = log.clone();
        let read = self
            .running
            .run(key, move || {
                async move {
                    log.page(agent, position, EventTypes::all(), FOLLOW_READ)
                        .await
                        .map(Arc::new)
                }
                .boxed()
            })
            .await?;
        if topic_at.is_some() || !read.is_empty() {
            self.recent.insert(key, KeptRead::of(read.clone()));
        }
        Ok(read)
    }
}

pub struct EventService {
    ports: Arc<EventPorts>,
    long_lived: Arc<LongLived>,
    reads: Reads,
    shutdown: Arc<Shutdown>,
}

impl EventService {
    pub fn new(ports: EventPorts, long_lived: Arc<LongLived>) -> Self {
        Self {
            ports: Arc::new(ports),
            long_lived,
            reads: Reads::new(),
            shutdown: Arc::default(),
        }
    }

    /// The reads kept for followers: how many, and what they weigh in bytes.
    pub fn kept_reads(&self) -> (usize, u64) {
        (self.reads.recent.len(), self.reads.recent.weight())
    }

    /// Ends every follower at once, for a stopping instance.
    pub fn shut_down(&self) {
        self.shutdown.begin(self.ports.notifications.as_ref());
    }

    /// The agent's events of `types` after `after`, oldest first, at most `limit`.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn page(
        &self,
        profile: &AgentProfile,
        after: u64,
        types: EventTypes,
        limit: usize,
    ) -> Result<EventPage, StoreError> {
        page_of(
            self.ports.log.as_ref(),
            profile.agent.id,
            after,
            types,
            limit,
        )
        .await
    }

    /// Follows the agent's events of `types` after `after`, with the place it takes among the
    /// agent's event streams: the transport holds the place as long as the connection the
    /// follow is written to, which may outlive the follow (a reader that stops reading keeps
    /// its connection, and its place, until it goes).
    pub fn follow(
        &self,
        principal: &Principal,
        after: u64,
        types: EventTypes,
    ) -> Result<(EventFollower, LongLivedPlace), FollowError> {
        let agent = principal.profile.agent.id;
        let place = self
            .long_lived
            .enter(agent, LongLivedKind::EventStream)
            .ok_or(FollowError::TooManyStreams)?;
        let notifications = self.ports.notifications.as_ref();
        let waiter = Waiter::new(principal, self.ports.agents.clone());
        let key_expired: ports::Wakeup = match waiter.expires_in() {
            Some(left) => self.ports.timer.sleep(left),
            None => Box::pin(std::future::pending()),
        };
        let follower = EventFollower {
            ports: self.ports.clone(),
            reads: self.reads.clone(),
            shutdown: self.shutdown.clone(),
            waiter,
            key_expired: key_expired.shared(),
            stopping: notifications.subscribe(SHUTDOWN_TOPIC).shared(),
            revoked: notifications.subscribe(&revoked_topic(agent)).shared(),
            position: after,
            types,
            pending: VecDeque::new(),
            started: false,
            key_checked: false,
        };
        Ok((follower, place))
    }
}

/// What a follower tells its reader next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowItem {
    /// The asked position is older than what is kept: the stream goes on after `after`, the
    /// last event retention removed.
    Reset {
        after: u64,
    },
    Event(EventRecord),
}

/// One reader's follow of an agent's log.
pub struct EventFollower {
    ports: Arc<EventPorts>,
    reads: Reads,
    shutdown: Arc<Shutdown>,
    waiter: Waiter,
    stopping: futures_util::future::Shared<ports::Wakeup>,
    revoked: futures_util::future::Shared<ports::Wakeup>,
    /// Ready when the key expires; never for a key that does not.
    key_expired: futures_util::future::Shared<ports::Wakeup>,
    /// The last `seq` read (delivered or filtered out).
    position: u64,
    types: EventTypes,
    pending: VecDeque<EventRecord>,
    started: bool,
    key_checked: bool,
}

impl EventFollower {
    /// The next thing to tell the reader; `None` once the follow ended (the instance stopping,
    /// the key no longer authenticating, the log unreadable): the reader resumes from the last
    /// event it got.
    pub async fn next(&mut self) -> Option<FollowItem> {
        match self.advance().await {
            Ok(item) => item,
            Err(error) => {
                tracing::warn!(%error, agent = %self.waiter.agent(), "an event stream ends: the log could not be read");
                None
            }
        }
    }

    async fn advance(&mut self) -> Result<Option<FollowItem>, StoreError> {
        let agent = self.waiter.agent();
        if !self.started {
            self.started = true;
            let bounds = self.ports.log.bounds(agent).await?;
            if bounds.must_reset(self.position) {
                self.position = bounds.start_after(self.position);
                return Ok(Some(FollowItem::Reset {
                    after: self.position,
                }));
            }
        }
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(Some(FollowItem::Event(event)));
            }
            if self.shutdown.begun() {
                return Ok(None);
            }
            let topic = events_topic(agent);
            let (topic_at, woken) = self.ports.notifications.subscribe_counted(&topic);
            let read = self
                .reads
                .after(&self.ports.log, agent, self.position, topic_at)
                .await?;
            if let Some(last) = read.last() {
                self.position = last.seq;
                self.pending.extend(
                    read.iter()
                        .filter(|event| self.types.contains(event.event_type))
                        .cloned(),
                );
                continue;
            }
            if !self.key_checked {
                if !self.waiter.authorized().await? {
                    return Ok(None);
                }
                self.key_checked = true;
            }
            let ended = select(
                self.stopping.clone(),
                select(self.revoked.clone(), self.key_expired.clone()),
            );
            match select(woken, ended).await {
                Either::Left(_) => {}
                Either::Right((Either::Left(_), _)) => {
                    if self.shutdown.begun() {
                        return Ok(None);
                    }
                    self.stopping = self.ports.notifications.subscribe(SHUTDOWN_TOPIC).shared();
                }
                Either::Right((Either::Right((Either::Right(_), _)), _)) => return Ok(None),
                // A revocation, or the hub reconnecting: the key is read again to tell.
                Either::Right((Either::Right((Either::Left(_), _)), _)) => {
                    self.revoked = self
                        .ports
                        .notifications
                        .subscribe(&revoked_topic(agent))
                        .shared();
                    if !self.waiter.authorized().await? {
                        return Ok(None);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{EmailMessageId, EventId, EventType};
    use ports::MockEventLog;
    use uuid::Uuid;

    /// A read of `count` mail events whose subjects are `subject_bytes` long: what a store that
    /// did not keep its events thin would hand out.
    fn heavy_read(after: u64, count: u64, subject_bytes: usize) -> Vec<EventRecord> {
        (after + 1..=after + count)
            .map(|seq| EventRecord {
                key_id: None,
                id: EventId(Uuid::now_v7()),
                seq,
                event_type: EventType::EmailReceived,
                timestamp: time::OffsetDateTime::UNIX_EPOCH,
                payload: EventPayload::EmailReceived {
                    message_id: EmailMessageId(Uuid::now_v7()),
                    thread_id: Uuid::now_v7(),
                    from: Some("someone@example.org".into()),
                    subject: Some("s".repeat(subject_bytes)),
                    verification_codes: Vec::new(),
                    attachment_count: 50,
                },
            })
            .collect()
    }

    #[tokio::test]
    async fn the_kept_reads_stay_within_their_bytes_whatever_the_events_weigh() {
        let budget: u64 = 4 * 1024 * 1024;
        let mut log = MockEventLog::new();
        log.expect_page()
            .returning(|_, after, _, limit| Ok(heavy_read(after, limit as u64, 2048)));
        let log: Arc<dyn EventLog> = Arc::new(log);
        let reads = Reads::within(budget);
        let agent = AgentId(Uuid::now_v7());
        // One reader reconnecting with each position it was given: each read is a new key.
        for position in (0..100).map(|read| read * FOLLOW_READ as u64) {
            let read = reads
                .after(&log, agent, position, Some(position))
                .await
                .expect("read");
            assert_eq!(read.len(), FOLLOW_READ);
        }
        assert!(
            reads.recent.weight() <= budget,
            "{} bytes kept",
            reads.recent.weight()
        );
        assert!(!reads.recent.is_empty(), "reads that fit are kept");
        let one_read = KeptRead::of(Arc::new(heavy_read(0, FOLLOW_READ as u64, 2048))).bytes;
        assert!(
            one_read > 100 * 2048,
            "a read weighs its events' text: {one_read}"
        );
    }
}
