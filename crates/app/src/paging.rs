//! Keyset pages: a store is asked for one item more than the page holds, which tells whether
//! another page follows without counting anything.

use domain::{CursorCodec, CursorPosition};

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
