//! The console's script and style, compiled into the binary and served from its own origin: the
//! console works offline, and its content security policy allows nothing else.

use actix_web::{web, HttpResponse};

use crate::pages;

pub(crate) const SCRIPT_PATH: &str = "/console/assets/console.js";
pub(crate) const STYLE_PATH: &str = "/console/assets/console.css";

const SCRIPT: &str = include_str!("assets/console.js");
const STYLE: &str = include_str!("assets/console.css");

pub(crate) async fn serve(file: web::Path<String>) -> HttpResponse {
    match file.as_str() {
        "console.js" => HttpResponse::Ok()
            .content_type("text/javascript; charset=utf-8")
            .body(SCRIPT),
        "console.css" => HttpResponse::Ok()
            .content_type("text/css; charset=utf-8")
            .body(STYLE),
        _ => pages::not_found().await,
    }
}
