//! The operator console (console.md, decision 0065): server-rendered pages under `/console` for
//! the people who approve money, in the server's own binary. Operators are a realm of their own:
//! a passkey signs them in to a server-side session behind a `__Host-` cookie, and no agent key
//! opens a page. Every page and asset comes from the binary under `default-src 'self'`; the few
//! lines of script are its own. Every decision goes through the operator services the control
//! plane uses, so the console and `agentctl` decide alike.

mod access;
mod agents;
mod assets;
mod body;
mod changes;
mod decisions;
mod guard;
mod labels;
mod pages;
mod pending;
mod records;
mod token;

use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::DefaultHeaders;
use actix_web::web;
use app::Services;
use domain::TrustedProxies;

pub use guard::SESSION_COOKIE;

/// Where the console is served.
pub const CONSOLE_PATH: &str = "/console";

/// What the console's handlers share.
pub struct Console {
    services: Arc<Services>,
    /// The console's origin (`scheme://host[:port]`), which every change must come from.
    origin: String,
    /// The proxies whose header names the client, as the audit log records it; none: the
    /// connection's address.
    trusted_proxies: Option<TrustedProxies>,
}

impl Console {
    /// The console of `services`, reached at `console_url` (its origin is what every change must
    /// come from), behind `trusted_proxies` when some are configured.
    pub fn new(
        services: Arc<Services>,
        console_url: &str,
        trusted_proxies: Option<TrustedProxies>,
    ) -> Self {
        let origin = url::Url::parse(console_url)
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_else(|_| console_url.trim_end_matches('/').to_owned());
        Self {
            services,
            origin,
            trusted_proxies,
        }
    }
}

/// What every answer of the console carries: nothing loads from another origin, no page is
/// framed, nothing is cached or sniffed.
fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            ),
        ))
        .add((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .add((header::X_FRAME_OPTIONS, "DENY"))
        .add((header::REFERRER_POLICY, "same-origin"))
        .add((header::CACHE_CONTROL, "no-store"))
}

/// Registers the console's routes, under `/console`, with its own answer for a path it does not
/// serve.
pub fn configure(console: web::Data<Console>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |config| {
        config.service(
            web::scope(CONSOLE_PATH)
                .app_data(console)
                .wrap(security_headers())
                .route("", web::get().to(pages::home))
                .route("/", web::get().to(pages::home))
                .route("/assets/{file}", web::get().to(assets::serve))
                .route("/sign-in", web::get().to(access::sign_in_page))
                .route("/sign-in/options", web::post().to(access::sign_in_options))
                .route("/sign-in", web::post().to(access::sign_in))
                .route("/sign-out", web::post().to(access::sign_out))
                .route("/token", web::get().to(token::page))
                .route("/token", web::post().to(token::issue))
                .route("/token/revoke", web::post().to(token::revoke))
                .route("/enroll/{token}", web::get().to(access::enroll_page))
                .route(
                    "/enroll/{token}/options",
                    web::post().to(access::enroll_options),
                )
                .route("/enroll/{token}", web::post().to(access::enroll))
                .route("/pending", web::get().to(pending::page))
                .route("/pending/rows", web::get().to(pending::rows))
                .route("/pending/stream", web::get().to(pending::stream))
                .route("/intents/{id}", web::get().to(decisions::intent_page))
                .route("/intents/{id}/approve", web::post().to(decisions::approve))
                .route("/intents/{id}/reject", web::post().to(decisions::reject))
                .route("/history", web::get().to(records::history))
                .route("/history/export", web::get().to(records::export))
                .route("/audit", web::get().to(records::audit))
                .route("/agents", web::get().to(agents::list))
                .route("/agents", web::post().to(agents::create))
                .route("/agents/{id}", web::get().to(agents::page))
                .route(
                    "/agents/{id}/deactivate",
                    web::post().to(agents::deactivate),
                )
                .route("/agents/{id}/rotate", web::post().to(agents::rotate))
                .route("/agents/{id}/keys", web::get().to(agents::keys))
                .route(
                    "/agents/{id}/keys/{key_id}/revoke",
                    web::post().to(agents::revoke),
                )
                .route("/agents/{id}/policy", web::get().to(agents::policy))
                .route("/agents/{id}/policy", web::post().to(agents::save_policy))
                .default_service(web::to(pages::not_found)),
        );
    }
}
