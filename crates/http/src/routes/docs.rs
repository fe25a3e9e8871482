//! The readable API page, `/docs`: Redoc rendering `/openapi.json`, with the renderer embedded in
//! the binary (vendored by `scripts/vendor-docs.sh`), so the page works without the internet.

use actix_web::http::header::{self, ContentType};
use actix_web::HttpResponse;

/// The renderer's path, named after its version: a new version is a new URL, so browsers may
/// keep the bundle for good.
macro_rules! renderer_path {
    () => {
        concat!(
            "/docs/redoc-",
            include_str!("../../assets/redoc/VERSION"),
            ".standalone.js"
        )
    };
}

pub const RENDERER_PATH: &str = renderer_path!();

const RENDERER: &[u8] = include_bytes!("../../assets/redoc/redoc.standalone.js");

/// Redoc starts by itself on the `redoc` element and reads the description from `spec-url`.
const PAGE: &str = concat!(
    r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agent-runtime API</title>
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<script src=""#,
    renderer_path!(),
    r#""></script>
</body>
</html>
"#
);

/// Everything the page uses comes from this server. The bundle shows a logo from its maker's
/// site: `img-src` keeps the browser from asking for it, so nothing leaves the machine. Redoc
/// styles itself with inline `<style>` elements and runs its search in a worker made from a blob.
const PAGE_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src blob:; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub async fn page() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(ContentType::html())
        .insert_header((header::CONTENT_SECURITY_POLICY, PAGE_POLICY))
        // The page is small and names the renderer's version: always ask for the current one.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(PAGE)
}

pub async fn renderer() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/javascript; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .body(RENDERER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_its_renderer_from_this_server_and_nothing_from_elsewhere() {
        assert!(PAGE.contains(&format!(r#"<script src="{RENDERER_PATH}">"#)));
        assert!(!PAGE.contains("//"), "{PAGE}");
    }

    #[test]
    fn the_renderer_path_names_the_embedded_version() {
        let version = include_str!("../../assets/redoc/VERSION");
        assert_eq!(
            RENDERER_PATH,
            format!("/docs/redoc-{version}.standalone.js")
        );
        let banner = format!("Version: \"{version}\"");
        assert!(
            include_str!("../../assets/redoc/redoc.standalone.js.LICENSE.txt").contains(&banner),
            "the bundle's licence notice names another version than VERSION"
        );
    }
}
