//! The agent's inbox as it reads it: pages, messages, searches, threads, attachments' downloads,
//! and the sender rules that say which inbound mail it takes.

use std::sync::Arc;

use domain::email::MAX_THREAD_MESSAGES;
use domain::inbound::{preview_attachments, preview_headers};
use domain::{
    AgentId, AgentProfile, AttachmentId, CursorCodec, CursorPosition, Direction, EmailMessageId,
    EmailMessageRecord, SearchQuery, SenderRules, ThreadRead, ThreadSummary, MAX_SEARCH_RESULTS,
};
use ports::{AttachmentContent, ListingVersion, Mailbox, SenderRuleStore, StoreError};
use uuid::Uuid;

use super::{inbox_of, AttachmentDownload, AttachmentError, ReadMailError, PREVIEW_CHARS};
use crate::long_lived::{LongLived, LongLivedKind};
use crate::paging::{first_page_against, into_page, Kept};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailPage {
    pub items: Vec<EmailMessageRecord>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadPage {
    pub items: Vec<ThreadSummary>,
    pub next_cursor: Option<String>,
}

/// An agent's sender rules and how much inbound mail they have kept out of its inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderRulesView {
    pub rules: SenderRules,
    pub kept_out_count: u64,
}

/// The ports reading the inbox works through.
pub struct MailboxPorts {
    pub mailbox: Arc<dyn Mailbox>,
    /// Where the bytes of kept attachments are read from.
    pub attachments: Arc<dyn AttachmentContent>,
    /// Each agent's sender rules.
    pub rules: Arc<dyn SenderRuleStore>,
}

pub struct MailboxService {
    ports: MailboxPorts,
    cursors: CursorCodec,
    /// Where each agent's downloads and searches under way are counted against their caps.
    long_lived: Arc<LongLived>,
}

fn inbox_scope(agent: AgentId) -> String {
    format!("email-inbox:{agent}")
}

fn threads_scope(agent: AgentId) -> String {
    format!("email-threads:{agent}")
}

/// A search's cursors are bound to the agent, the query and the direction.
fn search_scope(agent: AgentId, query: &SearchQuery, direction: Option<Direction>) -> String {
    let direction = direction.map_or("any", Direction::as_str);
    format!("email-search:{agent}:{direction}:{}", query.canonical())
}

/// Where a search's next page starts: results are ranked, not keyed, so its cursor holds the
/// count of results already read (in the position's time field, its id nil).
fn search_offset(position: CursorPosition) -> Option<usize> {
    let offset = usize::try_from(position.created_at_micros).ok()?;
    (position.id.is_nil() && offset <= MAX_SEARCH_RESULTS).then_some(offset)
}

impl MailboxService {
    pub fn new(ports: MailboxPorts, cursors: CursorCodec, long_lived: Arc<LongLived>) -> Self {
        Self {
            ports,
            cursors,
            long_lived,
        }
    }

    /// One page of the agent's inbox, newest first; bodies cut to `PREVIEW_CHARS`, headers and
    /// attachments to the first few (`domain::inbound::PREVIEW_*`).
    #[tracing::instrument(level = "debug", skip(self, profile, cursor), fields(agent = %profile.agent.id))]
    pub async fn inbox(
        &self,
        profile: &AgentProfile,
        direction: Option<Direction>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<MailPage, ReadMailError> {
        let scope = inbox_scope(profile.agent.id);
        let after = self
            .cursors
            .decode_optional(&scope, cursor)
            .map_err(|_| ReadMailError::InvalidCursor)?;
        let (inbox, _) = inbox_of(profile)?;
        let fetched = self
            .ports
            .mailbox
            .page(inbox.id, direction, after, limit + 1, PREVIEW_CHARS)
            .await?;
        let (items, next_cursor) = into_page(fetched, limit, &self.cursors, &scope, |last| {
            CursorPosition::of(last.created_at, last.id.0)
        });
        let items = items.into_iter().map(previewed).collect();
        Ok(MailPage { items, next_cursor })
    }

    /// The first page of the inbox, unless it is still the page at `held`, a version an earlier
    /// answer of this call gave, with what the caller keeps of its page (see `Kept`).
    #[tracing::instrument(level = "debug", skip(self, profile, held), fields(agent = %profile.agent.id))]
    pub async fn inbox_first_page<H>(
        &self,
        profile: &AgentProfile,
        direction: Option<Direction>,
        limit: usize,
        held: Option<(ListingVersion, H)>,
    ) -> Result<Kept<MailPage, H>, ReadMailError> {
        let (inbox, _) = inbox_of(profile)?;
        first_page_against(
            held,
            || async { Ok(self.ports.mailbox.listing_version(inbox.id).await?) },
            || self.inbox(profile, direction, None, limit),
        )
        .await
    }

    /// A message of the agent's inbox in full. Any id that is not one (malformed, unknown, of
    /// another inbox) is the same "not found", so nothing tells another agent's ids exist.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn message(
        &self,
        profile: &AgentProfile,
        id: &str,
    ) -> Result<EmailMessageRecord, ReadMailError> {
        let (inbox, _) = inbox_of(profile)?;
        let id = id
            .parse::<EmailMessageId>()
            .map_err(|_| ReadMailError::NotFound)?;
        self.ports
            .mailbox
            .message(inbox.id, id)
            .await?
            .ok_or(ReadMailError::NotFound)
    }

    /// One page of the messages matching `query`, best match first, ties newest first; bodies
    /// cut as an inbox page cuts them. A cursor is bound to its query: the same query, however
    /// written, reads on; another is refused as an invalid cursor. Pages reach the
    /// `MAX_SEARCH_RESULTS`-th result at most. Past `MAX_RANKED_MATCHES` matches, they come newest
    /// first. Each search holds one of the agent's places for searches while it runs.
    #[tracing::instrument(level = "debug", skip(self, profile, query, cursor), fields(agent = %profile.agent.id))]
    pub async fn search(
        &self,
        profile: &AgentProfile,
        query: &SearchQuery,
        direction: Option<Direction>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<MailPage, ReadMailError> {
        let scope = search_scope(profile.agent.id, query, direction);
        let offset = match cursor {
            None => 0,
            Some(cursor) => search_offset(
                self.cursors
                    .decode(&scope, cursor)
                    .map_err(|_| ReadMailError::InvalidCursor)?,
            )
            .ok_or(ReadMailError::InvalidCursor)?,
        };
        let (inbox, _) = inbox_of(profile)?;
        let _place = self
            .long_lived
            .enter(profile.agent.id, LongLivedKind::Search)
            .ok_or(ReadMailError::TooManySearches)?;
        let mut items = self
            .ports
            .mailbox
            .search(inbox.id, query, direction, offset, limit + 1, PREVIEW_CHARS)
            .await
            .map_err(|error| match error {
                StoreError::TimedOut(_) => ReadMailError::SearchTooLong,
                other => ReadMailError::Store(other),
            })?;
        let reached = offset + limit;
        let next_cursor = (items.len() > limit && reached < MAX_SEARCH_RESULTS).then(|| {
            self.cursors.encode(
                &scope,
                CursorPosition {
                    created_at_micros: i64::try_from(reached).unwrap_or(i64::MAX),
                    id: Uuid::nil(),
                },
            )
        });
        items.truncate(limit);
        let items = items.into_iter().map(previewed).collect();
        Ok(MailPage { items, next_cursor })
    }

    /// One page of the inbox's threads, the one with the newest message first.
    #[tracing::instrument(level = "debug", skip(self, profile, cursor), fields(agent = %profile.agent.id))]
    pub async fn threads(
        &self,
        profile: &AgentProfile,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ThreadPage, ReadMailError> {
        let scope = threads_scope(profile.agent.id);
        let after = self
            .cursors
            .decode_optional(&scope, cursor)
            .map_err(|_| ReadMailError::InvalidCursor)?;
        let (inbox, _) = inbox_of(profile)?;
        let fetched = self
            .ports
            .mailbox
            .threads(inbox.id, after, limit + 1)
            .await?;
        let (items, next_cursor) = into_page(fetched, limit, &self.cursors, &scope, |last| {
            CursorPosition::of(last.last_message_at, last.thread_id.0)
        });
        // A preview is read as a line: the text's trailing line breaks say nothing.
        let items = items
            .into_iter()
            .map(|mut thread| {
                thread.last_message_preview = thread
                    .last_message_preview
                    .map(|preview| preview.trim_end().to_owned());
                thread
            })
            .collect();
        Ok(ThreadPage { items, next_cursor })
    }

    /// A thread of the agent's inbox, described as its page of threads describes it, with its
    /// newest `MAX_THREAD_MESSAGES` messages, oldest first, in full. Any id that is not one of
    /// the inbox's threads is the same "not found".
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn thread(
        &self,
        profile: &AgentProfile,
        thread_id: &str,
    ) -> Result<ThreadRead, ReadMailError> {
        let (inbox, _) = inbox_of(profile)?;
        let thread_id = thread_id
            .parse::<EmailMessageId>()
            .map_err(|_| ReadMailError::NotFound)?;
        self.ports
            .mailbox
            .thread(inbox.id, thread_id, MAX_THREAD_MESSAGES)
            .await?
            .ok_or(ReadMailError::NotFound)
    }

    /// A stored attachment of a message of the agent's inbox, to download. Any message id that
    /// is not one of the inbox, and any attachment id it does not list, is the same "not found".
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn attachment(
        &self,
        profile: &AgentProfile,
        message_id: &str,
        attachment_id: &str,
    ) -> Result<AttachmentDownload, AttachmentError> {
        let (inbox, _) = inbox_of(profile)?;
        let message = message_id
            .parse::<EmailMessageId>()
            .map_err(|_| AttachmentError::NotFound)?;
        let wanted = attachment_id
            .parse::<AttachmentId>()
            .map_err(|_| AttachmentError::NotFound)?;
        let meta = self
            .ports
            .mailbox
            .attachments(inbox.id, message)
            .await?
            .and_then(|listed| listed.into_iter().find(|meta| meta.id == wanted))
            .ok_or(AttachmentError::NotFound)?;
        if !meta.stored {
            return Err(AttachmentError::NotStored);
        }
        let place = self
            .long_lived
            .enter(profile.agent.id, LongLivedKind::AttachmentDownload)
            .ok_or(AttachmentError::TooManyDownloads)?;
        Ok(AttachmentDownload {
            meta,
            message,
            content: Arc::clone(&self.ports.attachments),
            place: Some(place),
        })
    }

    /// The agent's sender rules, and how much mail they have kept out.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn sender_rules(
        &self,
        profile: &AgentProfile,
    ) -> Result<SenderRulesView, ReadMailError> {
        inbox_of(profile)?;
        let (rules, kept_out_count) = self.ports.rules.sender_rules(profile.agent.id).await?;
        Ok(SenderRulesView {
            rules,
            kept_out_count,
        })
    }

    /// Replaces the agent's sender rules; mail already stored stays.
    #[tracing::instrument(level = "debug", skip(self, profile, rules), fields(agent = %profile.agent.id))]
    pub async fn set_sender_rules(
        &self,
        profile: &AgentProfile,
        rules: SenderRules,
    ) -> Result<SenderRulesView, ReadMailError> {
        inbox_of(profile)?;
        let kept_out_count = self
            .ports
            .rules
            .set_sender_rules(profile.agent.id, &rules)
            .await?;
        Ok(SenderRulesView {
            rules,
            kept_out_count,
        })
    }
}

/// A message as an inbox page shows it: bodies cut by the store, the first headers and
/// attachments here; a message read shows everything kept.
fn previewed(mut message: EmailMessageRecord) -> EmailMessageRecord {
    message.headers = preview_headers(std::mem::take(&mut message.headers));
    message.attachments = preview_attachments(std::mem::take(&mut message.attachments));
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::test_support::{inbox, listed, profile, record};
    use crate::{LongLivedCaps, NotProvisioned};
    use domain::AttachmentMeta;
    use ports::{Listing, MockAttachmentContent, MockMailbox, MockSenderRuleStore};

    struct Mocks {
        mailbox: MockMailbox,
        attachments: MockAttachmentContent,
        rules: MockSenderRuleStore,
    }

    impl Mocks {
        fn new() -> Self {
            Self {
                mailbox: MockMailbox::new(),
                attachments: MockAttachmentContent::new(),
                rules: MockSenderRuleStore::new(),
            }
        }

        fn service(self) -> MailboxService {
            MailboxService::new(
                MailboxPorts {
                    mailbox: Arc::new(self.mailbox),
                    attachments: Arc::new(self.attachments),
                    rules: Arc::new(self.rules),
                },
                CursorCodec::new(b"test-secret-test-secret-test-secret"),
                LongLived::new(LongLivedCaps {
                    code_waits: 1,
                    event_streams: 1,
                    decision_waits: 1,
                    attachment_downloads: 1,
                    searches: 1,
                    request_body_bytes: 1 << 20,
                    live_lists: 1,
                }),
            )
        }
    }

    fn kept_meta(stored: bool, size: u64) -> AttachmentMeta {
        AttachmentMeta {
            stored,
            size,
            sha256: stored.then_some([7; 32]),
            ..listed("a.bin", None).meta
        }
    }

    #[tokio::test]
    async fn an_attachment_downloads_piece_by_piece_and_only_a_stored_one_of_the_inbox() {
        let size = domain::ATTACHMENT_PIECE_BYTES as u64 * 2 + 3;
        let mut mocks = Mocks::new();
        mocks.mailbox.expect_attachments().returning(move |_, id| {
            Ok((id == EmailMessageId(Uuid::from_u128(5))).then(|| {
                vec![
                    kept_meta(true, size),
                    AttachmentMeta {
                        id: AttachmentId::at_index(1),
                        ..kept_meta(false, 9)
                    },
                ]
            }))
        });
        let mut sequence = mockall::Sequence::new();
        for (index, bytes) in [
            (0u64, domain::ATTACHMENT_PIECE_BYTES),
            (1, domain::ATTACHMENT_PIECE_BYTES),
            (2, 3),
        ] {
            mocks
                .attachments
                .expect_piece()
                .withf(move |_, attachment, at| attachment.position() == 1 && *at == index)
                .times(1)
                .in_sequence(&mut sequence)
                .returning(move |_, _, _| Ok(Some(vec![1; bytes])));
        }
        let service = mocks.service();
        let message = Uuid::from_u128(5).to_string();
        let download = service
            .attachment(&profile(true), &message, "att_1")
            .await
            .expect("found");
        let pieces: Vec<Vec<u8>> = futures_util::TryStreamExt::try_collect(download.pieces())
            .await
            .expect("read");
        assert_eq!(pieces.iter().map(Vec::len).sum::<usize>() as u64, size);

        for (message_id, attachment_id) in [
            (message.as_str(), "att_3"),
            (message.as_str(), "att_0"),
            (message.as_str(), "1"),
            ("not-a-uuid", "att_1"),
            (&Uuid::from_u128(6).to_string(), "att_1"),
        ] {
            assert!(
                matches!(
                    service
                        .attachment(&profile(true), message_id, attachment_id)
                        .await,
                    Err(AttachmentError::NotFound)
                ),
                "{message_id} {attachment_id}"
            );
        }
        assert!(matches!(
            service.attachment(&profile(true), &message, "att_2").await,
            Err(AttachmentError::NotStored)
        ));
        assert!(matches!(
            service.attachment(&profile(false), &message, "att_1").await,
            Err(AttachmentError::NotProvisioned(_))
        ));
    }

    #[tokio::test]
    async fn bytes_that_end_before_the_size_kept_end_the_download_with_an_error() {
        let mut mocks = Mocks::new();
        mocks
            .mailbox
            .expect_attachments()
            .returning(|_, _| Ok(Some(vec![kept_meta(true, 10)])));
        mocks
            .attachments
            .expect_piece()
            .returning(|_, _, _| Ok(None));
        let download = mocks
            .service()
            .attachment(&profile(true), &Uuid::from_u128(5).to_string(), "att_1")
            .await
            .expect("found");
        let read: Result<Vec<Vec<u8>>, _> =
            futures_util::TryStreamExt::try_collect(download.pieces()).await;
        assert!(matches!(read, Err(StoreError::Internal(_))), "{read:?}");
    }

    #[tokio::test]
    async fn a_first_inbox_page_is_read_only_when_the_inbox_changed() {
        let version = |changes| ListingVersion {
            listing: Listing::Inbox(inbox().id),
            changes,
        };
        let mut mocks = Mocks::new();
        let mut versions = mockall::Sequence::new();
        for changes in [2, 3, 3] {
            mocks
                .mailbox
                .expect_listing_version()
                .withf(|asked| *asked == inbox().id)
                .times(1)
                .in_sequence(&mut versions)
                .returning(move |_| Ok(version(changes)));
        }
        mocks
            .mailbox
            .expect_page()
            .times(1)
            .returning(|_, direction, after, _, _| {
                assert_eq!((direction, after), (Some(Direction::Inbound), None));
                Ok(vec![record(Direction::Inbound, Some("bob@example.com"))])
            });
        let service = mocks.service();
        let held = service
            .inbox_first_page(
                &profile(true),
                Some(Direction::Inbound),
                20,
                Some((version(2), "kept")),
            )
            .await
            .expect("read");
        assert!(matches!(held, Kept::Unchanged("kept")));
        let read = service
            .inbox_first_page(
                &profile(true),
                Some(Direction::Inbound),
                20,
                Some((version(2), "kept")),
            )
            .await
            .expect("read");
        let Kept::Read {
            value: page,
            version: read,
        } = read
        else {
            panic!("the inbox changed: the page is read");
        };
        assert_eq!((page.items.len(), read), (1, Some(version(3))));
        assert!(matches!(
            service
                .inbox_first_page::<()>(&profile(false), None, 20, None)
                .await,
            Err(ReadMailError::NotProvisioned(NotProvisioned::EmailInbox))
        ));
    }

    #[tokio::test]
    async fn searches_beyond_the_agents_cap_are_refused_and_one_past_its_time_says_so() {
        let mut mocks = Mocks::new();
        mocks
            .mailbox
            .expect_search()
            .times(1)
            .returning(|_, _, _, _, _, _| Err(StoreError::TimedOut("statement timeout".into())));
        let service = mocks.service();
        let agent = profile(true);
        let query = SearchQuery::parse("invoice").expect("query");

        let running = service
            .long_lived
            .enter(agent.agent.id, LongLivedKind::Search)
            .expect("the one search allowed");
        assert!(matches!(
            service.search(&agent, &query, None, None, 20).await,
            Err(ReadMailError::TooManySearches)
        ));
        drop(running);
        assert!(matches!(
            service.search(&agent, &query, None, None, 20).await,
            Err(ReadMailError::SearchTooLong)
        ));
        assert!(
            service
                .long_lived
                .enter(agent.agent.id, LongLivedKind::Search)
                .is_some(),
            "a search that ended gave its place back"
        );
    }
}
