//! The console's script, style and icon, compiled into the binary and served from its own origin:
//! the console works offline, and its content security policy allows nothing else.

use actix_web::{web, HttpResponse};

use crate::pages;

pub(crate) const SCRIPT_PATH: &str = "/console/assets/console.js";
pub(crate) const STYLE_PATH: &str = "/console/assets/console.css";
/// The pages name their icon, so a browser asks for this one, not for `/favicon.ico`.
pub(crate) const ICON_PATH: &str = "/console/assets/favicon.svg";

const SCRIPT: &str = include_str!("assets/console.js");
const STYLE: &str = include_str!("assets/console.css");
const ICON: &str = include_str!("assets/favicon.svg");

pub(crate) async fn serve(file: web::Path<String>) -> HttpResponse {
    match file.as_str() {
        "console.js" => HttpResponse::Ok()
            .content_type("text/javascript; charset=utf-8")
            .body(SCRIPT),
        "console.css" => HttpResponse::Ok()
            .content_type("text/css; charset=utf-8")
            .body(STYLE),
        "favicon.svg" => HttpResponse::Ok().content_type("image/svg+xml").body(ICON),
        _ => pages::not_found().await,
    }
}
