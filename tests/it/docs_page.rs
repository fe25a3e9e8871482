//! `/docs` in a real browser: Debian's chromium, headless, loads the page from the spawned server
//! with every other host unresolvable, and must render every operation of `/openapi.json`, each
//! summary as a short heading of plain text, the introduction's sections and every MCP tool the
//! server lists.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use test_support::workspace_root;

use crate::mcp::connect;
use crate::support::harness::{create_agent, header, target_dir, Server};

/// Tall enough for the first operations to be on the picture, below the introduction.
const WINDOW: (u32, u32) = (1280, 4500);
/// How long the page may take to render all operations, over as many loads as fit.
const RENDER_DEADLINE: Duration = Duration::from_secs(240);

/// The longest one chromium run may take. It takes a few seconds alone; beside the suite's
/// busiest tests on two cores three runs in a row took over 30 s each.
const CHROMIUM_RUN_LIMIT: Duration = Duration::from_secs(75);
/// Virtual time one load may spend (fetching the description, rendering) before the DOM is read.
const VIRTUAL_TIME_BUDGET_MS: &str = "15000";

/// `CHROMIUM_BIN`, else `chromium` on the PATH; without it the test cannot say anything, so it
/// fails rather than pass unseen.
fn chromium() -> PathBuf {
    if let Some(binary) = std::env::var_os("CHROMIUM_BIN") {
        return PathBuf::from(binary);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("chromium"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "chromium is missing: the /docs page is checked in a headless browser; install \
                 Debian's chromium package (make test does) or set CHROMIUM_BIN"
            )
        })
}

/// One load of `url` in a fresh browser profile: the DOM after scripts ran, and a screenshot.
struct Rendering {
    dom: String,
    screenshot: PathBuf,
}

async fn render(url: &str, screenshot: &Path) -> Rendering {
    let profile = std::env::temp_dir().join(format!(
        "agent-runtime-chromium-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let _ = std::fs::remove_file(screenshot);
    let run = tokio::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            // Offline, whatever this machine can reach: only the server's address resolves.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--window-size={},{}", WINDOW.0, WINDOW.1),
            &format!("--virtual-time-budget={VIRTUAL_TIME_BUDGET_MS}"),
            &format!("--screenshot={}", screenshot.display()),
            "--dump-dom",
            url,
        ])
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    // Headless chromium now and then never exits after dumping the page: such a run is killed
    // and counts as one that did not show the page yet.
    let output = tokio::time::timeout(CHROMIUM_RUN_LIMIT, run).await;
    let _ = std::fs::remove_dir_all(&profile);
    let Ok(output) = output else {
        return Rendering {
            dom: format!("(chromium did not exit within {CHROMIUM_RUN_LIMIT:?})"),
            screenshot: screenshot.to_owned(),
        };
    };
    let output = output.expect("running chromium");
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Rendering {
        dom: String::from_utf8_lossy(&output.stdout).into_owned(),
        screenshot: screenshot.to_owned(),
    }
}

/// Each operation of the description as the page must show it: its menu link and its summary.
fn operations(description: &Value) -> Vec<(String, String)> {
    let mut operations = Vec::new();
    for by_method in description["paths"].as_object().expect("paths").values() {
        for operation in by_method.as_object().expect("operations").values() {
            let tag = operation["tags"][0].as_str().expect("a tag");
            let id = operation["operationId"].as_str().expect("an operationId");
            let summary = operation["summary"].as_str().expect("a summary");
            operations.push((format!("#tag/{tag}/operation/{id}"), summary.to_owned()));
        }
    }
    operations
}

/// Asserts that the picture has the window's size and shows a rendered page: many colours (text
/// is anti-aliased), and far from all of it one colour, as a blank or loading page would be.
fn assert_shows_a_rendered_page(screenshot: &Path) {
    let file = std::fs::File::open(screenshot).expect("screenshot written");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("fits in memory")];
    let frame = reader.next_frame(&mut pixels).expect("a picture");
    assert_eq!((frame.width, frame.height), WINDOW);
    let channels = frame.color_type.samples();
    let mut counts = std::collections::HashMap::<&[u8], usize>::new();
    for pixel in pixels[..frame.buffer_size()].chunks_exact(channels) {
        *counts.entry(pixel).or_default() += 1;
    }
    let total = (frame.width * frame.height) as usize;
    let commonest = counts.values().max().copied().unwrap_or_default();
    assert!(
        counts.len() >= 50,
        "{} shows {} colours: nothing was drawn",
        screenshot.display(),
        counts.len()
    );
    assert!(
        commonest * 10 < total * 9,
        "{} is more than nine tenths one colour",
        screenshot.display()
    );
}

/// `/docs` once it shows every operation of `description`, loading it again as long as the
/// deadline allows.
async fn rendered_docs(server: &Server, description: &Value, screenshot: &Path) -> Rendering {
    let operations = operations(description);
    assert!(operations.len() > 10, "{description}");
    let started = Instant::now();
    loop {
        let rendering = render(&server.url("/docs"), screenshot).await;
        let missing: Vec<&(String, String)> = operations
            .iter()
            .filter(|(link, summary)| {
                !rendering.dom.contains(&format!("href=\"{link}\""))
                    || !rendering.dom.contains(summary)
            })
            .collect();
        if missing.is_empty() {
            return rendering;
        }
        assert!(
            started.elapsed() < RENDER_DEADLINE,
            "the page never showed {missing:?}:\n{}",
            rendering.dom
        );
    }
}

#[tokio::test]
async fn the_docs_page_renders_every_operation_without_the_internet() {
    let (server, _database) = Server::start().await;
    let (status, description) = server.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let rendering = rendered_docs(&server, &description, &target_dir().join("docs-page.png")).await;
    assert_shows_a_rendered_page(&rendering.screenshot);
}

/// The text of every `tag` element of `dom`, its inner elements left out.
fn texts_of(dom: &str, tag: &str) -> Vec<String> {
    dom.split(&format!("<{tag}"))
        .skip(1)
        .filter_map(|rest| rest.split_once('>').map(|(_, inner)| inner))
        .filter_map(|inner| inner.split_once(&format!("</{tag}>")).map(|(text, _)| text))
        .map(|inner| {
            let mut text = String::new();
            let mut in_tag = false;
            for c in inner.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => text.push(c),
                    _ => {}
                }
            }
            text.trim().to_owned()
        })
        .collect()
}

/// `dom` without the `tag` elements and what they hold.
fn without(dom: &str, tag: &str) -> String {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut kept = String::new();
    let mut rest = dom;
    while let Some(start) = rest.find(&open) {
        kept.push_str(&rest[..start]);
        rest = rest[start..]
            .find(&close)
            .map_or("", |end| &rest[start + end + close.len()..]);
    }
    kept.push_str(rest);
    kept
}

/// The longest heading an operation may have: a sentence read at a glance.
const MAX_HEADING_CHARS: usize = 80;

#[tokio::test]
async fn the_docs_page_shows_plain_summaries_the_introduction_and_every_mcp_tool() {
    let (server, database) = Server::start().await;
    let (status, description) = server.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let rendering = rendered_docs(
        &server,
        &description,
        &target_dir().join("docs-page-sections.png"),
    )
    .await;
    let dom = &rendering.dom;

    // Each summary is its operation's heading, shown as written: no Markdown, one short line.
    let headings = texts_of(dom, "h2");
    for (_, summary) in operations(&description) {
        assert!(
            headings.contains(&summary),
            "no heading reads {summary:?}: {headings:?}"
        );
    }
    for heading in &headings {
        assert!(
            !heading.contains('`') && heading.chars().count() <= MAX_HEADING_CHARS,
            "a heading of Markdown or of a paragraph's length: {heading:?}"
        );
    }
    // Nor does any other text of the page show Markdown's backticks: they became code.
    let shown = texts_of(&without(&without(dom, "script"), "style"), "body").concat();
    if let Some(at) = shown.find('`') {
        let from = shown[..at]
            .char_indices()
            .rev()
            .nth(200)
            .map_or(0, |(i, _)| i);
        let around: String = shown[from..].chars().take(300).collect();
        panic!("a literal backtick on the page: {around}");
    }

    // The introduction describes the tiers, every window of the policy's usage, the console and
    // MCP, in sections the page shows.
    let introduction = description["info"]["description"].as_str().expect("text");
    let windows = description["components"]["schemas"]["SpendUsageOut"]["properties"]
        .as_object()
        .expect("the windows of a policy's usage");
    let mut described: Vec<String> = windows.keys().map(|window| format!("`{window}`")).collect();
    described.extend(
        [
            "**Auto-confirm**",
            "**One operator**",
            "**Quorum**",
            "`/console`",
            "`POST /mcp`",
        ]
        .map(String::from),
    );
    for words in &described {
        assert!(
            introduction.contains(words.as_str()),
            "the introduction leaves out {words}"
        );
    }
    let shown_sections = [texts_of(dom, "h1"), headings.clone()].concat();
    for section in introduction
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
    {
        assert!(
            shown_sections.iter().any(|shown| shown == section),
            "the page shows no section {section:?}: {shown_sections:?}"
        );
    }

    // Every tool the server lists over MCP is on the page.
    let (key, _) = create_agent(&database, &[]).await;
    let client = connect(
        &server,
        &key,
        rmcp::service::ClientLifecycleMode::Initialize,
    )
    .await;
    let tools = client.list_all_tools().await.expect("tools");
    assert!(tools.len() > 10, "{tools:?}");
    let codes = texts_of(dom, "code");
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let readme_mcp = readme
        .split("\n## ")
        .find(|section| section.starts_with("MCP"))
        .expect("the README's MCP section");
    for tool in &tools {
        assert!(
            codes.iter().any(|code| *code == tool.name),
            "the page does not list the MCP tool {}",
            tool.name
        );
        assert!(
            readme_mcp.contains(&format!("`{}`", tool.name)),
            "the README's MCP section does not name {}",
            tool.name
        );
    }
}

/// GET `path`, which must answer 200 with `content_type`.
async fn served(server: &Server, path: &str, content_type: &str) -> reqwest::Response {
    let response = server
        .client
        .get(server.url(path))
        .send()
        .await
        .expect(path);
    assert_eq!(response.status().as_u16(), 200, "{path}");
    assert_eq!(
        header(&response, "content-type").as_deref(),
        Some(content_type),
        "{path}"
    );
    response
}

#[tokio::test]
async fn the_docs_page_and_its_renderer_come_from_the_server_alone() {
    let (server, _database) = Server::start().await;
    let page = served(&server, "/docs", "text/html; charset=utf-8").await;
    let policy = header(&page, "content-security-policy").expect("a content security policy");
    assert!(policy.starts_with("default-src 'none'"), "{policy}");
    let html = page.text().await.expect("html");
    let references: Vec<&str> = ["src=\"", "href=\""]
        .iter()
        .flat_map(|attribute| html.split(attribute).skip(1))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    let scripts: Vec<&str> = html
        .split("<script src=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(scripts.len(), 1, "{html}");
    assert!(
        references
            .iter()
            .all(|reference| reference.starts_with('/') && !reference.starts_with("//")),
        "{references:?}"
    );
    let renderer = served(&server, scripts[0], "text/javascript; charset=utf-8").await;
    assert_eq!(
        header(&renderer, "cache-control").as_deref(),
        Some("public, max-age=31536000, immutable")
    );
    assert!(renderer.bytes().await.expect("bundle").len() > 500_000);
}
