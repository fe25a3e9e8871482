//! The actix-web transport of agent-runtime: routes, bearer auth, the error model, the OpenAPI
//! description and its readable page, and request telemetry. Depends on the use cases and the
//! shared API shapes, never on an adapter.

mod api_page;
mod auth;
mod errors;
mod extract;
mod loopback_console;
mod openapi;
mod rendered_pages;
mod routes;
mod server;
mod state;
mod telemetry;

pub use edge::SseSettings;
pub use openapi::ApiDoc;
pub use routes::events::EVENT_STREAM_RETRY;
pub use server::{serve, ServeSettings};
pub(crate) use state::ApiState;
pub(crate) use telemetry::middleware as telemetry_middleware;

use actix_web::http::header::HeaderValue;
use actix_web::http::Method;
use actix_web::middleware::from_fn;
use actix_web::{web, Route};
use api_types::{INBOUND_EMAIL_WEBHOOK_PATH, TWILIO_SMS_WEBHOOK_PATH};
use domain::keys::Scope;

/// How long a route's requests live, which decides how they are measured (and, for the streams
/// to come, how they are served).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteKind {
    /// Answered as soon as the work is done.
    Plain,
    /// Held until something arrives or a timeout of up to minutes passes.
    LongPoll,
}

/// A route, its kind and its handler. Every route is registered from these tables, so one that is
/// served but missing from the API description fails `routes_and_description_agree`.
struct Endpoint {
    method: Method,
    path: &'static str,
    kind: RouteKind,
    /// The scope a key needs for it (the keys contract); `None` for what needs no key.
    scope: Option<Scope>,
    handler: fn(Route) -> Route,
}

impl Endpoint {
    /// A route that needs no key.
    const fn new(method: Method, path: &'static str, handler: fn(Route) -> Route) -> Self {
        Self::of_kind(RouteKind::Plain, None, method, path, handler)
    }

    /// A route for keys holding `scope`.
    const fn scoped(
        scope: Scope,
        method: Method,
        path: &'static str,
        handler: fn(Route) -> Route,
    ) -> Self {
        Self::of_kind(RouteKind::Plain, Some(scope), method, path, handler)
    }

    /// A long poll for keys holding `scope`.
    const fn long_poll(
        scope: Scope,
        method: Method,
        path: &'static str,
        handler: fn(Route) -> Route,
    ) -> Self {
        Self::of_kind(RouteKind::LongPoll, Some(scope), method, path, handler)
    }

    const fn of_kind(
        kind: RouteKind,
        scope: Option<Scope>,
        method: Method,
        path: &'static str,
        handler: fn(Route) -> Route,
    ) -> Self {
        Self {
            method,
            path,
            kind,
            scope,
            handler,
        }
    }
}

impl Endpoint {
    /// The route for `method`: its handler, behind the check of its scope where it has one.
    fn route(&self, method: Method) -> Route {
        let route = (self.handler)(web::route().method(method));
        match self.scope {
            Some(scope) => route.wrap(from_fn(move |request, next| {
                auth::require_scope(scope, request, next)
            })),
            None => route,
        }
    }
}

/// The kind of the route `method` and the matched `pattern` name; plain when none is served.
pub(crate) fn route_kind(method: &Method, pattern: &str) -> RouteKind {
    API.iter()
        .chain(OUTSIDE_THE_API)
        .find(|endpoint| endpoint.path == pattern && endpoint.method == method)
        .map_or(RouteKind::Plain, |endpoint| endpoint.kind)
}

/// The scope a key needs for the route `method` and `pattern` name, as the route table declares
/// it; `None` for a route that needs no key, or none served.
pub(crate) fn required_scope(method: &Method, pattern: &str) -> Option<Scope> {
    API.iter()
        .chain(OUTSIDE_THE_API)
        .find(|endpoint| endpoint.path == pattern && endpoint.method == method)
        .and_then(|endpoint| endpoint.scope)
}

/// The API description as `agent-runtime openapi` prints it: the OpenAPI document as pretty
/// JSON, or with `markdown` the readable page rendered from it (`docs/api.md`).
pub fn api_description(markdown: bool) -> String {
    use utoipa::OpenApi;
    let document = ApiDoc::openapi();
    if markdown {
        let value = serde_json::to_value(&document).expect("the API description serializes");
        api_page::render(&value)
    } else {
        let json = document
            .to_pretty_json()
            .expect("the API description serializes");
        format!("{json}\n")
    }
}

/// The API: every operation here is in `ApiDoc`, and every operation of `ApiDoc` is here.
const API: &[Endpoint] = &[
    Endpoint::scoped(Scope::AgentRead, Method::GET, "/v1/agents/me", |route| {
        route.to(routes::agents::me)
    }),
    Endpoint::scoped(Scope::EmailRead, Method::GET, "/v1/email/inbox", |route| {
        route.to(routes::email::read::inbox)
    }),
    Endpoint::scoped(
        Scope::EmailRead,
        Method::GET,
        "/v1/email/messages/{message_id}",
        |route| route.to(routes::email::read::message),
    ),
    Endpoint::scoped(
        Scope::EmailRead,
        Method::GET,
        "/v1/email/messages/{message_id}/attachments/{attachment_id}",
        |route| route.to(routes::email::attachments::attachment),
    ),
    Endpoint::scoped(Scope::EmailRead, Method::GET, "/v1/email/search", |route| {
        route.to(routes::email::read::search)
    }),
    Endpoint::scoped(
        Scope::EmailRead,
        Method::GET,
        "/v1/email/threads",
        |route| route.to(routes::email::read::threads),
    ),
    Endpoint::scoped(
        Scope::EmailRead,
        Method::GET,
        "/v1/email/threads/{thread_id}",
        |route| route.to(routes::email::read::thread),
    ),
    Endpoint::scoped(Scope::EmailSend, Method::GET, "/v1/email/rules", |route| {
        route.to(routes::email::sender_rules::rules)
    }),
    Endpoint::scoped(Scope::EmailSend, Method::PUT, "/v1/email/rules", |route| {
        route.to(routes::email::sender_rules::set_rules)
    }),
    Endpoint::scoped(Scope::EmailSend, Method::POST, "/v1/email/send", |route| {
        route.to(routes::email::send::send)
    }),
    Endpoint::scoped(
        Scope::EmailSend,
        Method::POST,
        "/v1/email/reply/{message_id}",
        |route| route.to(routes::email::send::reply),
    ),
    Endpoint::scoped(
        Scope::EmailSend,
        Method::POST,
        "/v1/email/forward/{message_id}",
        |route| route.to(routes::email::send::forward),
    ),
    Endpoint::scoped(Scope::SmsRead, Method::GET, "/v1/sms/number", |route| {
        route.to(routes::sms::number)
    }),
    Endpoint::scoped(Scope::SmsRead, Method::GET, "/v1/sms/messages", |route| {
        route.to(routes::sms::messages)
    }),
    Endpoint::long_poll(
        Scope::SmsRead,
        Method::POST,
        "/v1/sms/wait-for-code",
        |route| route.to(routes::sms::wait_for_code),
    ),
    Endpoint::long_poll(Scope::CodesRead, Method::POST, "/v1/codes/wait", |route| {
        route.to(routes::sms::wait_any_channel)
    }),
    Endpoint::scoped(
        Scope::WalletRead,
        Method::GET,
        "/v1/wallet/address",
        |route| route.to(routes::wallet::address),
    ),
    Endpoint::scoped(
        Scope::WalletRead,
        Method::GET,
        "/v1/wallet/policy",
        |route| route.to(routes::wallet::policy),
    ),
    Endpoint::scoped(
        Scope::WalletRead,
        Method::GET,
        "/v1/wallet/balance",
        |route| route.to(routes::wallet::balance),
    ),
    Endpoint::scoped(Scope::WalletPay, Method::POST, "/v1/wallet/send", |route| {
        route.to(routes::wallet::send)
    }),
    Endpoint::scoped(
        Scope::WalletPay,
        Method::POST,
        "/v1/wallet/x402/authorize",
        |route| route.to(routes::wallet::authorize_x402),
    ),
    Endpoint::scoped(
        Scope::WalletPay,
        Method::POST,
        "/v1/wallet/x402/fetch",
        |route| route.to(routes::wallet::fetch_x402),
    ),
    Endpoint::scoped(
        Scope::WalletRead,
        Method::POST,
        "/v1/wallet/check",
        |route| route.to(routes::wallet::check),
    ),
    Endpoint::scoped(
        Scope::WalletRead,
        Method::GET,
        "/v1/wallet/intents",
        |route| route.to(routes::wallet::intents),
    ),
    Endpoint::scoped(
        Scope::WalletRead,
        Method::GET,
        "/v1/wallet/intents/{intent_id}",
        |route| route.to(routes::wallet::intent),
    ),
    Endpoint::scoped(
        Scope::WalletRead,
        Method::GET,
        "/v1/wallet/intents/{intent_id}/receipt",
        |route| route.to(routes::wallet::receipt),
    ),
    Endpoint::scoped(
        Scope::WalletRead,
        Method::GET,
        "/v1/wallet/receipt-keys",
        |route| route.to(routes::wallet::receipt_keys),
    ),
    Endpoint::scoped(Scope::EventsRead, Method::GET, "/v1/events", |route| {
        route.to(routes::events::list)
    }),
    Endpoint::long_poll(
        Scope::EventsRead,
        Method::GET,
        "/v1/events/stream",
        |route| route.to(routes::events::stream),
    ),
    Endpoint::scoped(
        Scope::WebhooksManage,
        Method::POST,
        "/v1/webhooks",
        |route| route.to(routes::webhook_endpoints::create),
    ),
    Endpoint::scoped(
        Scope::WebhooksManage,
        Method::GET,
        "/v1/webhooks",
        |route| route.to(routes::webhook_endpoints::list),
    ),
    Endpoint::scoped(
        Scope::WebhooksManage,
        Method::GET,
        "/v1/webhooks/{webhook_id}",
        |route| route.to(routes::webhook_endpoints::get),
    ),
    Endpoint::scoped(
        Scope::WebhooksManage,
        Method::PATCH,
        "/v1/webhooks/{webhook_id}",
        |route| route.to(routes::webhook_endpoints::update),
    ),
    Endpoint::scoped(
        Scope::WebhooksManage,
        Method::DELETE,
        "/v1/webhooks/{webhook_id}",
        |route| route.to(routes::webhook_endpoints::delete),
    ),
    Endpoint::scoped(
        Scope::WebhooksManage,
        Method::POST,
        "/v1/webhooks/{webhook_id}/rotate-secret",
        |route| route.to(routes::webhook_endpoints::rotate_secret),
    ),
    Endpoint::scoped(
        Scope::WebhooksManage,
        Method::GET,
        "/v1/webhooks/{webhook_id}/deliveries",
        |route| route.to(routes::webhook_endpoints::deliveries),
    ),
    Endpoint::scoped(
        Scope::WebhooksManage,
        Method::POST,
        "/v1/webhooks/{webhook_id}/replay",
        |route| route.to(routes::webhook_endpoints::replay),
    ),
    Endpoint::scoped(Scope::KeysManage, Method::POST, "/v1/keys", |route| {
        route.to(routes::keys::create)
    }),
    Endpoint::scoped(Scope::KeysManage, Method::GET, "/v1/keys", |route| {
        route.to(routes::keys::list)
    }),
    Endpoint::scoped(
        Scope::KeysManage,
        Method::DELETE,
        "/v1/keys/{key_id}",
        |route| route.to(routes::keys::revoke),
    ),
    Endpoint::new(Method::GET, "/healthz", |route| {
        route.to(routes::ops::healthz)
    }),
    Endpoint::new(Method::GET, "/readyz", |route| {
        route.to(routes::ops::readyz)
    }),
];

/// Served beside the API and deliberately left out of its description: the Prometheus text, the
/// description itself and its page (`/docs`, with the renderer it loads), the providers'
/// webhooks, which agents never call, and the MCP endpoint, a protocol of its own (its tools are
/// listed in `docs/api.md`). `/mcp` is measured as a long poll: a tool may wait up to a minute.
const OUTSIDE_THE_API: &[Endpoint] = &[
    // Each of its tools declares the scope it needs.
    Endpoint::of_kind(
        RouteKind::LongPoll,
        None,
        Method::POST,
        mcp::MCP_PATH,
        |route| route.to(mcp::serve),
    ),
    Endpoint::new(Method::POST, INBOUND_EMAIL_WEBHOOK_PATH, |route| {
        route.to(routes::provider_webhooks::inbound_email)
    }),
    Endpoint::new(Method::POST, TWILIO_SMS_WEBHOOK_PATH, |route| {
        route.to(routes::provider_webhooks::twilio_sms)
    }),
    Endpoint::new(Method::GET, "/metrics", |route| {
        route.to(routes::ops::metrics)
    }),
    Endpoint::new(Method::GET, "/openapi.json", |route| {
        route.to(routes::ops::openapi_json)
    }),
    Endpoint::new(Method::GET, "/docs", |route| route.to(routes::docs::page)),
    Endpoint::new(Method::GET, routes::docs::RENDERER_PATH, |route| {
        route.to(routes::docs::renderer)
    }),
];

/// Registers every route, the JSON 404 and 405, and the shared state on an actix `App`.
pub(crate) fn configure(state: web::Data<ApiState>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |config| {
        config.app_data(web::Data::new(state.mcp.clone()));
        config.configure(loopback_console::configure(&state.console_base_url));
        config.configure(console::configure(state.console.clone()));
        config.app_data(state);
        let endpoints: Vec<&Endpoint> = API.iter().chain(OUTSIDE_THE_API).collect();
        let mut paths: Vec<&str> = Vec::new();
        for endpoint in &endpoints {
            if !paths.contains(&endpoint.path) {
                paths.push(endpoint.path);
            }
        }
        for path in paths {
            let served: Vec<&&Endpoint> = endpoints
                .iter()
                .filter(|endpoint| endpoint.path == path)
                .collect();
            let mut methods: Vec<&str> = served
                .iter()
                .map(|endpoint| endpoint.method.as_str())
                .collect();
            if methods.contains(&"GET") {
                methods.push("HEAD");
            }
            let allow =
                HeaderValue::from_str(&methods.join(", ")).expect("method names are visible ASCII");
            // Other methods on a known path get a JSON 405 naming the path's methods, instead of
            // actix's empty one.
            let mut resource = web::resource(path).default_service(web::to(move || {
                routes::fallback::method_not_allowed(allow.clone())
            }));
            for endpoint in served {
                resource = resource.route(endpoint.route(endpoint.method.clone()));
                // HEAD is GET without the body (RFC 9110): the server sends the head only.
                if endpoint.method == Method::GET {
                    resource = resource.route(endpoint.route(Method::HEAD));
                }
            }
            config.service(resource);
        }
        config.default_service(web::to(routes::fallback::not_found));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use utoipa::OpenApi;

    #[test]
    fn routes_and_description_agree() {
        let served: BTreeSet<(String, &str)> = API
            .iter()
            .map(|endpoint| (endpoint.method.as_str().to_lowercase(), endpoint.path))
            .collect();
        let description = serde_json::to_value(ApiDoc::openapi()).expect("serializes");
        let documented: BTreeSet<(String, &str)> = description["paths"]
            .as_object()
            .expect("paths")
            .iter()
            .flat_map(|(path, operations)| {
                operations
                    .as_object()
                    .expect("operations")
                    .keys()
                    .map(move |method| (method.clone(), path.as_str()))
            })
            .collect();
        assert_eq!(served, documented);
        for endpoint in OUTSIDE_THE_API {
            assert!(
                description["paths"][endpoint.path].is_null(),
                "{}",
                endpoint.path
            );
        }
    }

    /// What the keys contract's table of scopes says each route needs, route by route.
    fn scope_the_contract_gives(method: &Method, path: &str) -> Option<Scope> {
        let (get, post) = (method == Method::GET, method == Method::POST);
        Some(match path {
            "/healthz" | "/readyz" => return None,
            "/v1/agents/me" => Scope::AgentRead,
            "/v1/email/send" | "/v1/email/rules" => Scope::EmailSend,
            _ if path.starts_with("/v1/email/reply/") || path.starts_with("/v1/email/forward/") => {
                Scope::EmailSend
            }
            _ if path.starts_with("/v1/email/") && get => Scope::EmailRead,
            "/v1/sms/number" | "/v1/sms/messages" | "/v1/sms/wait-for-code" => Scope::SmsRead,
            "/v1/codes/wait" if post => Scope::CodesRead,
            "/v1/wallet/send" | "/v1/wallet/x402/authorize" | "/v1/wallet/x402/fetch" => {
                Scope::WalletPay
            }
            _ if path.starts_with("/v1/wallet/") => Scope::WalletRead,
            "/v1/events" | "/v1/events/stream" => Scope::EventsRead,
            "/v1/keys" | "/v1/keys/{key_id}" => Scope::KeysManage,
            _ if path.starts_with("/v1/webhooks") => Scope::WebhooksManage,
            _ => panic!("{method} {path} is in no row of the keys contract's table"),
        })
    }

    #[test]
    fn every_route_declares_the_scope_the_contract_gives_and_the_description_shows_it() {
        let description = serde_json::to_value(ApiDoc::openapi()).expect("serializes");
        for endpoint in API {
            let wanted = scope_the_contract_gives(&endpoint.method, endpoint.path);
            assert_eq!(
                endpoint.scope, wanted,
                "{} {}",
                endpoint.method, endpoint.path
            );
            let operation =
                &description["paths"][endpoint.path][endpoint.method.as_str().to_lowercase()];
            let shown = operation["x-required-scope"].as_str();
            assert_eq!(
                shown,
                wanted.map(Scope::as_str),
                "{} {}",
                endpoint.method,
                endpoint.path
            );
            if let Some(scope) = wanted {
                let text = operation["description"].as_str().unwrap_or_default();
                assert!(
                    text.ends_with(&format!("Needs a key with the scope `{scope}`.")),
                    "{} {}: {text}",
                    endpoint.method,
                    endpoint.path
                );
            }
        }
    }
}
