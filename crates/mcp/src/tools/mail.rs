//! The mail tools: the inbox, its conversations and attachments, and the outbox.

use api_types::{
    search_query, AttachmentOut, EmailForward, EmailForwardRequest, EmailInboxPage,
    EmailMessageOut, EmailReply, EmailReplyRequest, EmailSend, EmailSendRequest, EmailSendResponse,
    RequestPart, ThreadDetailOut, ThreadOut, ThreadPageOut,
};
use app::{ForwardMail, ReplyMail, SendMail};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use domain::keys::Scope;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use rmcp::{tool, tool_router};
use serde_json::Value;

use super::{input, input_with_body, to_json, AgentTools, Caller};
use crate::answers::answer;
use crate::arguments::{
    Arguments, AttachmentArguments, BodyArguments, ForwardTarget, ListInboxArguments,
    ListThreadsArguments, MessageArguments, ReplyTarget, SearchMessagesArguments, SendKey,
    ThreadArguments,
};

/// The largest attachment `get_attachment` carries in its answer; a larger one is downloaded
/// from its URL.
const INLINE_ATTACHMENT_BYTES: u64 = 1024 * 1024;

#[tool_router(router = mail_router, vis = "pub(super)")]
impl AgentTools {
    #[tool(
        name = "list_inbox",
        meta = super::needs(Scope::EmailRead),
        title = "List the inbox",
        description = "A page of the agent's mail, received and sent, newest first. Bodies are cut \
to their first 4,096 characters here: read a whole message with get_message. Pass next_cursor as \
cursor for the next page.",
        input_schema = input::<ListInboxArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_inbox(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ListInboxArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let limit = or_refuse!(arguments.limit());
        let page = or_refuse!(
            self.services()
                .mail
                .mailbox
                .inbox(
                    &caller.profile,
                    arguments.direction.map(Into::into),
                    arguments.cursor.as_deref(),
                    limit,
                )
                .await
        );
        answer(EmailInboxPage {
            items: page.items.into_iter().map(EmailMessageOut::from).collect(),
            next_cursor: page.next_cursor,
        })
    }

    #[tool(
        name = "get_message",
        meta = super::needs(Scope::EmailRead),
        title = "Read a message",
        description = "One message of the agent's inbox with its whole body, its headers, the \
verification codes found in it and whether its sender was authenticated.",
        input_schema = input::<MessageArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_message(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<MessageArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let message = or_refuse!(
            self.services()
                .mail
                .mailbox
                .message(&caller.profile, &arguments.message_id)
                .await
        );
        answer(EmailMessageOut::from(message))
    }

    #[tool(
        name = "list_threads",
        meta = super::needs(Scope::EmailRead),
        title = "List conversations",
        description = "A page of the agent's conversations (threads: a mail and its replies), the \
one with the newest message first, each with its subject, participants, message count and a \
preview of its newest message. Read one whole with get_thread. Pass next_cursor as cursor for \
the next page.",
        input_schema = input::<ListThreadsArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_threads(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ListThreadsArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let limit = or_refuse!(arguments.limit());
        let page = or_refuse!(
            self.services()
                .mail
                .mailbox
                .threads(&caller.profile, arguments.cursor.as_deref(), limit)
                .await
        );
        answer(ThreadPageOut {
            items: page.items.into_iter().map(ThreadOut::from).collect(),
            next_cursor: page.next_cursor,
        })
    }

    #[tool(
        name = "get_thread",
        meta = super::needs(Scope::EmailRead),
        title = "Read a conversation",
        description = "One conversation of the agent's inbox, its messages oldest first with their \
whole bodies (its newest 100 when it is longer; earlier_messages_omitted counts the rest).",
        input_schema = input::<ThreadArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_thread(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ThreadArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let thread = or_refuse!(
            self.services()
                .mail
                .mailbox
                .thread(&caller.profile, &arguments.thread_id)
                .await
        );
        answer(ThreadDetailOut::from(thread))
    }

    #[tool(
        name = "search_messages",
        meta = super::needs(Scope::EmailRead),
        title = "Search the inbox",
        description = "Messages of the agent's inbox matching a query, best match first: words that \
must all appear (in any order, case and accents aside) in the subject, sender, recipients or \
text, narrowed by from:ADDRESS, to:ADDRESS, has:attachment, after:YYYY-MM-DD and \
before:YYYY-MM-DD. Bodies are cut as list_inbox cuts them. Pass next_cursor as cursor, with the \
same query, for the next page.",
        input_schema = input::<SearchMessagesArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_messages(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<SearchMessagesArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let query = or_refuse!(search_query(
            RequestPart::Body,
            "query",
            Some(&arguments.query)
        ));
        let limit = or_refuse!(arguments.limit());
        let page = or_refuse!(
            self.services()
                .mail
                .mailbox
                .search(
                    &caller.profile,
                    &query,
                    arguments.direction.map(Into::into),
                    arguments.cursor.as_deref(),
                    limit,
                )
                .await
        );
        answer(EmailInboxPage {
            items: page.items.into_iter().map(EmailMessageOut::from).collect(),
            next_cursor: page.next_cursor,
        })
    }

    #[tool(
        name = "get_attachment",
        meta = super::needs(Scope::EmailRead),
        title = "Open an attachment",
        description = "An attachment of a message of the agent's inbox: what it is, the URL its \
bytes download from with the agent's key, and, for one of at most 1 MiB, its bytes as an \
embedded resource (text for a text type). Listed attachments with stored false were not kept.",
        input_schema = input::<AttachmentArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_attachment(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<AttachmentArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let download = or_refuse!(
            self.services()
                .mail
                .mailbox
                .attachment(
                    &caller.profile,
                    &arguments.message_id,
                    &arguments.attachment_id,
                )
                .await
        );
        let meta = download.meta.clone();
        let download_url = format!(
            "{}/v1/email/messages/{}/attachments/{}",
            self.toolbox.public_base_url, arguments.message_id, meta.id
        );
        let mut described = to_json(&AttachmentOut::from(meta.clone()));
        if let Value::Object(fields) = &mut described {
            fields.insert("download_url".into(), Value::String(download_url.clone()));
        }
        let mut result = answer(&described);
        if meta.size > INLINE_ATTACHMENT_BYTES {
            return result;
        }
        let bytes = or_refuse!(download.whole().await).to_vec();
        let mime_type = domain::download_content_type(&meta.content_type).to_owned();
        let blob = |bytes: Vec<u8>| ResourceContents::BlobResourceContents {
            uri: download_url.clone(),
            mime_type: Some(mime_type.clone()),
            blob: BASE64.encode(bytes),
            meta: None,
        };
        let contents = match mime_type.starts_with("text/") {
            true => match String::from_utf8(bytes) {
                Ok(text) => ResourceContents::TextResourceContents {
                    uri: download_url.clone(),
                    mime_type: Some(mime_type.clone()),
                    text,
                    meta: None,
                },
                Err(binary) => blob(binary.into_bytes()),
            },
            false => blob(bytes),
        };
        result.content.push(ContentBlock::resource(contents));
        result
    }

    #[tool(
        name = "send_email",
        meta = super::needs(Scope::EmailSend),
        title = "Send a mail",
        description = "Sends a plain-text mail from the agent's inbox. It is accepted `queued` and \
handed to the mail provider right after; an accepted mail is never lost. Pass an idempotency_key \
whenever you might call again for the same mail: the same key and mail never mail twice. Too \
many sends are refused with a retry_after in seconds.",
        input_schema = input_with_body::<SendKey, EmailSendRequest>(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn send_email(
        &self,
        caller: Caller,
        BodyArguments(arguments): BodyArguments<SendKey, EmailSendRequest>,
    ) -> CallToolResult {
        let (key, body) = or_refuse!(arguments);
        let mail = or_refuse!(SendMail::try_from(EmailSend {
            body,
            idempotency_key: key.idempotency_key.as_deref().map(str::as_bytes),
        }));
        let (message, _) = or_refuse!(
            self.services()
                .mail
                .outbound
                .send(&caller.principal(), mail)
                .await
        );
        answer(EmailSendResponse::from(message))
    }

    #[tool(
        name = "reply_email",
        meta = super::needs(Scope::EmailSend),
        title = "Reply to a mail",
        description = "Replies to a message the agent received, in its thread: to its sender, with \
the subject prefixed `Re:`. Same outbox, limits and idempotency_key as send_email.",
        input_schema = input_with_body::<ReplyTarget, EmailReplyRequest>(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn reply_email(
        &self,
        caller: Caller,
        BodyArguments(arguments): BodyArguments<ReplyTarget, EmailReplyRequest>,
    ) -> CallToolResult {
        let (target, body) = or_refuse!(arguments);
        let reply = or_refuse!(ReplyMail::try_from(EmailReply {
            body,
            idempotency_key: target.idempotency_key.as_deref().map(str::as_bytes),
        }));
        let (message, _) = or_refuse!(
            self.services()
                .mail
                .outbound
                .reply(&caller.principal(), &target.message_id, reply)
                .await
        );
        answer(EmailSendResponse::from(message))
    }

    #[tool(
        name = "forward_email",
        meta = super::needs(Scope::EmailSend),
        title = "Forward a mail",
        description = "Forwards a message of the agent's inbox to new recipients: subject `Fwd:`, \
your body_text above the original quoted, and its stored attachments attached (then yours). Same \
outbox, limits and idempotency_key as send_email.",
        input_schema = input_with_body::<ForwardTarget, EmailForwardRequest>(),
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn forward_email(
        &self,
        caller: Caller,
        BodyArguments(arguments): BodyArguments<ForwardTarget, EmailForwardRequest>,
    ) -> CallToolResult {
        let (target, body) = or_refuse!(arguments);
        let forward = or_refuse!(ForwardMail::try_from(EmailForward {
            body,
            idempotency_key: target.idempotency_key.as_deref().map(str::as_bytes),
        }));
        let (message, _) = or_refuse!(
            self.services()
                .mail
                .outbound
                .forward(&caller.principal(), &target.message_id, forward)
                .await
        );
        answer(EmailSendResponse::from(message))
    }
}
