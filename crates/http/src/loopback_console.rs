//! The console opened at a loopback address while it lives at `localhost` (as under `make run`):
//! passkeys are bound to a host name and the console's origin check to its URL, so no one could
//! sign in at `http://127.0.0.1:8080/console`. Such a request is sent to the console's URL.

use std::net::IpAddr;

use actix_web::guard::{self, GuardContext};
use actix_web::http::{header, Uri};
use actix_web::{web, HttpRequest, HttpResponse};
use console::CONSOLE_PATH;

/// The console's origin (`http://localhost:8080`) when its URL names the host `localhost`: only
/// then is a loopback address the same machine under another name.
fn localhost_origin(console_url: &str) -> Option<String> {
    let url: Uri = console_url.parse().ok()?;
    if !url.host()?.eq_ignore_ascii_case("localhost") {
        return None;
    }
    Some(format!("{}://{}", url.scheme_str()?, url.authority()?))
}

/// Whether `host`, a `Host` header's value, names a loopback address (`127.0.0.1:8080`, `[::1]`).
fn is_loopback_address(host: &str) -> bool {
    let Ok(uri) = format!("http://{host}/").parse::<Uri>() else {
        return false;
    };
    uri.host()
        .map(|name| name.trim_start_matches('[').trim_end_matches(']'))
        .and_then(|name| name.parse::<IpAddr>().ok())
        .is_some_and(|address| address.is_loopback())
}

fn asked_at_a_loopback_address(context: &GuardContext<'_>) -> bool {
    context
        .head()
        .headers()
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .is_some_and(is_loopback_address)
}

/// Registers, ahead of the console, the answer to a console request made at a loopback address
/// when the console lives at `localhost`: a temporary redirect to the same path there.
pub(crate) fn configure(console_url: &str) -> impl FnOnce(&mut web::ServiceConfig) {
    let origin = localhost_origin(console_url);
    move |config| {
        let Some(origin) = origin else {
            return;
        };
        config.service(
            web::scope(CONSOLE_PATH)
                .guard(guard::fn_guard(asked_at_a_loopback_address))
                .default_service(web::to(move |request: HttpRequest| {
                    let target = request
                        .uri()
                        .path_and_query()
                        .map_or(CONSOLE_PATH, |path| path.as_str());
                    std::future::ready(
                        HttpResponse::TemporaryRedirect()
                            .insert_header((header::LOCATION, format!("{origin}{target}")))
                            .finish(),
                    )
                })),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_console_at_localhost_has_a_loopback_twin() {
        assert_eq!(
            localhost_origin("http://localhost:8080").as_deref(),
            Some("http://localhost:8080")
        );
        assert_eq!(
            localhost_origin("http://LOCALHOST:41234/").as_deref(),
            Some("http://LOCALHOST:41234")
        );
        assert_eq!(localhost_origin("https://console.example.com"), None);
        assert_eq!(localhost_origin("http://127.0.0.1:8080"), None);
    }

    #[test]
    fn loopback_addresses_are_told_from_names_and_other_addresses() {
        for loopback in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "127.1.2.3:80",
            "[::1]:8080",
            "[::1]",
        ] {
            assert!(is_loopback_address(loopback), "{loopback}");
        }
        for other in [
            "localhost:8080",
            "console.example.com",
            "10.0.0.7:8080",
            "[::2]:8080",
            "",
            "bad host",
        ] {
            assert!(!is_loopback_address(other), "{other}");
        }
    }
}
