//! Keyset pages: a store is asked for one item more than the page holds, which tells whether
//! another page follows without counting anything. A first page can be read against a version of
//! it the caller holds, so an unchanged listing costs one indexed read instead of a page; `Kept`
//! is how any answer read against a version the caller holds comes back.

use std::future::Future;

use domain::{CursorCodec, CursorPosition};
use ports::ListingVersion;

/// The page of at most `limit` items out of `fetched` (`limit + 1` asked for), and the cursor of
/// the next page when there is one, signed for `scope`.
pub(crate) fn into_page<T>(
    mut fetched: Vec<T>,
    limit: usize,
    cursors: &CursorCodec,
    scope: &str,
    position: impl Fn(&T) -> CursorPosition,
) -> (Vec<T>, Option<String>) {
    if fetched.len() <= limit {
        return (fetched, None);
    }
    fetched.truncate(limit);
    let next_cursor = fetched
        .last()
        .map(|last| cursors.encode(scope, position(last)));
    (fetched, next_cursor)
}

/// An answer (a listing's first page, a policy with its usage) read against a version of it the
/// caller holds with what it keeps of that version's answer (`H`, the answer as the caller
/// rendered it, say).
#[derive(Debug)]
pub enum Kept<T, H, V = ListingVersion> {
    /// Nothing the answer shows has changed since the version the caller holds: what it keeps is
    /// still the answer, and is handed back.
    Unchanged(H),
    /// The answer as it is now. `version` is the version it shows; `None` when a change committed
    /// while it was read, so it may show part of it.
    Read { value: T, version: Option<V> },
}

/// The listing's version, then, only when it is not `held`, the page and the version again. Every
/// change to a listing's rows counts in its version within the change's own transaction, so two
/// equal readings around the page's mean no change committed between them: the page shows exactly
/// that version.
pub(crate) async fn first_page_against<P, H, E, Version, Read>(
    held: Option<(ListingVersion, H)>,
    version: impl Fn() -> Version,
    read: impl FnOnce() -> Read,
) -> Result<Kept<P, H>, E>
where
    Version: Future<Output = Result<ListingVersion, E>>,
    Read: Future<Output = Result<P, E>>,
{
    let before = version().await?;
    if let Some((version, kept)) = held {
        if version == before {
            return Ok(Kept::Unchanged(kept));
        }
    }
    let page = read().await?;
    let after = version().await?;
    Ok(Kept::Read {
        value: page,
        version: (after == before).then_some(before),
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use domain::AgentId;
    use ports::Listing;
    use uuid::Uuid;

    use super::*;

    fn version(changes: i64) -> ListingVersion {
        ListingVersion {
            listing: Listing::Intents(AgentId(Uuid::from_u128(7))),
            changes,
        }
    }

    /// Reads the versions in `versions` one after the other, and counts the pages read.
    async fn read_against(
        held: Option<ListingVersion>,
        versions: &[i64],
    ) -> (Kept<&'static str, &'static str>, usize, usize) {
        let versions_read = Cell::new(0);
        let pages_read = Cell::new(0);
        let page = first_page_against::<_, _, (), _, _>(
            held.map(|version| (version, "kept page")),
            || {
                let next = versions[versions_read.get()];
                versions_read.set(versions_read.get() + 1);
                async move { Ok(version(next)) }
            },
            || {
                pages_read.set(pages_read.get() + 1);
                async { Ok("page") }
            },
        )
        .await
        .expect("no store error");
        (page, versions_read.get(), pages_read.get())
    }

    #[tokio::test]
    async fn a_held_version_that_is_still_the_listings_reads_no_page() {
        let (page, versions_read, pages_read) = read_against(Some(version(3)), &[3]).await;
        assert!(matches!(page, Kept::Unchanged("kept page")));
        assert_eq!((versions_read, pages_read), (1, 0));
    }

    #[tokio::test]
    async fn a_page_read_between_two_equal_versions_is_that_version() {
        for held in [None, Some(version(2))] {
            let (page, versions_read, pages_read) = read_against(held, &[3, 3]).await;
            assert!(
                matches!(page, Kept::Read { value: "page", version: Some(read) } if read == version(3))
            );
            assert_eq!((versions_read, pages_read), (2, 1));
        }
    }

    #[tokio::test]
    async fn a_page_read_while_the_listing_changed_is_no_version() {
        let (page, _, pages_read) = read_against(Some(version(2)), &[3, 4]).await;
        assert!(matches!(
            page,
            Kept::Read {
                value: "page",
                version: None
            }
        ));
        assert_eq!(pages_read, 1);
    }

    #[tokio::test]
    async fn the_same_count_of_another_listing_is_another_version() {
        let other = ListingVersion {
            listing: Listing::Intents(AgentId(Uuid::from_u128(8))),
            changes: 3,
        };
        let (page, _, pages_read) = read_against(Some(other), &[3, 3]).await;
        assert!(matches!(
            page,
            Kept::Read {
                version: Some(_),
                ..
            }
        ));
        assert_eq!(pages_read, 1);
    }
}
