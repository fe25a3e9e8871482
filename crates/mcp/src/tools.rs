//! The seventeen tools: each one the use case of its REST route, called with the same command
//! and the authenticated agent's profile, its answer rendered in the route's shapes. No tool
//! confirms or rejects a transfer: money only moves once an operator decides.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use api_types::{
    search_query, AgentResponse, AttachmentOut, CodeOut, EmailForward, EmailInboxPage,
    EmailMessageOut, EmailReply, EmailSend, EmailSendResponse, EventOut, EventPage,
    PolicyVerdictOut, RequestPart, SendStatus, SmsMessageOut, SpendPolicyResponse, SpendUsageOut,
    ThreadDetailOut, ThreadOut, ThreadPageOut, TransferIntentOut, TransferIntentPage,
    WalletAssetBalance, WalletBalanceResponse,
};
use app::{
    ChannelsWait, Decision, ForwardMail, FoundCode, PolicyUsage, ReplyMail, SendError, SendMail,
    SendRequest, Services, WaitError,
};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use domain::AgentProfile;
use edge::Refusal;
use rmcp::handler::server::common::{schema_for_empty_input, schema_for_input, FromContextPart};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ResourceContents, ResultType, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::answers::{answer, refused, refused_with, reporting_progress};
use crate::arguments::{
    Arguments, AttachmentArguments, CreateTransferArguments, ForwardEmailArguments,
    IntentArguments, ListEventsArguments, ListInboxArguments, ListIntentsArguments,
    ListSmsArguments, ListThreadsArguments, MessageArguments, ReplyEmailArguments,
    SearchMessagesArguments, SendEmailArguments, ThreadArguments, WaitForCodeArguments,
    WaitForDecisionArguments,
};

/// The protocol versions served: the last with an `initialize` handshake, and the stateless one.
pub const PROTOCOL_VERSIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

/// How often a wait tells a call that asked for progress how long it has waited: within the
/// 5 s the contract allows, with room for a busy instance's timers.
const PROGRESS_EVERY: Duration = Duration::from_secs(4);

/// The largest attachment `get_attachment` carries in its answer; a larger one is downloaded
/// from its URL.
const INLINE_ATTACHMENT_BYTES: u64 = 1024 * 1024;

/// What the server tells a model about itself when it connects.
const INSTRUCTIONS: &str = "You act as one agent of agent-runtime: the key you were given is \
this agent's identity. Call get_me first: it tells which of an email inbox, a phone number and a \
USDC wallet on Base the agent has, and the tools of a resource it lacks will refuse. Mail is sent \
through an outbox (`queued`, then `sent`). wait_for_code waits for a verification code by SMS or \
mail. Money never moves on your word alone: create_transfer_intent records a transfer the spend \
policy allows, and an operator confirms or rejects it at its approval_url; \
wait_for_transfer_decision waits for that decision. Amounts are strings of atomic units (USDC has \
6 decimals: \"1000000\" is 1 USDC). A refusal comes back as a result with isError and the reason; \
read it and change what it names rather than retrying as is.";

/// The agent that called, from the key the transport authenticated, and the tools this
/// connection may use (all of them unless its URL named some with `?tools=`).
#[derive(Debug, Clone)]
pub struct Caller {
    pub profile: Arc<AgentProfile>,
    pub tools: Option<Arc<[String]>>,
}

impl Caller {
    fn may_use(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == tool))
    }

    /// The caller of a request the transport admitted: it put the caller among the request's
    /// extensions, which rmcp hands on with the request's parts.
    fn of(context: &RequestContext<RoleServer>) -> Result<Self, ErrorData> {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
            .cloned()
            .ok_or_else(|| ErrorData::internal_error("the request was not authenticated", None))
    }
}

impl<'a> FromContextPart<ToolCallContext<'a, AgentTools>> for Caller {
    fn from_context_part(context: &mut ToolCallContext<'a, AgentTools>) -> Result<Self, ErrorData> {
        Self::of(&context.request_context)
    }
}

/// The tools, their settings and the use cases they call; built once, shared by every request.
pub struct Toolbox {
    pub services: Arc<Services>,
    router: ToolRouter<AgentTools>,
    /// `PUBLIC_BASE_URL` without its trailing slash: where an operator's console is.
    public_base_url: String,
}

impl Toolbox {
    pub fn new(services: Arc<Services>, public_base_url: &str) -> Self {
        Self {
            services,
            router: AgentTools::tool_router(),
            public_base_url: public_base_url.trim_end_matches('/').to_owned(),
        }
    }

    /// Every tool, by name.
    pub fn tools(&self) -> Vec<Tool> {
        self.router.list_all()
    }

    pub fn has_tool(&self, name: &str) -> bool {
        self.router.has_route(name)
    }

    /// The console page where an operator decides on the intent.
    fn approval_url(&self, intent: &TransferIntentOut) -> String {
        format!("{}/console/intents/{}", self.public_base_url, intent.id)
    }
}

/// Every tool, by name, as `tools/list` describes them to a caller that may use them all.
pub fn tool_catalog() -> Vec<Tool> {
    AgentTools::tool_router().list_all()
}

/// The tools of one MCP request.
#[derive(Clone)]
pub struct AgentTools {
    toolbox: Arc<Toolbox>,
}

impl AgentTools {
    pub fn new(toolbox: Arc<Toolbox>) -> Self {
        Self { toolbox }
    }

    fn services(&self) -> &Services {
        &self.toolbox.services
    }
}

/// The input schema of a tool taking `T`.
fn input<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>()
        .unwrap_or_else(|error| panic!("the arguments of a tool are an object: {error}"))
}

/// The value of what succeeded (arguments read, a command made, a use case done), or the tool's
/// answer that refuses with what failed.
macro_rules! or_refuse {
    ($outcome:expr) => {
        match $outcome {
            Ok(value) => value,
            Err(error) => return refused(Refusal::from(error)),
        }
    };
}

/// A wait for a code's answer.
#[derive(Serialize)]
struct CodeAnswer {
    /// Whether a code came.
    found: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<CodeOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

/// The wallet as a model needs it in one call.
#[derive(Serialize)]
struct WalletAnswer {
    address: String,
    chain: String,
    balances: Vec<WalletAssetBalance>,
    policy: SpendPolicyResponse,
    usage: SpendUsageOut,
}

#[derive(Serialize)]
struct TransferAnswer {
    intent: TransferIntentOut,
    /// True when the idempotency key had made this intent before: nothing new was created.
    replayed: bool,
    verdict: PolicyVerdictOut,
    approval_url: String,
}

#[derive(Serialize)]
struct DecisionAnswer {
    /// Whether the intent left `pending_confirmation`; its `status` tells how.
    decided: bool,
    intent: TransferIntentOut,
    approval_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

#[derive(Serialize)]
struct SmsAnswer {
    items: Vec<SmsMessageOut>,
    /// False when the SMS provider could not be reached: only what was stored before is shown.
    synced: bool,
}

#[tool_router(router = tool_router, vis = "pub(crate)")]
impl AgentTools {
    #[tool(
        name = "get_me",
        title = "Get this agent",
        description = "The agent this key belongs to and what it has: its email inbox address, its \
phone number and its wallet (address and spend policy), each null when the agent has none. Call \
it first: tools of a resource the agent lacks refuse.",
        input_schema = schema_for_empty_input(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_me(&self, caller: Caller) -> CallToolResult {
        let shown = or_refuse!(self.services().wallets.shown_policy(&caller.profile).await);
        answer(AgentResponse::with_usage(
            &caller.profile,
            shown.as_ref().map(PolicyUsage::parts),
        ))
    }

    #[tool(
        name = "list_inbox",
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
        answer(ThreadDetailOut::new(
            thread.thread_id,
            thread.messages,
            thread.earlier_omitted,
        ))
    }

    #[tool(
        name = "search_messages",
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
        title = "Send a mail",
        description = "Sends a plain-text mail from the agent's inbox. It is accepted `queued` and \
handed to the mail provider right after; an accepted mail is never lost. Pass an idempotency_key \
whenever you might call again for the same mail: the same key and mail never mail twice. Too \
many sends are refused with a retry_after in seconds.",
        input_schema = input::<SendEmailArguments>(),
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
        Arguments(arguments): Arguments<SendEmailArguments>,
    ) -> CallToolResult {
        let (body, key) = or_refuse!(arguments).into_request();
        let mail = or_refuse!(SendMail::try_from(EmailSend {
            body,
            idempotency_key: key.as_deref().map(str::as_bytes),
        }));
        let (message, _) = or_refuse!(
            self.services()
                .mail
                .outbound
                .send(&caller.profile, mail)
                .await
        );
        answer(EmailSendResponse {
            status: SendStatus::Sent,
            data: message.into(),
        })
    }

    #[tool(
        name = "reply_email",
        title = "Reply to a mail",
        description = "Replies to a message the agent received, in its thread: to its sender, with \
the subject prefixed `Re:`. Same outbox, limits and idempotency_key as send_email.",
        input_schema = input::<ReplyEmailArguments>(),
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
        Arguments(arguments): Arguments<ReplyEmailArguments>,
    ) -> CallToolResult {
        let (message_id, body, key) = or_refuse!(arguments).into_request();
        let reply = or_refuse!(ReplyMail::try_from(EmailReply {
            body,
            idempotency_key: key.as_deref().map(str::as_bytes),
        }));
        let (message, _) = or_refuse!(
            self.services()
                .mail
                .outbound
                .reply(&caller.profile, &message_id, reply)
                .await
        );
        answer(EmailSendResponse {
            status: SendStatus::Sent,
            data: message.into(),
        })
    }

    #[tool(
        name = "forward_email",
        title = "Forward a mail",
        description = "Forwards a message of the agent's inbox to new recipients: subject `Fwd:`, \
your body_text above the original quoted, and its stored attachments attached (then yours). Same \
outbox, limits and idempotency_key as send_email.",
        input_schema = input::<ForwardEmailArguments>(),
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
        Arguments(arguments): Arguments<ForwardEmailArguments>,
    ) -> CallToolResult {
        let (message_id, body, key) = or_refuse!(arguments).into_request();
        let forward = or_refuse!(ForwardMail::try_from(EmailForward {
            body,
            idempotency_key: key.as_deref().map(str::as_bytes),
        }));
        let (message, _) = or_refuse!(
            self.services()
                .mail
                .outbound
                .forward(&caller.profile, &message_id, forward)
                .await
        );
        answer(EmailSendResponse {
            status: SendStatus::Sent,
            data: message.into(),
        })
    }

    #[tool(
        name = "list_sms",
        title = "List text messages",
        description = "The text messages of the agent's phone number, newest first, with the \
verification code found in each. The provider is asked for new ones first; `synced` is false when \
it could not be reached.",
        input_schema = input::<ListSmsArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_sms(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ListSmsArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let (limit, offset) = or_refuse!(arguments.window());
        let history = or_refuse!(
            self.services()
                .sms
                .messages(
                    &caller.profile,
                    arguments.direction.map(Into::into),
                    limit,
                    offset
                )
                .await
        );
        answer(SmsAnswer {
            items: history.messages.iter().map(SmsMessageOut::from).collect(),
            synced: history.synced,
        })
    }

    #[tool(
        name = "wait_for_code",
        title = "Wait for a verification code",
        description = "Waits for a verification code sent to the agent by SMS or mail, up to \
`timeout` seconds (at most 55), and returns the code with the message it came in. A code that \
arrived already and was not returned before is returned at once. With a service_name, only a code \
from that service counts. When none comes in time the answer is `found: false`: call again to \
keep waiting. Call it right after asking a service to send the code.",
        input_schema = input::<WaitForCodeArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn wait_for_code(
        &self,
        caller: Caller,
        context: RequestContext<RoleServer>,
        Arguments(arguments): Arguments<WaitForCodeArguments>,
    ) -> CallToolResult {
        let request = or_refuse!(or_refuse!(arguments).into_request());
        let wait = or_refuse!(ChannelsWait::try_from(request));
        let (timeout, request_id) = (wait.wait.timeout, wait.wait.request_id.clone());
        let waited = reporting_progress(
            &context,
            "waiting for a verification code",
            timeout,
            PROGRESS_EVERY,
            self.services().codes.wait(&caller.profile, wait),
        )
        .await;
        match waited {
            None => refused(cancelled()),
            Some(Ok(found)) => answer(CodeAnswer {
                found: true,
                code: Some(match &found {
                    FoundCode::Sms(message) => CodeOut::from_sms(message, request_id),
                    FoundCode::Email(message) => CodeOut::from_email(message, request_id),
                }),
                detail: None,
            }),
            Some(Err(WaitError::TimedOut)) => answer(CodeAnswer {
                found: false,
                code: None,
                detail: Some(format!(
                    "No new verification code arrived within {} s; call wait_for_code again to \
                     keep waiting.",
                    timeout.as_secs()
                )),
            }),
            Some(Err(error)) => refused(error.into()),
        }
    }

    #[tool(
        name = "get_wallet",
        title = "Get the wallet",
        description = "The agent's wallet on Base: its address, its balances read from the chain \
now (native and USDC, in atomic units and formatted), the spend policy in force and what is left \
of each capped window (`usage`).",
        input_schema = schema_for_empty_input(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_wallet(&self, caller: Caller) -> CallToolResult {
        let wallets = &self.services().wallets;
        let balances = or_refuse!(wallets.balances(&caller.profile).await);
        let usage = or_refuse!(wallets.usage(&caller.profile).await);
        let balances = WalletBalanceResponse::from(&balances);
        answer(WalletAnswer {
            address: balances.address,
            chain: balances.chain,
            balances: balances.assets,
            policy: SpendPolicyResponse::with_usage(&usage.policy, &usage.windows),
            usage: usage.windows.as_slice().into(),
        })
    }

    #[tool(
        name = "create_transfer_intent",
        title = "Ask for a USDC transfer",
        description = "Asks for a transfer of USDC on Base from the agent's wallet. The spend \
policy is checked at once: a transfer it refuses comes back as an error naming the rule and what \
is left of each window. One it allows is recorded as an intent: `confirmed` when the policy's \
auto-confirm tier takes it (it executes without an operator), otherwise `pending_confirmation`, \
and no money moves until the operators it needs approve it at approval_url; then call \
wait_for_transfer_decision. The \
idempotency_key is required: use one key per payment, and call again with the same key (never a \
new one) when unsure whether the first call went through.",
        input_schema = input::<CreateTransferArguments>(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn create_transfer_intent(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<CreateTransferArguments>,
    ) -> CallToolResult {
        let request = or_refuse!(SendRequest::try_from(or_refuse!(arguments).into_request()));
        let wallets = &self.services().wallets;
        let sent = match wallets.send(&caller.profile, request).await {
            Ok(sent) => Ok(sent),
            Err(SendError::Policy(violation)) => Err(violation),
            Err(error) => return refused(error.into()),
        };
        // What is left of each window once the policy has judged, for the verdict.
        let windows = or_refuse!(wallets.usage(&caller.profile).await).windows;
        match sent {
            Ok((intent, replayed)) => {
                let admitted_as = intent.admitted_as();
                let intent = TransferIntentOut::from(&intent);
                answer(TransferAnswer {
                    approval_url: self.toolbox.approval_url(&intent),
                    intent,
                    replayed,
                    verdict: PolicyVerdictOut::allowed(admitted_as, &windows),
                })
            }
            Err(violation) => {
                let verdict = PolicyVerdictOut::of(&Err(violation), &windows);
                refused_with(
                    SendError::Policy(violation).into(),
                    Map::from_iter([("verdict".to_owned(), to_json(&verdict))]),
                )
            }
        }
    }

    #[tool(
        name = "get_transfer_intent",
        title = "Get a transfer intent",
        description = "One of the agent's transfer intents as it stands now: \
`pending_confirmation` (waiting for an operator), `confirmed`, `submitted` (sent to the chain), \
`executed` (mined, see tx_hash), `failed` (the money did not and will not move), `rejected` or \
`expired`.",
        input_schema = input::<IntentArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_transfer_intent(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<IntentArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let intent = or_refuse!(
            self.services()
                .wallets
                .intent(&caller.profile, &arguments.intent_id)
                .await
        );
        answer(TransferIntentOut::from(&intent))
    }

    #[tool(
        name = "list_transfer_intents",
        title = "List transfer intents",
        description = "A page of the agent's transfer intents, newest first. Pass next_cursor as \
cursor for the next page.",
        input_schema = input::<ListIntentsArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_transfer_intents(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ListIntentsArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let limit = or_refuse!(arguments.limit());
        let page = or_refuse!(
            self.services()
                .wallets
                .intents(&caller.profile, arguments.cursor.as_deref(), limit)
                .await
        );
        answer(TransferIntentPage {
            items: page.items.iter().map(TransferIntentOut::from).collect(),
            next_cursor: page.next_cursor,
        })
    }

    #[tool(
        name = "wait_for_transfer_decision",
        title = "Wait for an operator's decision",
        description = "Waits until an operator confirms or rejects a transfer intent (or it \
expires), up to `timeout` seconds (at most 55), and returns the intent. When no decision comes in \
time the answer is `decided: false` with the intent still `pending_confirmation`: call again to \
keep waiting. A confirmed intent then moves on to `submitted` and `executed` by itself.",
        input_schema = input::<WaitForDecisionArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn wait_for_transfer_decision(
        &self,
        caller: Caller,
        context: RequestContext<RoleServer>,
        Arguments(arguments): Arguments<WaitForDecisionArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let timeout = or_refuse!(arguments.timeout());
        let waited = reporting_progress(
            &context,
            "waiting for an operator's decision",
            timeout,
            PROGRESS_EVERY,
            self.services()
                .decisions
                .wait(&caller.profile, &arguments.intent_id, timeout),
        )
        .await;
        let (decided, intent) = match waited {
            None => return refused(cancelled()),
            Some(Err(error)) => return refused(error.into()),
            Some(Ok(Decision::Decided(intent))) => (true, intent),
            Some(Ok(Decision::Pending(intent))) => (false, intent),
        };
        let intent = TransferIntentOut::from(&intent);
        answer(DecisionAnswer {
            decided,
            approval_url: self.toolbox.approval_url(&intent),
            intent,
            detail: (!decided).then(|| {
                format!(
                    "No operator decided within {} s; the intent is still pending_confirmation. \
                     Call wait_for_transfer_decision again to keep waiting.",
                    timeout.as_secs()
                )
            }),
        })
    }

    #[tool(
        name = "list_events",
        title = "List events",
        description = "The agent's events, oldest first: mail received, sent or failed, SMS \
received, and every move of a transfer intent. Pass next_after as `after` to read on; remember \
the last seq you handled to pick up from there later.",
        input_schema = input::<ListEventsArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_events(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ListEventsArguments>,
    ) -> CallToolResult {
        let (after, limit, types) = or_refuse!(or_refuse!(arguments).page());
        let page = or_refuse!(
            self.services()
                .events
                .page(&caller.profile, after, types, limit)
                .await
        );
        answer(EventPage {
            items: page.items.iter().map(EventOut::from).collect(),
            next_after: page.next_after,
        })
    }
}

/// A call whose client left before its answer.
fn cancelled() -> Refusal {
    Refusal::BadRequest("The call was cancelled".into())
}

fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl ServerHandler for AgentTools {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info.server_info = Implementation::new("agent-runtime", env!("CARGO_PKG_VERSION"))
            .with_title("agent-runtime");
        info.instructions = Some(INSTRUCTIONS.to_owned());
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = Caller::of(&context)?;
        let stateless = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        let mut listed = ListToolsResult::with_all_items(
            self.toolbox
                .tools()
                .into_iter()
                .filter(|tool| caller.may_use(&tool.name))
                .collect(),
        );
        listed.result_type = Some(ResultType::COMPLETE);
        // The list depends on the URL's `?tools=` alone, never on the agent, so caches may share
        // it; it is given for this answer only, as rmcp's own handler gives it (SEP-2549).
        listed.ttl_ms = stateless.then_some(0);
        listed.cache_scope = stateless.then_some(CacheScope::Public);
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = Caller::of(&context)?;
        if !caller.may_use(&request.name) {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        }
        let span =
            tracing::debug_span!("tool", name = %request.name, agent = %caller.profile.agent.id);
        self.toolbox
            .router
            .call(ToolCallContext::new(self, request, context))
            .instrument(span)
            .await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.toolbox.router.get(name).cloned()
    }
}
