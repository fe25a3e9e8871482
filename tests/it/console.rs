//! The operator console (console.md), black-box: its operators through `agentctl`, what it
//! refuses over plain HTTP, and every scenario of the issue in a real browser.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use test_support::{workspace_root, TestDatabase};

use crate::harness::{agentctl, agentctl_with, binary, create_agent, read, Server};
use crate::wallet::FAST_EXECUTOR;

/// The console's own address: passkeys are bound to a host name, not an address.
fn console_base(server: &Server) -> String {
    server.base_url.replace("127.0.0.1", "localhost")
}

#[tokio::test]
async fn operators_are_invited_listed_and_disabled_from_the_control_plane() {
    let (_server, database) = Server::start().await;
    let public = [("PUBLIC_BASE_URL", "https://console.example.com")];
    let invited = agentctl_with(
        &database,
        &public,
        &[
            "operators",
            "invite",
            "--name",
            "alice",
            "--role",
            "approver",
        ],
    )
    .await
    .json();
    assert_eq!(
        (&invited["operator"]["name"], &invited["operator"]["role"]),
        (&Value::from("alice"), &Value::from("approver"))
    );
    let link = invited["enroll_url"].as_str().expect("enroll_url");
    assert!(
        link.starts_with("https://console.example.com/console/enroll/") && link.len() > 80,
        "{link}"
    );
    let again = agentctl(
        &database,
        &["operators", "invite", "--name", "alice", "--role", "admin"],
    )
    .await;
    assert!(
        !again.success && again.stderr.contains("exists already"),
        "{}",
        again.stderr
    );
    for (args, says) in [
        (
            ["operators", "invite", "--name", "bob", "--role", "root"].as_slice(),
            "invalid value 'root'",
        ),
        (
            ["operators", "invite", "--name", "a b", "--role", "viewer"].as_slice(),
            "no whitespace",
        ),
        (
            ["operators", "disable", "nobody"].as_slice(),
            "no operator is named nobody",
        ),
    ] {
        let refused = agentctl(&database, args).await;
        assert!(
            !refused.success && refused.stderr.contains(says),
            "{args:?}: {}",
            refused.stderr
        );
    }
    let disabled = agentctl(&database, &["operators", "disable", "alice"])
        .await
        .json();
    assert!(disabled["disabled_at"].is_string(), "{disabled}");
    let listed = agentctl(&database, &["operators", "list"]).await.json();
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
    assert_eq!(listed[0]["name"], "alice");
    assert!(listed[0]["disabled_at"].is_string());
}

#[tokio::test]
async fn the_console_is_its_own_realm_and_refuses_what_no_page_of_it_sent() {
    let (server, database) = Server::start().await;
    let base = console_base(&server);
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let page = client
        .get(format!("{base}/console/sign-in"))
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    assert!(headers["content-security-policy"]
        .to_str()
        .expect("ascii")
        .starts_with("default-src 'self'"));
    assert_eq!(headers["cache-control"], "no-store");
    let pre_session = headers["set-cookie"].to_str().expect("ascii").to_owned();
    assert!(
        pre_session.starts_with("__Host-console-csrf=")
            && pre_session.contains("Secure")
            && pre_session.contains("HttpOnly")
            && pre_session.contains("SameSite=Strict"),
        "{pre_session}"
    );
    let body = page.text().await.expect("body");
    assert!(body.contains("Sign in with a passkey"));
    assert!(
        !body.contains("http://") && !body.contains("https://"),
        "nothing from elsewhere"
    );

    // An agent's key opens no page of the console.
    let (key, _) = create_agent(&database, &["--wallet"]).await;
    let with_key = client
        .get(format!("{base}/console/pending"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("page");
    assert_eq!(
        (with_key.status().as_u16(), &with_key.headers()["location"]),
        (303, &"/console/sign-in".parse().expect("header"))
    );
    // Nor does a console cookie open /v1.
    let with_cookie = client
        .get(format!("{base}/v1/agents/me"))
        .header("cookie", "__Host-console-session=whatever")
        .send()
        .await
        .expect("request");
    assert_eq!(with_cookie.status(), 401);

    // A ceremony begins only from a page of the console, with the page's token.
    let token = pre_session
        .split(';')
        .next()
        .and_then(|pair| pair.split_once('='))
        .map(|(_, value)| value.to_owned())
        .expect("token");
    let begin = |origin: Option<&str>, csrf: Option<&str>| {
        let mut request = client
            .post(format!("{base}/console/sign-in/options"))
            .header("cookie", format!("__Host-console-csrf={token}"))
            .header("content-type", "application/json")
            .body("{}");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(csrf) = csrf {
            request = request.header("x-csrf-token", csrf);
        }
        request.send()
    };
    for (origin, csrf) in [
        (None, Some(token.as_str())),
        (Some("http://evil.example"), Some(token.as_str())),
        (Some(base.as_str()), None),
        (Some(base.as_str()), Some("another")),
    ] {
        let refused = begin(origin, csrf).await.expect("answer");
        assert_eq!(refused.status(), 403, "{origin:?} {csrf:?}");
    }
    let (status, begun) = read(begin(Some(&base), Some(&token)).await.expect("answer")).await;
    assert_eq!(status, 200, "{begun}");
    assert!(begun["ceremony"].is_string());
    assert!(
        begun["options"]["publicKey"]["challenge"].is_string(),
        "{begun}"
    );

    // Without a session, a change goes to the sign-in page and changes nothing.
    let approve = client
        .post(format!(
            "{base}/console/intents/01a21f8a-e4fb-718b-9e33-8670bf2bb84f/approve"
        ))
        .header("origin", &base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("csrf=x")
        .send()
        .await
        .expect("answer");
    assert_eq!(approve.status(), 303);
    // A change whose form cannot be read carries no token to check: refused as one from elsewhere.
    for (content_type, body) in [("application/json", "{}"), ("text/plain", ""), ("", "")] {
        let mut unread = client
            .post(format!(
                "{base}/console/intents/01a21f8a-e4fb-718b-9e33-8670bf2bb84f/approve"
            ))
            .header("origin", "http://evil.example")
            .body(body);
        if !content_type.is_empty() {
            unread = unread.header("content-type", content_type);
        }
        let unread = unread.send().await.expect("answer");
        assert_eq!(unread.status(), 403, "{content_type:?}");
    }
    for (path, status) in [
        ("/console/enroll/not-a-link", 410),
        ("/console/nowhere", 404),
        ("/console/assets/console.js", 200),
        ("/console/assets/console.css", 200),
        ("/console/assets/other.js", 404),
    ] {
        let answer = client
            .get(format!("{base}{path}"))
            .send()
            .await
            .expect("answer");
        assert_eq!(answer.status().as_u16(), status, "{path}");
    }
    let unread = client
        .post(format!("{base}/console/sign-in"))
        .header("origin", &base)
        .header("cookie", format!("__Host-console-csrf={token}"))
        .header("x-csrf-token", &token)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("answer");
    assert_eq!(unread.status(), 400);
}

/// The interpreter of scripts/console-browser.sh: Playwright for Python, pinned.
fn browser_python() -> String {
    std::env::var("CONSOLE_BROWSER_PYTHON").unwrap_or_else(|_| {
        panic!(
            "CONSOLE_BROWSER_PYTHON is not set: run `export CONSOLE_BROWSER_PYTHON=$(scripts/console-browser.sh)` \
             (make test does) to install Playwright for Python and Debian's Chromium"
        )
    })
}

/// Every scenario of console.md in Debian's Chromium with a virtual authenticator per operator
/// (scripts/console_browser.py): invite, enroll and sign in; an agent created, its key shown
/// once; an intent sent over REST appearing live, approved, executed on the sandbox chain and
/// audited; a rejection with its reason; CSRF and foreign-origin refusals; a double click
/// confirming once; a viewer who cannot approve; two distinct operators above the threshold; a
/// page left open that does not keep its session alive; a disabled operator thrown out. axe-core checks every page: no serious or critical violation.
/// With CONSOLE_SCREENSHOTS set, a picture of each page is saved there (docs/console/).
#[tokio::test]
async fn the_console_holds_in_a_real_browser() {
    let python = browser_python();
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[FAST_EXECUTOR]).await;
    let base = console_base(&server);
    let axe = workspace_root().join("tests/console/node_modules/axe-core/axe.min.js");
    assert!(
        axe.is_file(),
        "axe-core is missing: run scripts/console-browser.sh"
    );
    let mut command = tokio::process::Command::new(&python);
    command
        .arg(workspace_root().join("scripts/console_browser.py"))
        .arg(&base)
        .env("AGENTCTL", binary("agentctl"))
        .env("DATABASE_URL", database.url())
        .env("PUBLIC_BASE_URL", &base)
        .env("AXE_JS", &axe)
        .kill_on_drop(true);
    if let Ok(folder) = std::env::var("CONSOLE_SCREENSHOTS") {
        let folder = PathBuf::from(folder);
        std::fs::create_dir_all(&folder).expect("screenshots folder");
        command.env("SCREENSHOTS", folder);
    }
    let output = tokio::time::timeout(Duration::from_secs(300), command.output())
        .await
        .expect("the browser scenarios finish within five minutes")
        .expect("running the browser scenarios");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| {
        panic!(
            "no report from the browser scenarios:\n{stdout}\n{}\nserver:\n{}",
            String::from_utf8_lossy(&output.stderr),
            server.logs()
        )
    });
    eprintln!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
    let failed: Vec<&Value> = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|scenario| scenario["ok"] != true)
        .collect();
    assert!(
        failed.is_empty(),
        "failed: {failed:#?}\nserver:\n{}",
        server.logs()
    );
    assert_eq!(report["scenarios"].as_array().map(Vec::len), Some(11));
    for (page, checked) in report["accessibility"].as_object().expect("pages") {
        assert_eq!(
            checked["serious_or_critical"],
            Value::Array(vec![]),
            "serious or critical violations on {page}"
        );
    }
    assert_eq!(report["held"], true);
}
