//! Answers as this instance last rendered them, kept with the version they show: the first pages
//! of listings, and agents' policies with their usage. An agent polling its inbox, its intents or
//! its policy is answered with the kept bytes after one indexed read of the version (decision
//! 0041, 0063), instead of an answer read from the database and rendered again.

use std::future::Future;
use std::hash::Hash;

use actix_web::http::header::ContentType;
use actix_web::web::Bytes;
use actix_web::HttpResponse;
use app::Kept;
use domain::{AgentId, Direction};
use ports::ListingVersion;
use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{DefaultHashBuilder, OptionsBuilder, Weighter};
use serde::Serialize;

use crate::errors::ApiError;
use edge::Refusal;

/// What the kept first pages may hold in all: a few thousand pages of twenty messages.
pub const RENDERED_PAGES_BUDGET_BYTES: usize = 32 * 1024 * 1024;

/// What the kept policies may hold in all: about ten thousand agents' policies.
pub const RENDERED_POLICIES_BUDGET_BYTES: usize = 8 * 1024 * 1024;

/// What a kept page weighs on average, to size the cache's tables: twenty messages' previews.
const TYPICAL_PAGE_BYTES: usize = 8 * 1024;

/// What a kept policy weighs on average: its rules, a few recipients' caps and four windows.
const TYPICAL_POLICY_BYTES: usize = 1024;

/// The budget is split among this many independently locked parts (fewer for a small budget), and
/// an answer is kept only when it fits within about one part's share: 8 MiB of the pages' 32,
/// above what a page of a hundred messages' previews weighs but for escaped text; a larger one is
/// rendered on every read.
const PARTS: usize = 4;

/// Which first page: the listing and the query that shaped it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageKey {
    pub agent: AgentId,
    pub listing: PageListing,
    pub limit: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageListing {
    Inbox(Option<Direction>),
    Intents,
}

#[derive(Clone)]
struct KeptAnswer<V> {
    version: V,
    body: Bytes,
}

/// An answer weighs the bytes of its body, and at least one so that every answer can be let go.
#[derive(Clone)]
struct BodyBytes;

impl<K, V> Weighter<K, KeptAnswer<V>> for BodyBytes {
    fn weight(&self, _: &K, answer: &KeptAnswer<V>) -> u64 {
        answer.body.len().max(1) as u64
    }
}

/// Answers named by `K`, each kept at the version `V` it shows, bounded by the bytes of their
/// bodies: past the budget, answers not read again are let go first (quick_cache, decision 0049).
pub struct RenderedPages<K = PageKey, V = ListingVersion> {
    kept: Cache<K, KeptAnswer<V>, BodyBytes>,
}

/// Agents' policies with their usage, kept at the stamp they were read at.
pub type RenderedPolicies = RenderedPages<AgentId, app::UsageStamp>;

impl RenderedPages {
    /// First pages within `budget_bytes`.
    pub fn new(budget_bytes: usize) -> Self {
        Self::within(budget_bytes, TYPICAL_PAGE_BYTES)
    }
}

impl RenderedPolicies {
    /// Policies within `budget_bytes`.
    pub fn policies(budget_bytes: usize) -> Self {
        Self::within(budget_bytes, TYPICAL_POLICY_BYTES)
    }
}

impl<K: Eq + Hash + Clone, V: Clone> RenderedPages<K, V> {
    fn within(budget_bytes: usize, typical_bytes: usize) -> Self {
        let options = OptionsBuilder::new()
            .shards(PARTS)
            .estimated_items_capacity((budget_bytes / typical_bytes).max(1))
            .weight_capacity(budget_bytes as u64)
            .build()
            .expect("both capacities are set");
        Self {
            kept: Cache::with_options(
                options,
                BodyBytes,
                DefaultHashBuilder::default(),
                DefaultLifecycle::default(),
            ),
        }
    }

    fn held(&self, key: &K) -> Option<(V, Bytes)> {
        self.kept
            .get(key)
            .map(|answer| (answer.version, answer.body))
    }

    /// Keeps `body` as the answer `key` names at `version`. A body heavier than one part's share
    /// of the budget is not kept, and the answer it would have replaced is let go.
    fn keep(&self, key: K, version: V, body: Bytes) {
        self.kept.insert(key, KeptAnswer { version, body });
    }

    /// The number of answers kept and the bytes of their bodies.
    pub fn usage(&self) -> (usize, usize) {
        (self.kept.len(), self.kept.weight() as usize)
    }

    /// Answers with what `key` names: `read` is given the version this instance holds of it
    /// (with its body), and what it reads, when it reads anything, is rendered by `render` and
    /// kept when it shows one version.
    pub async fn answer<T, E, Read, Out>(
        &self,
        key: K,
        read: impl FnOnce(Option<(V, Bytes)>) -> Read,
        render: impl FnOnce(T) -> Out,
    ) -> Result<HttpResponse, ApiError>
    where
        Read: Future<Output = Result<Kept<T, Bytes, V>, E>>,
        ApiError: From<E>,
        Out: Serialize,
    {
        let body = match read(self.held(&key)).await? {
            Kept::Unchanged(body) => body,
            Kept::Read { value, version } => {
                let body = Bytes::from(serde_json::to_vec(&render(value)).map_err(|error| {
                    ApiError::Refused(Refusal::Internal(format!(
                        "rendering a kept answer: {error}"
                    )))
                })?);
                if let Some(version) = version {
                    self.keep(key, version, body.clone());
                }
                body
            }
        };
        Ok(HttpResponse::Ok()
            .content_type(ContentType::json())
            .body(body))
    }
}

#[cfg(test)]
mod tests {
    use ports::Listing;
    use uuid::Uuid;

    use super::*;

    fn key(agent: u128) -> PageKey {
        PageKey {
            agent: AgentId(Uuid::from_u128(agent)),
            listing: PageListing::Intents,
            limit: 20,
        }
    }

    fn version(agent: u128, changes: i64) -> ListingVersion {
        ListingVersion {
            listing: Listing::Intents(AgentId(Uuid::from_u128(agent))),
            changes,
        }
    }

    #[test]
    fn a_kept_page_is_held_with_its_version_until_replaced() {
        let pages = RenderedPages::new(1024);
        assert!(pages.held(&key(1)).is_none());
        pages.keep(key(1), version(1, 1), Bytes::from_static(b"first"));
        pages.keep(key(1), version(1, 2), Bytes::from_static(b"second"));
        assert_eq!(
            pages.held(&key(1)),
            Some((version(1, 2), Bytes::from_static(b"second")))
        );
        assert_eq!(pages.usage(), (1, 6));
    }

    #[test]
    fn the_bodies_kept_never_pass_the_budget() {
        let pages = RenderedPages::new(100);
        for agent in 0..50 {
            pages.keep(key(agent), version(agent, 1), Bytes::from(vec![b'x'; 30]));
            let (count, bytes) = pages.usage();
            assert!(bytes <= 100, "{bytes} bytes kept");
            assert_eq!(bytes, count * 30);
            assert!(pages.held(&key(agent)).is_some(), "the newest page is kept");
        }
        pages.keep(key(99), version(99, 1), Bytes::from(vec![b'x'; 101]));
        assert!(
            pages.held(&key(99)).is_none(),
            "a page past the budget alone"
        );
    }

    #[test]
    fn a_page_read_again_and_again_outlives_many_pages_read_once() {
        let pages = RenderedPages::new(40 * 30);
        pages.keep(key(0), version(0, 1), Bytes::from(vec![b'x'; 30]));
        for agent in 1..4_000 {
            pages.keep(key(agent), version(agent, 1), Bytes::from(vec![b'x'; 30]));
            assert!(
                pages.held(&key(0)).is_some(),
                "after {agent} pages read once"
            );
        }
        assert!(pages.usage().1 <= 40 * 30);
    }
}
