//! `/mcp` on actix-web. A request is admitted here (its `Host` and `Origin`, its agent key, the
//! tools its URL names) and its body read within bounds; then rmcp's Streamable HTTP service
//! answers it, stateless: JSON, or an event stream while a tool reports progress, passed on as it
//! comes. Glue of our own rather than rmcp-actix-web (decision 0059).

use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use app::Services;
use edge::{BodyLimits, BodyRefused, BodyShare, Refusal};
use http_body_util::{BodyDataStream, BodyExt, Full};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

use domain::{json_items_within, MAX_JSON_ITEMS};

use crate::hosts::AllowedHosts;
use crate::tools::{AgentTools, Caller, Toolbox};

/// Where the endpoint is served.
pub const MCP_PATH: &str = "/mcp";

/// The largest request body read: the largest any tool takes (`send_email` with a mail's 10 MiB
/// of attachments in base64 beside its text, as the REST send route allows). A body declared
/// larger is refused before a byte of it is read. Its client has 30 s to send it once its
/// request's head arrived.
const BODY_LIMITS: BodyLimits = BodyLimits {
    max_bytes: domain::MAX_REQUEST_BODY_BYTES,
    within: Duration::from_secs(30),
};

/// The headers rmcp reads besides its own `mcp-*` ones (`MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name`, `Mcp-Param-*`, `Mcp-Session-Id`), in actix-web's lower case.
const FORWARDED_HEADERS: [&str; 6] = [
    "host",
    "origin",
    "accept",
    "content-type",
    "content-length",
    "last-event-id",
];

/// The endpoint's settings.
#[derive(Debug, Clone)]
pub struct McpSettings {
    /// The hosts `/mcp` answers under (`MCP_ALLOWED_HOSTS`).
    pub allowed_hosts: AllowedHosts,
    /// `PUBLIC_BASE_URL`: the console's pages, where an operator decides, are below it.
    pub public_base_url: String,
}

impl McpSettings {
    /// The settings of an endpoint whose console is at `public_base_url` (`PUBLIC_BASE_URL`, or
    /// the address listened on), answering under `allowed_hosts` (`MCP_ALLOWED_HOSTS`), else the
    /// public URL's host and the loopback names. `Err` says what is wrong with the hosts.
    pub fn new(public_base_url: String, allowed_hosts: Option<&[String]>) -> Result<Self, String> {
        let names: Vec<String> = match allowed_hosts {
            Some([]) => {
                return Err(
                    "MCP_ALLOWED_HOSTS names no host; leave it unset for the default".into(),
                )
            }
            Some(names) => names.to_vec(),
            None => public_base_url
                .parse::<http::Uri>()
                .ok()
                .and_then(|url| url.host().map(str::to_owned))
                .into_iter()
                .chain(AllowedHosts::LOOPBACK.map(str::to_owned))
                .collect(),
        };
        let allowed_hosts = AllowedHosts::new(&names).map_err(|name| {
            format!(
                "MCP_ALLOWED_HOSTS is invalid: {name:?} is not a host name (names only, without \
                 scheme or port)"
            )
        })?;
        Ok(Self {
            allowed_hosts,
            public_base_url,
        })
    }
}

/// The MCP endpoint, built once and shared by every worker.
#[derive(Clone)]
pub struct McpEndpoint {
    inner: Arc<Endpoint>,
}

struct Endpoint {
    rmcp: StreamableHttpService<AgentTools, NeverSessionManager>,
    toolbox: Arc<Toolbox>,
    allowed_hosts: AllowedHosts,
}

impl McpEndpoint {
    pub fn new(services: Arc<Services>, settings: McpSettings) -> Self {
        let toolbox = Arc::new(Toolbox::new(services, &settings.public_base_url));
        let tools = toolbox.clone();
        // rmcp checks `Host` again itself; it refuses nothing admitted here (a name on any port).
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_allowed_hosts(settings.allowed_hosts.names().to_vec())
            .with_max_request_body_bytes(BODY_LIMITS.max_bytes);
        let rmcp = StreamableHttpService::new(
            move || Ok(AgentTools::new(tools.clone())),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        Self {
            inner: Arc::new(Endpoint {
                rmcp,
                toolbox,
                allowed_hosts: settings.allowed_hosts,
            }),
        }
    }

    /// Every tool served, as `tools/list` describes them.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.inner.toolbox.tools()
    }

    /// The caller of `request`, or the answer that refuses it: 403 for a host or origin not
    /// allowed (before anything else, so a rebound page learns nothing), 401 without a valid
    /// agent key, 400 for a `?tools=` naming a tool that does not exist.
    async fn admit(&self, request: &HttpRequest) -> Result<Caller, Turned> {
        let header = |name| {
            request
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
        };
        let host = header(header::HOST).or_else(|| request.uri().authority().map(|a| a.as_str()));
        self.inner
            .allowed_hosts
            .admit(host, header(header::ORIGIN))
            .map_err(|refused| Turned::Detail(StatusCode::FORBIDDEN, refused.detail()))?;
        let key = header(header::AUTHORIZATION)
            .and_then(api_types::bearer_credential)
            .ok_or(Turned::Refused(Refusal::InvalidKey))?;
        let principal = self
            .inner
            .toolbox
            .services
            .agents
            .authenticate(key)
            .await
            .map_err(|error| Turned::Refused(error.into()))?;
        let tools = self.tools_named(request.query_string())?;
        Ok(Caller {
            profile: principal.profile,
            key: principal.key,
            tools,
        })
    }

    /// The tools `?tools=a,b` limits the connection to; all of them without it.
    fn tools_named(&self, query: &str) -> Result<Option<Arc<[String]>>, Turned> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap_or_default();
        let Some((_, list)) = pairs.into_iter().rev().find(|(name, _)| name == "tools") else {
            return Ok(None);
        };
        let names: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        let unknown = names.iter().find(|name| !self.inner.toolbox.has_tool(name));
        if names.is_empty() || unknown.is_some() {
            let known: Vec<String> = self
                .tools()
                .into_iter()
                .map(|tool| tool.name.into_owned())
                .collect();
            let what = match unknown {
                Some(name) => format!("?tools= names an unknown tool {name:?}"),
                None => "?tools= names no tool".to_owned(),
            };
            return Err(Turned::Detail(
                StatusCode::BAD_REQUEST,
                format!("{what}; the tools are {}", known.join(", ")),
            ));
        }
        Ok(Some(names.into()))
    }
}

/// Serves `/mcp`.
pub async fn serve(
    request: HttpRequest,
    payload: web::Payload,
    endpoint: web::Data<McpEndpoint>,
) -> HttpResponse {
    let caller = match endpoint.admit(&request).await {
        Ok(caller) => caller,
        Err(turned) => return turned.response(),
    };
    let share = BodyShare {
        registry: endpoint.inner.toolbox.services.long_lived.clone(),
        agent: caller.profile.agent.id,
    };
    let declared = edge::declared_length(request.headers());
    let body = match edge::read_body(payload, declared, BODY_LIMITS, Some(share)).await {
        Ok(body) => body,
        Err(refused) => return body_refused(refused).response(),
    };
    if request.method() == actix_web::http::Method::POST {
        if let Err(refused) = one_jsonrpc_message(&body) {
            return refused.response();
        }
    }
    let mut forwarded = http::Request::new(Full::new(body));
    *forwarded.method_mut() = match http::Method::from_bytes(request.method().as_str().as_bytes()) {
        Ok(method) => method,
        Err(_) => {
            return Turned::Detail(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed".into())
                .response()
        }
    };
    let path = request
        .uri()
        .path_and_query()
        .map_or(MCP_PATH, |path| path.as_str());
    *forwarded.uri_mut() = match http::Uri::try_from(path) {
        Ok(uri) => uri,
        Err(_) => {
            return Turned::Detail(StatusCode::BAD_REQUEST, "Invalid request URI".into()).response()
        }
    };
    // Only the headers of the protocol: the agent key stops here (the tools know the agent by its
    // profile, and nothing the SDK does with headers ever sees the key).
    for (name, value) in request.headers() {
        let name = name.as_str();
        if !FORWARDED_HEADERS.contains(&name) && !name.starts_with("mcp-") {
            continue;
        }
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_bytes(value.as_bytes()),
        ) {
            forwarded.headers_mut().append(name, value);
        }
    }
    forwarded.extensions_mut().insert(caller);
    answer(endpoint.inner.rmcp.handle(forwarded).await).await
}

/// What a body that was not read is answered.
fn body_refused(refused: BodyRefused) -> Turned {
    let status = match refused {
        BodyRefused::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        BodyRefused::Unreadable(_) => StatusCode::BAD_REQUEST,
        BodyRefused::OverShare => return Turned::Refused(Refusal::too_many_body_bytes()),
        BodyRefused::Late { .. } => StatusCode::REQUEST_TIMEOUT,
    };
    Turned::Detail(status, refused.to_string())
}

/// A JSON-RPC message refused before rmcp reads it, answered as JSON-RPC over HTTP says.
#[derive(Debug, PartialEq)]
struct RpcRefusal {
    /// The message's id where it has a usable one: the refusal is then its answer (200).
    id: Option<serde_json::Value>,
    code: i64,
    message: String,
}

impl RpcRefusal {
    fn response(self) -> HttpResponse {
        let status = match self.id {
            Some(_) => StatusCode::OK,
            None => StatusCode::BAD_REQUEST,
        };
        HttpResponse::build(status).json(json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        }))
    }
}

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// The body of a POST is one JSON-RPC 2.0 message, of at most `MAX_JSON_ITEMS` items (counted
/// before it is parsed: parsed, each costs tens of bytes), whose id is a string or a number and
/// whose params are an object; `tools/call` names its tool. rmcp answers anything else with a
/// plain-text 415 or "method not found".
fn one_jsonrpc_message(body: &[u8]) -> Result<(), RpcRefusal> {
    let refused = |id: Option<&serde_json::Value>, code, message: String| RpcRefusal {
        id: id.cloned(),
        code,
        message,
    };
    if !json_items_within(body, MAX_JSON_ITEMS) {
        return Err(refused(
            None,
            INVALID_REQUEST,
            format!("Invalid request: a message holds at most {MAX_JSON_ITEMS} JSON items"),
        ));
    }
    let message: serde_json::Value = serde_json::from_slice(body)
        .map_err(|error| refused(None, PARSE_ERROR, format!("Parse error: {error}")))?;
    let Some(fields) = message.as_object() else {
        return Err(refused(
            None,
            INVALID_REQUEST,
            "Invalid request: one JSON-RPC message, an object (batches are not served)".into(),
        ));
    };
    let id = fields
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64());
    if fields.contains_key("id") && id.is_none() {
        return Err(refused(
            None,
            INVALID_REQUEST,
            "Invalid request: id must be a string or an integer".into(),
        ));
    }
    if fields.get("jsonrpc").and_then(|version| version.as_str()) != Some("2.0") {
        return Err(refused(
            id,
            INVALID_REQUEST,
            "Invalid request: jsonrpc must be \"2.0\"".into(),
        ));
    }
    let method = fields.get("method");
    if method.is_some_and(|method| !method.is_string())
        || (method.is_none() && !fields.contains_key("result") && !fields.contains_key("error"))
    {
        return Err(refused(
            id,
            INVALID_REQUEST,
            "Invalid request: method must be a string".into(),
        ));
    }
    let params = fields.get("params");
    if params.is_some_and(|params| !params.is_object()) {
        return Err(refused(
            id,
            INVALID_PARAMS,
            "Invalid params: params must be an object".into(),
        ));
    }
    let named_tool = params
        .and_then(|params| params.get("name"))
        .is_some_and(serde_json::Value::is_string);
    let arguments_fit = params
        .and_then(|params| params.get("arguments"))
        .is_none_or(serde_json::Value::is_object);
    if method.and_then(|method| method.as_str()) == Some("tools/call")
        && !(named_tool && arguments_fit)
    {
        return Err(refused(
            id,
            INVALID_PARAMS,
            "Invalid params: tools/call takes the tool's name and an object of arguments".into(),
        ));
    }
    Ok(())
}

/// rmcp's answer as actix-web sends it: a JSON answer whole, an event stream as it comes.
async fn answer(
    response: http::Response<http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>>,
) -> HttpResponse {
    let (parts, body) = response.into_parts();
    let status = StatusCode::from_u16(parts.status.as_u16()).unwrap_or_default();
    let mut answer = HttpResponse::build(status);
    let mut streamed = false;
    for (name, value) in &parts.headers {
        if name == http::header::CONTENT_TYPE && value.as_bytes().starts_with(b"text/event-stream")
        {
            streamed = true;
        }
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_str().as_bytes()),
            HeaderValue::from_bytes(value.as_bytes()),
        ) {
            answer.append_header((name, value));
        }
    }
    if streamed {
        return answer.streaming(BodyDataStream::new(body));
    }
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    let json = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"application/json"));
    if parts.status.as_u16() >= 400 && !json {
        // rmcp's own refusals (a missing Accept, an unknown protocol version) are plain text:
        // said in the API's shape, with their status.
        let detail = String::from_utf8_lossy(&bytes).trim().to_owned();
        return HttpResponse::build(status).json(json!({ "detail": detail }));
    }
    answer.body(bytes)
}

/// Why a request is answered before it reaches the tools.
enum Turned {
    /// Refused as the API refuses: a key that does not authenticate, the database unavailable.
    Refused(Refusal),
    /// Refused by the transport itself, with this status and detail.
    Detail(StatusCode, String),
}

impl Turned {
    /// `{"detail": ...}` with the status; `WWW-Authenticate: Bearer` for a key refused,
    /// `Retry-After` for too many requests, as the API answers them.
    fn response(self) -> HttpResponse {
        let (status, detail) = match self {
            Self::Detail(status, detail) => (status, detail),
            Self::Refused(refusal) => {
                refusal.log_cause();
                let status = StatusCode::from_u16(refusal.status())
                    .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let mut response = HttpResponse::build(status);
                if refusal.is_unauthenticated() {
                    response.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
                }
                if let Some(seconds) = refusal.retry_after_secs() {
                    response.insert_header((header::RETRY_AFTER, seconds));
                }
                return response.json(json!({ "detail": refusal.to_string() }));
            }
        };
        HttpResponse::build(status).json(json!({ "detail": detail }))
    }
}

#[cfg(test)]
mod tests {
    use super::McpSettings;

    #[test]
    fn without_allowed_hosts_the_public_host_and_the_loopback_names_are_allowed() {
        let settings = McpSettings::new("https://Runtime.Example.com:8443/base".into(), None)
            .expect("settings");
        assert_eq!(
            settings.allowed_hosts.names(),
            ["runtime.example.com", "localhost", "127.0.0.1", "::1"]
        );
        assert_eq!(
            settings.public_base_url,
            "https://Runtime.Example.com:8443/base"
        );
    }

    #[test]
    fn allowed_hosts_replace_the_default_and_an_empty_or_wrong_list_is_refused() {
        let names = ["agents.example.org".to_owned()];
        let settings =
            McpSettings::new("http://localhost:8080".into(), Some(&names)).expect("settings");
        assert_eq!(settings.allowed_hosts.names(), ["agents.example.org"]);
        let refused =
            McpSettings::new("http://localhost:8080".into(), Some(&[])).expect_err("an empty list");
        assert!(refused.contains("names no host"), "{refused}");
        let wrong = ["https://agents.example.org:443".to_owned()];
        let refused = McpSettings::new("http://localhost:8080".into(), Some(&wrong))
            .expect_err("a URL for a host");
        assert!(refused.contains("is not a host name"), "{refused}");
    }
}
