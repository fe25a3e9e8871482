//! What an agent hears of (decision 0058): its event log read as a feed, and followed live. A
//! follower reads what it missed, then sleeps until the notification hub says the agent's log
//! moved on any instance; followers at the same position share one read.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::{AgentId, AgentProfile, EventRecord, EventTypes};
use futures_util::future::{select, Either, FutureExt};
use ports::{events_topic, revoked_topic, AgentStore, EventLog, Notifications, StoreError, Timer};

use crate::long_lived::{LongLived, LongLivedKind, LongLivedPlace};
use crate::waiting::{Joined, Shutdown, Waiter, SHUTDOWN_TOPIC};

/// The most events a feed page holds.
pub const MAX_EVENT_PAGE: usize = 100;
/// How many events a follower reads at once.
const FOLLOW_READ: usize = 100;
/// How many reads that found events are kept for the followers that come to the same position
/// after the read ended (one event to thousands of streams wakes them over some milliseconds).
const RECENT_READS: usize = 4096;

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

/// What followers read of the log: each read once for those at the same position while it runs,
/// and kept afterwards. A read asked for where the agent's topic stood at `n` sees everything
/// notified up to `n`, so it answers every follower that subscribed at `n` (a later change wakes
/// them), even when it found nothing; without the hub's count, only a read that found events is
/// kept, being a true start of what follows its position (`seq` has no gap and only grows).
#[derive(Clone)]
struct Reads {
    running: Arc<Joined<ReadKey, SharedRead>>,
    recent: Arc<quick_cache::sync::Cache<ReadKey, Arc<Vec<EventRecord>>>>,
}

impl Reads {
    fn new() -> Self {
        Self {
            running: Arc::default(),
            recent: Arc::new(quick_cache::sync::Cache::new(RECENT_READS)),
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
            return Ok(kept);
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
            self.recent.insert(key, read.clone());
        }
        Ok(read)
    }
}

pub struct EventService {
    ports: Arc<EventPorts>,
    long_lived: Arc<LongLived>,
    reads: Reads,
    shutdown: Arc<Shutdown>,
    keep_alive: Duration,
}

impl EventService {
    /// `keep_alive`: the longest a follower goes without telling its reader it is there.
    pub fn new(ports: EventPorts, long_lived: Arc<LongLived>, keep_alive: Duration) -> Self {
        Self {
            ports: Arc::new(ports),
            long_lived,
            reads: Reads::new(),
            shutdown: Arc::default(),
            keep_alive,
        }
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

    /// Follows the agent's events of `types` after `after`, holding one of the agent's places
    /// for event streams while it lives.
    pub fn follow(
        &self,
        profile: &AgentProfile,
        after: u64,
        types: EventTypes,
    ) -> Result<EventFollower, FollowError> {
        let place = self
            .long_lived
            .enter(profile.agent.id, LongLivedKind::EventStream)
            .ok_or(FollowError::TooManyStreams)?;
        let notifications = self.ports.notifications.as_ref();
        Ok(EventFollower {
            ports: self.ports.clone(),
            reads: self.reads.clone(),
            shutdown: self.shutdown.clone(),
            waiter: Waiter::new(profile, self.ports.agents.clone()),
            stopping: notifications.subscribe(SHUTDOWN_TOPIC).shared(),
            revoked: notifications
                .subscribe(&revoked_topic(profile.agent.id))
                .shared(),
            position: after,
            types,
            pending: VecDeque::new(),
            started: false,
            key_checked: false,
            keep_alive: self.keep_alive,
            next_keep_alive: Instant::now() + self.keep_alive,
            _place: place,
        })
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
    /// Nothing new: the follower is still there.
    KeepAlive,
}

/// One reader's follow of an agent's log.
pub struct EventFollower {
    ports: Arc<EventPorts>,
    reads: Reads,
    shutdown: Arc<Shutdown>,
    waiter: Waiter,
    stopping: futures_util::future::Shared<ports::Wakeup>,
    revoked: futures_util::future::Shared<ports::Wakeup>,
    /// The last `seq` read (delivered or filtered out).
    position: u64,
    types: EventTypes,
    pending: VecDeque<EventRecord>,
    started: bool,
    key_checked: bool,
    keep_alive: Duration,
    next_keep_alive: Instant,
    _place: LongLivedPlace,
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
            if Instant::now() >= self.next_keep_alive {
                self.next_keep_alive = Instant::now() + self.keep_alive;
                return Ok(Some(FollowItem::KeepAlive));
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
            let left = self
                .next_keep_alive
                .saturating_duration_since(Instant::now());
            let asleep = self.ports.timer.sleep(left);
            let ended = select(self.stopping.clone(), self.revoked.clone());
            match select(woken, select(asleep, ended)).await {
                Either::Left(_) | Either::Right((Either::Left(_), _)) => {}
                Either::Right((Either::Right((Either::Left(_), _)), _)) => {
                    if self.shutdown.begun() {
                        return Ok(None);
                    }
                    self.stopping = self.ports.notifications.subscribe(SHUTDOWN_TOPIC).shared();
                }
                // A revocation, or the hub reconnecting: the key is read again to tell.
                Either::Right((Either::Right((Either::Right(_), _)), _)) => {
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
