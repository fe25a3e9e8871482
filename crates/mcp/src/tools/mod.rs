//! The eighteen tools: each one the use case of its REST route, called with the same command
//! and the authenticated agent's profile, its answer rendered in the route's shapes. No tool
//! confirms or rejects a transfer: money only moves once an operator decides.
//!
//! The tools come in groups by resource, one `#[tool_router]` impl block on `AgentTools` per
//! group, each in its own file; `AgentTools::tool_router` adds their routers up. rmcp lists
//! tools by name, whatever the order the groups are added in.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use api_types::TransferIntentOut;
use app::Principal;
use app::Services;
use domain::keys::{AgentKeyRecord, Scope};
use domain::AgentProfile;
use edge::Refusal;
use rmcp::handler::server::common::{schema_for_input, FromContextPart};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, Implementation, JsonObject,
    ListToolsResult, MetaObject, PaginatedRequestParams, ProtocolVersion, ResultType,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};
use tracing::Instrument;

/// The protocol versions served: the last with an `initialize` handshake, and the stateless one.
pub const PROTOCOL_VERSIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

/// How often a wait tells a call that asked for progress how long it has waited: within the
/// 5 s the contract allows, with room for a busy instance's timers.
const PROGRESS_EVERY: Duration = Duration::from_secs(4);

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
    /// The key the call came with: the tools it may call are those of its scopes.
    pub key: Arc<AgentKeyRecord>,
    pub tools: Option<Arc<[String]>>,
}

impl Caller {
    /// Whether the connection's URL names the tool, when it names any.
    fn names(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == tool))
    }

    fn principal(&self) -> Principal {
        Principal {
            profile: Arc::clone(&self.profile),
            key: Arc::clone(&self.key),
        }
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

    /// The scope the tool named `tool` needs, as its declaration gives it.
    fn scope_of(&self, tool: &str) -> Option<Scope> {
        self.router.get(tool).and_then(required_scope)
    }

    pub fn has_tool(&self, name: &str) -> bool {
        self.router.has_route(name)
    }

    /// The console page where an operator decides on the intent.
    fn approval_url(&self, intent: &TransferIntentOut) -> String {
        api_types::approval_url(&self.public_base_url, intent.id)
    }
}

/// The `_meta` key under which each tool declares the scope it needs.
pub const SCOPE_META_KEY: &str = "agent-runtime/required-scope";

/// The `_meta` of a tool needing `scope`: written beside each tool's declaration.
fn needs(scope: Scope) -> MetaObject {
    let mut meta = MetaObject::new();
    meta.0
        .insert(SCOPE_META_KEY.into(), Value::from(scope.as_str()));
    meta
}

/// The scope `tool` declares it needs; `None` for a tool that declares none (and which no key
/// may then call).
fn required_scope(tool: &Tool) -> Option<Scope> {
    tool.meta
        .as_ref()?
        .0
        .get(SCOPE_META_KEY)?
        .as_str()
        .and_then(Scope::parse)
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

    /// Every tool's route: the routers of the groups, added up.
    fn tool_router() -> ToolRouter<Self> {
        Self::agent_router()
            + Self::mail_router()
            + Self::sms_router()
            + Self::wallet_router()
            + Self::event_router()
    }
}

/// The input schema of a tool taking `T`.
fn input<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>()
        .unwrap_or_else(|error| panic!("the arguments of a tool are an object: {error}"))
}

/// The input schema of a tool taking a route's request body `Body` beside its own arguments
/// `Own` (`BodyArguments`): one object with the properties of both, `Own`'s required first, and
/// none of the route's words for its body as a whole.
fn input_with_body<Own: JsonSchema + 'static, Body: JsonSchema + 'static>() -> Arc<JsonObject> {
    let own = input::<Own>();
    let mut merged = (*input::<Body>()).clone();
    merged.remove("description");
    let mut required = own.get("required").cloned().unwrap_or_else(|| json!([]));
    if let (Some(all), Some(body)) = (required.as_array_mut(), merged.get("required")) {
        all.extend(body.as_array().into_iter().flatten().cloned());
    }
    if required.as_array().is_some_and(|all| !all.is_empty()) {
        merged.insert("required".into(), required);
    }
    if let Some(Value::Object(properties)) = merged.get_mut("properties") {
        for (name, schema) in own["properties"].as_object().into_iter().flatten() {
            properties.insert(name.clone(), schema.clone());
        }
    }
    Arc::new(merged)
}

/// The value of what succeeded (arguments read, a command made, a use case done), or the tool's
/// answer that refuses with what failed.
macro_rules! or_refuse {
    ($outcome:expr) => {
        match $outcome {
            Ok(value) => value,
            Err(error) => return $crate::answers::refused(::edge::Refusal::from(error)),
        }
    };
}

// The groups of tools; declared after `or_refuse!`, which they use.
mod agent;
mod events;
mod mail;
mod sms;
mod wallet;

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
                .filter(|tool| {
                    caller.names(&tool.name)
                        && required_scope(tool).is_some_and(|scope| caller.key.holds(scope))
                })
                .collect(),
        );
        listed.result_type = Some(ResultType::COMPLETE);
        // The list depends on the URL's `?tools=` and the key's scopes, so it is the caller's
        // own; it is given for this answer only, as rmcp's own handler gives it (SEP-2549).
        listed.ttl_ms = stateless.then_some(0);
        listed.cache_scope = stateless.then_some(CacheScope::Private);
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = Caller::of(&context)?;
        if !caller.names(&request.name) {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        }
        // Checked before the arguments are read, as the API checks before the body.
        match self.toolbox.scope_of(&request.name) {
            Some(scope) if !caller.key.holds(scope) => {
                return Ok(crate::answers::refused(Refusal::lacks_scope(scope)).into())
            }
            _ => {}
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
