//! First pages of listings as this instance last rendered them, kept with the version of the
//! listing they show. An agent polling its inbox or its intents is answered with the kept bytes
//! after one indexed read of the version (decision 0041), instead of a page read from the database
//! and rendered again.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, MutexGuard};

use actix_web::http::header::ContentType;
use actix_web::web::Bytes;
use actix_web::HttpResponse;
use app::FirstPage;
use domain::{AgentId, Direction};
use ports::ListingVersion;
use serde::Serialize;

use crate::errors::ApiError;

/// What the kept pages may hold in all: a few thousand pages of twenty messages.
pub const RENDERED_PAGES_BUDGET_BYTES: usize = 32 * 1024 * 1024;

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

struct KeptPage {
    version: ListingVersion,
    body: Bytes,
}

#[derive(Default)]
struct Kept {
    pages: HashMap<PageKey, KeptPage>,
    bytes: usize,
}

/// Bounded by the bytes of the bodies it keeps: past `budget_bytes`, pages are let go, whichever
/// the map yields first, until the new one fits.
pub struct RenderedPages {
    kept: Mutex<Kept>,
    budget_bytes: usize,
}

impl RenderedPages {
    pub fn new(budget_bytes: usize) -> Self {
        Self {
            kept: Mutex::new(Kept::default()),
            budget_bytes,
        }
    }

    /// The kept pages, locked. A panic while they were locked left them whole (each change to
    /// them is made by a few calls that do not panic), so a poisoned lock is taken as it is.
    fn kept(&self) -> MutexGuard<'_, Kept> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn held(&self, key: &PageKey) -> Option<(ListingVersion, Bytes)> {
        let kept = self.kept();
        kept.pages
            .get(key)
            .map(|page| (page.version, page.body.clone()))
    }

    fn keep(&self, key: PageKey, version: ListingVersion, body: Bytes) {
        if body.len() > self.budget_bytes {
            return;
        }
        let mut kept = self.kept();
        let Kept { pages, bytes } = &mut *kept;
        if let Some(replaced) = pages.remove(&key) {
            *bytes -= replaced.body.len();
        }
        while *bytes + body.len() > self.budget_bytes {
            let Some(evicted) = pages.keys().next().copied() else {
                break;
            };
            if let Some(page) = pages.remove(&evicted) {
                *bytes -= page.body.len();
            }
        }
        *bytes += body.len();
        pages.insert(key, KeptPage { version, body });
    }

    /// The number of pages kept and the bytes of their bodies.
    pub fn usage(&self) -> (usize, usize) {
        let kept = self.kept();
        (kept.pages.len(), kept.bytes)
    }

    /// Answers with the first page `key` names: `read` is given the version this instance holds
    /// of it (with its body), and the page it reads, when it reads one, is rendered by `render`
    /// and kept when it shows one version.
    pub async fn answer<P, E, Read, Out>(
        &self,
        key: PageKey,
        read: impl FnOnce(Option<(ListingVersion, Bytes)>) -> Read,
        render: impl FnOnce(P) -> Out,
    ) -> Result<HttpResponse, ApiError>
    where
        Read: Future<Output = Result<FirstPage<P, Bytes>, E>>,
        ApiError: From<E>,
        Out: Serialize,
    {
        let body = match read(self.held(&key)).await? {
            FirstPage::Unchanged(body) => body,
            FirstPage::Read { page, version } => {
                let body = Bytes::from(serde_json::to_vec(&render(page)).map_err(|error| {
                    ApiError::Internal(format!("rendering a first page: {error}"))
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
}
