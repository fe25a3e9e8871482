//! The operator console (console.md), black-box: its operators through `agentctl`, what it
//! refuses over plain HTTP, and every scenario of the issue in a real browser.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use test_support::{workspace_root, TestDatabase};

use crate::passkey::SoftPasskey;
use crate::support::harness::{
    agentctl, agentctl_with, binary, create_agent, read, CliOutput, Server,
};
use crate::support::process::run_within;
use crate::wallet::{
    confirmed_send, post_send, set_policy, settled_intent, wallet_agent, FAST_EXECUTOR, RECIPIENT,
};

/// The console's own address: passkeys are bound to a host name, not an address.
pub(crate) fn console_base(server: &Server) -> String {
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

/// How long the browser scenarios may take. Alone they take under a minute; beside the suite's
/// busiest tests on two cores, Chromium's processes get a small share of them and the same run
/// has taken over five. The bound stays under nextest's own (ten minutes) so that the test, not
/// nextest, says where the run was.
const BROWSER_SCENARIOS_DEADLINE: Duration = Duration::from_secs(540);

/// Every scenario of console.md in Debian's Chromium with a virtual authenticator per operator
/// (scripts/console_browser.py): invite, enroll and sign in; an agent created, its key shown
/// once; its keys listed and one revoked; an intent sent over REST appearing live, approved,
/// executed on the sandbox chain and
/// audited; its receipt downloaded from the history as CSV; a rejection with its reason; CSRF and foreign-origin refusals; a double click
/// confirming once; a viewer who cannot approve; two distinct operators above the threshold; a
/// token issued on the console that proves its operator to `agentctl`; a page left open that
/// does not keep its session alive; a disabled operator thrown out. axe-core checks every page:
/// no serious or critical violation.
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
        .env("AXE_JS", &axe);
    if let Ok(folder) = std::env::var("CONSOLE_SCREENSHOTS") {
        // A relative folder is the workspace's (`docs/console`), not the test's working directory.
        let folder = workspace_root().join(PathBuf::from(folder));
        std::fs::create_dir_all(&folder).expect("screenshots folder");
        command.env("SCREENSHOTS", folder);
    }
    let output = run_within(command, BROWSER_SCENARIOS_DEADLINE)
        .await
        .unwrap_or_else(|unfinished| panic!("{unfinished}\nserver:\n{}", server.logs()));
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
    assert_eq!(report["scenarios"].as_array().map(Vec::len), Some(22));
    for (page, checked) in report["accessibility"].as_object().expect("pages") {
        assert_eq!(
            checked["serious_or_critical"],
            Value::Array(vec![]),
            "serious or critical violations on {page}"
        );
    }
    assert_eq!(report["held"], true);
}

/// The console's ceremonies over plain HTTP, as its page's script drives them: the pre-session
/// token in its cookie and header, the console's origin, and the session's cookie once signed in.
pub(crate) struct ConsoleClient {
    base: String,
    client: reqwest::Client,
    csrf: String,
    /// What the client claims in `X-Forwarded-For`, believed only from a trusted proxy.
    forwarded_for: Option<&'static str>,
}

/// A cookie's value from a `Set-Cookie` header.
fn set_cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|cookie| cookie.split(';').next()?.split_once('='))
        .find(|(cookie, value)| *cookie == name && !value.is_empty())
        .map(|(_, value)| value.to_owned())
}

impl ConsoleClient {
    pub(crate) async fn open(base: &str) -> Self {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let page = client
            .get(format!("{base}/console/sign-in"))
            .send()
            .await
            .expect("sign-in page");
        let csrf = set_cookie(&page, "__Host-console-csrf").expect("a pre-session token");
        Self {
            base: base.to_owned(),
            client,
            csrf,
            forwarded_for: None,
        }
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value, Option<String>) {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("origin", &self.base)
            .header("cookie", format!("__Host-console-csrf={}", self.csrf))
            .header("x-csrf-token", &self.csrf)
            .json(body);
        if let Some(address) = self.forwarded_for {
            request = request.header("x-forwarded-for", address);
        }
        let response = request.send().await.expect("answer");
        let session = set_cookie(&response, "__Host-console-session");
        let (status, body) = read(response).await;
        (status, body, session)
    }

    /// Registers `passkey` through the enrollment link `enroll_url` (of this console).
    async fn enroll(&self, enroll_url: &str, passkey: &mut SoftPasskey) {
        let path = enroll_url
            .strip_prefix(&self.base)
            .expect("a link of this console");
        let (status, begun, _) = self.post(&format!("{path}/options"), &json!({})).await;
        assert_eq!(status, 200, "{begun}");
        let credential = passkey.register(&begun["options"], &self.base);
        let answer = json!({"ceremony": begun["ceremony"], "credential": credential});
        let (status, done, _) = self.post(path, &answer).await;
        assert_eq!(status, 200, "{done}");
    }

    /// Begins a sign-in: the status, and the ceremony with its options.
    async fn begin_sign_in(&self) -> (u16, Value) {
        let (status, begun, _) = self.post("/console/sign-in/options", &json!({})).await;
        (status, begun)
    }

    /// Answers the sign-in `begun` with `credential`: the status, the answer and the session's
    /// cookie when one was opened.
    async fn answer(&self, begun: &Value, credential: &Value) -> (u16, Value, Option<String>) {
        let answer = json!({"ceremony": begun["ceremony"], "credential": credential});
        self.post("/console/sign-in", &answer).await
    }

    /// Signs in with `passkey` from the start: the session's cookie, or the refusal.
    async fn sign_in(&self, passkey: &mut SoftPasskey) -> Result<String, (u16, Value)> {
        let (status, begun) = self.begin_sign_in().await;
        if status != 200 {
            return Err((status, begun));
        }
        let credential = passkey.sign_in(&begun["options"], &self.base);
        match self.answer(&begun, &credential).await {
            (200, _, Some(session)) => Ok(session),
            (status, body, _) => Err((status, body)),
        }
    }

    /// Whether the session behind `cookie` opens a page of the console.
    async fn opens_pages(&self, cookie: &str) -> bool {
        let page = self
            .client
            .get(format!("{}/console/pending", self.base))
            .header("cookie", format!("__Host-console-session={cookie}"))
            .send()
            .await
            .expect("page");
        page.status() == 200
    }
}

/// Invites `name` from the control plane and enrolls `passkey` for them.
async fn enroll(
    database: &TestDatabase,
    console: &ConsoleClient,
    name: &str,
    role: &str,
    passkey: &mut SoftPasskey,
) {
    let invited = agentctl_with(
        database,
        &[("PUBLIC_BASE_URL", &console.base)],
        &["operators", "invite", "--name", name, "--role", role],
    )
    .await
    .json();
    console
        .enroll(invited["enroll_url"].as_str().expect("enroll_url"), passkey)
        .await;
}

/// `enroll` with a new passkey in software.
pub(crate) async fn enrolled(
    database: &TestDatabase,
    console: &ConsoleClient,
    name: &str,
    role: &str,
) -> SoftPasskey {
    let mut passkey = SoftPasskey::new();
    enroll(database, console, name, role, &mut passkey).await;
    passkey
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    count: i64,
}

pub(crate) async fn count(database: &TestDatabase, query: &str) -> i64 {
    use diesel_async::RunQueryDsl;
    diesel::sql_query(query)
        .get_result::<Count>(&mut database.connection().await)
        .await
        .expect("counted")
        .count
}

#[derive(diesel::QueryableByName)]
struct Address {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    address: Option<String>,
}

/// The client address the audit log recorded for `name`'s latest sign-in.
async fn login_address(database: &TestDatabase, name: &str) -> Option<String> {
    use diesel_async::RunQueryDsl;
    diesel::sql_query(format!(
        "SELECT address FROM operator_audit WHERE action = 'login' \
         AND operator = 'operator:{name}' ORDER BY at DESC LIMIT 1"
    ))
    .get_result::<Address>(&mut database.connection().await)
    .await
    .expect("a login row")
    .address
}

#[tokio::test]
async fn anonymous_sign_in_requests_lock_no_operator_out_and_a_challenge_signs_in_once() {
    let (server, database) = Server::start().await;
    let console = ConsoleClient::open(&console_base(&server)).await;
    let mut alice = SoftPasskey::synced();
    enroll(&database, &console, "alice", "approver", &mut alice).await;
    // Anyone may ask for a challenge, as often as they like: nothing is kept of one.
    for attempt in 0..30 {
        let (status, begun) = console.begin_sign_in().await;
        assert_eq!(status, 200, "anonymous request {attempt}: {begun}");
    }
    assert_eq!(
        count(
            &database,
            "SELECT count(*) AS count FROM operator_ceremonies"
        )
        .await,
        0,
        "no row per anonymous request"
    );
    let (status, begun) = console.begin_sign_in().await;
    assert_eq!(status, 200, "{begun}");
    let credential = alice.sign_in(&begun["options"], &console.base);
    let (status, body, session) = console.answer(&begun, &credential).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session");
    assert!(console.opens_pages(&session).await);
    // The same challenge with the same answer, again: refused, no second session. The
    // passkey's counter cannot tell (a synced passkey's stays at zero): the used challenge does.
    let (status, body, again) = console.answer(&begun, &credential).await;
    assert_eq!(
        (status, again),
        (400, None),
        "a replayed sign-in was taken: {body}"
    );
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|detail| detail.contains("already used")),
        "{body}"
    );
    // A challenge altered by its carrier is no challenge of this console's.
    let mut forged = begun.clone();
    forged["ceremony"] = json!(format!("{}A", begun["ceremony"].as_str().expect("text")));
    let (status, _, none) = console
        .answer(&forged, &alice.sign_in(&begun["options"], &console.base))
        .await;
    assert_eq!((status, none), (400, None));
    assert_eq!(
        count(
            &database,
            "SELECT count(*) AS count FROM operator_audit WHERE action = 'login'"
        )
        .await,
        1
    );
    // Without a trusted proxy configured, the client's header is its own writing.
    let mut claiming = ConsoleClient::open(&console.base).await;
    claiming.forwarded_for = Some("198.51.100.7");
    claiming.sign_in(&mut alice).await.expect("signed in");
    assert_eq!(
        login_address(&database, "alice").await.as_deref(),
        Some("127.0.0.1")
    );
}

#[tokio::test]
async fn failed_sign_ins_are_counted_against_their_passkey_alone() {
    let (server, database) = Server::start().await;
    let console = ConsoleClient::open(&console_base(&server)).await;
    let mut alice = enrolled(&database, &console, "alice", "approver").await;
    let mut bob = enrolled(&database, &console, "bob", "approver").await;
    // Someone who learned alice's credential id signs with a key of their own, from the address
    // every operator shares behind the same proxy.
    let mut impostor = SoftPasskey::impostor_of(&alice);
    let mut refusals = Vec::new();
    for _ in 0..12 {
        let (status, body) = console
            .sign_in(&mut impostor)
            .await
            .expect_err("an impostor signed in");
        refusals.push((status, body));
    }
    let statuses: Vec<u16> = refusals.iter().map(|(status, _)| *status).collect();
    assert_eq!(statuses[..10], [400; 10], "{refusals:?}");
    assert_eq!(statuses[10..], [429; 2], "{refusals:?}");
    assert!(
        refusals[11].1["detail"]
            .as_str()
            .is_some_and(|detail| detail.contains("this passkey")),
        "{refusals:?}"
    );
    // Each failure tried against alice's passkey is audited as hers; those refused unread are
    // not, so no one writes rows faster than her bucket lets them try.
    assert_eq!(
        count(
            &database,
            "SELECT count(*) AS count FROM operator_audit WHERE action = 'login_failed' \
             AND operator = 'operator:alice' AND target = 'operator:alice' \
             AND reason LIKE 'the passkey''s answer was refused%' AND address = '127.0.0.1'"
        )
        .await,
        10
    );
    // Bob, from the same address, is not held back by alice's failures.
    let session = console.sign_in(&mut bob).await.expect("bob signs in");
    assert!(console.opens_pages(&session).await);
    // Alice's own passkey waits for her bucket to refill: the guesses held back hers alone.
    let (status, _) = console
        .sign_in(&mut alice)
        .await
        .expect_err("alice's passkey is resting");
    assert_eq!(status, 429);
}

#[tokio::test]
async fn a_trusted_proxys_header_names_the_client_in_the_audit_log() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(
        &database,
        &[
            ("CONSOLE_TRUSTED_PROXIES", "127.0.0.0/8, ::1"),
            ("CONSOLE_TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
        ],
    )
    .await;
    let mut console = ConsoleClient::open(&console_base(&server)).await;
    let mut alice = enrolled(&database, &console, "alice", "approver").await;
    console.forwarded_for = Some("203.0.113.9, 198.51.100.7");
    console.sign_in(&mut alice).await.expect("signed in");
    assert_eq!(
        login_address(&database, "alice").await.as_deref(),
        Some("198.51.100.7"),
        "the address the proxy appended, not what the client wrote before it"
    );
}

/// The value of `attribute="…"` where it first follows `marker` in `page`.
fn attribute_after(page: &str, marker: &str, attribute: &str) -> Option<String> {
    let rest = &page[page.find(marker)?..];
    let rest = &rest[rest.find(&format!("{attribute}=\""))? + attribute.len() + 2..];
    Some(rest[..rest.find('"')?].to_owned())
}

impl ConsoleClient {
    /// Signs in with `passkey` and issues its operator a personal token for `agentctl`, as the
    /// console's CLI token page does: the token, shown once.
    pub(crate) async fn operator_token(&self, passkey: &mut SoftPasskey) -> String {
        let session = self.sign_in(passkey).await.expect("signed in");
        let cookie = format!("__Host-console-session={session}");
        let page = self
            .client
            .get(format!("{}/console/token", self.base))
            .header("cookie", &cookie)
            .send()
            .await
            .expect("token page");
        assert_eq!(page.status(), 200);
        let page = page.text().await.expect("page");
        let csrf = attribute_after(&page, r#"name="csrf-token""#, "content").expect("csrf");
        let issued = self
            .client
            .post(format!("{}/console/token", self.base))
            .header("cookie", &cookie)
            .header("origin", &self.base)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string([("csrf", csrf.as_str())]).expect("form"))
            .send()
            .await
            .expect("issued");
        assert_eq!(issued.status(), 200);
        let page = issued.text().await.expect("page");
        let shown = &page[page
            .find("data-operator-token")
            .expect("the token, shown once")..];
        let text = &shown[shown.find('>').expect("its element") + 1..];
        text[..text.find('<').expect("its end")].trim().to_owned()
    }
}

/// `agentctl intents confirm ID`, with these flags and settings besides.
async fn confirm(
    database: &TestDatabase,
    id: &str,
    flags: &[&str],
    env: &[(&str, &str)],
) -> CliOutput {
    let mut args = vec!["intents", "confirm", id];
    args.extend_from_slice(flags);
    agentctl_with(database, env, &args).await
}

#[tokio::test]
async fn one_shell_cannot_approve_as_two_operators_and_disabled_approvers_stop_counting() {
    let (server, database) = Server::start().await;
    let console = ConsoleClient::open(&console_base(&server)).await;
    let (key, agent) = wallet_agent(&database).await;
    set_policy(
        &database,
        &agent,
        &["--approvals-required", "2", "--approvals-above", "100"],
    )
    .await;
    let (_, intent) = post_send(
        &server,
        &key,
        json!({"to": RECIPIENT, "amount_atomic": "101"}),
    )
    .await;
    let id = intent["id"].as_str().expect("id");
    // Names typed in one shell prove nobody: neither counts as that operator's approval.
    for name in ["alice", "bob"] {
        let named = confirm(&database, id, &["--operator", name], &[]).await;
        assert!(
            !named.success,
            "--operator {name} counted without proof: {}",
            named.stdout
        );
        assert!(named.stderr.contains("operator token"), "{}", named.stderr);
    }
    let shown = agentctl(&database, &["intents", "show", id]).await.json();
    assert_eq!(shown["approvals"], json!({"required": 2, "received": 0}));

    let mut passkeys = Vec::new();
    for name in ["alice", "bob", "carol"] {
        passkeys.push(enrolled(&database, &console, name, "approver").await);
    }
    let mut tokens = Vec::new();
    for passkey in &mut passkeys {
        tokens.push(console.operator_token(passkey).await);
    }
    let alices = [("AGENTCTL_OPERATOR_TOKEN", tokens[0].as_str())];
    let first = confirm(&database, id, &[], &alices).await.json();
    assert_eq!(first["status"], "pending_confirmation");
    assert_eq!(first["approvals"], json!({"required": 2, "received": 1}));
    assert_eq!(first["decided_by"], "operator:alice");
    // A token proves its own operator only.
    let posing = confirm(&database, id, &["--operator", "bob"], &alices).await;
    assert!(
        !posing.success && posing.stderr.contains("alice"),
        "{}",
        posing.stderr
    );
    // Alice is disabled: her approval no longer counts when the next one is counted.
    agentctl(&database, &["operators", "disable", "alice"])
        .await
        .json();
    let refused = confirm(&database, id, &[], &alices).await;
    assert!(
        !refused.success,
        "a disabled operator's token still proves them"
    );
    let bobs_token = tokens[1].clone();
    let second = confirm(&database, id, &["--operator-token", &bobs_token], &[])
        .await
        .json();
    assert_eq!(
        (&second["status"], &second["approvals"]),
        (
            &json!("pending_confirmation"),
            &json!({"required": 2, "received": 1})
        ),
        "alice's approval was counted after she was disabled"
    );
    let carol = tokens[2].clone();
    let third = confirm(&database, id, &[], &[("AGENTCTL_OPERATOR_TOKEN", &carol)])
        .await
        .json();
    assert_eq!(third["status"], "confirmed");
    assert_eq!(third["approvals"], json!({"required": 2, "received": 2}));
    // A revoked token proves nobody.
    agentctl(&database, &["operators", "token", "revoke", "bob"])
        .await
        .json();
    let (_, next) = post_send(
        &server,
        &key,
        json!({"to": RECIPIENT, "amount_atomic": "102"}),
    )
    .await;
    let next = next["id"].as_str().expect("id");
    let revoked = confirm(&database, next, &["--operator-token", &bobs_token], &[]).await;
    assert!(!revoked.success, "a revoked token still proves bob");
    // Every issue, use and revocation is in the audit log, never the token itself.
    for (action, rows) in [("token_issue", 3), ("token_revoke", 1)] {
        assert_eq!(
            count(
                &database,
                &format!("SELECT count(*) AS count FROM operator_audit WHERE action = '{action}'")
            )
            .await,
            rows,
            "{action}"
        );
    }
    assert!(
        count(
            &database,
            "SELECT count(*) AS count FROM operator_audit WHERE action = 'token_use'"
        )
        .await
            >= 3
    );
    for token in &tokens {
        assert_eq!(
            count(
                &database,
                &format!(
                    "SELECT count(*) AS count FROM operator_audit \
                     WHERE concat(before, after, reason, target) LIKE '%{}%'",
                    &token[4..]
                )
            )
            .await,
            0
        );
    }
}

/// The next chunk of a streamed answer, within `DEADLINE`; `None` at its end.
async fn next_chunk(response: &mut reqwest::Response) -> Option<String> {
    tokio::time::timeout(LIVE_LIST_DEADLINE, response.chunk())
        .await
        .expect("a chunk or the end in time")
        .expect("readable")
        .map(|chunk| String::from_utf8_lossy(&chunk).into_owned())
}

const LIVE_LIST_DEADLINE: Duration = Duration::from_secs(10);

// Issue 41: the live list held a place of its own semaphore, outside the registry, and did not
// end when the instance stopped.
#[tokio::test]
async fn a_live_list_holds_a_place_of_its_operator_and_ends_when_the_instance_stops() {
    let database = TestDatabase::new().await;
    let mut server = Server::start_on(&database, &[("CONSOLE_LIVE_LISTS_PER_OPERATOR", "2")]).await;
    let console = ConsoleClient::open(&console_base(&server)).await;
    let mut passkey = enrolled(&database, &console, "ada", "approver").await;
    let session = console.sign_in(&mut passkey).await.expect("signed in");
    let open = || {
        console
            .client
            .get(format!("{}/console/pending/stream", console.base))
            .header("cookie", format!("__Host-console-session={session}"))
            .send()
    };
    let mut lists = Vec::new();
    for _ in 0..2 {
        let mut list = open().await.expect("a live list");
        assert_eq!(list.status(), 200);
        assert_eq!(list.headers()["content-type"], "text/event-stream");
        assert_eq!(list.headers()["cache-control"], "no-store");
        let mut opening = String::new();
        while !opening.contains("event: changed") {
            opening.push_str(&next_chunk(&mut list).await.expect("the list goes on"));
        }
        assert!(opening.starts_with("retry: 3000\n\n"), "{opening:?}");
        lists.push(list);
    }
    let third = open().await.expect("an answer");
    assert_eq!(third.status(), 429, "the operator holds their two places");
    let metrics = server.metrics().await;
    assert!(
        metrics
            .lines()
            .any(|line| line == r#"long_lived_requests{kind="live_list"} 2"#),
        "{metrics}"
    );
    server.terminate();
    // Each list ends (`next_chunk` reads to the end within its deadline).
    for mut list in lists {
        while next_chunk(&mut list).await.is_some() {}
    }
    assert!(server.wait_for_exit(LIVE_LIST_DEADLINE).await);
}

/// The history's receipts download gives what the API gives for an executed intent, and refuses
/// in words what it cannot export: a range that is no range, an agent with no wallet, no agent.
#[tokio::test]
async fn the_receipts_download_gives_the_apis_receipts_and_refuses_what_it_cannot_export() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[FAST_EXECUTOR]).await;
    let console = ConsoleClient::open(&console_base(&server)).await;
    let mut alice = enrolled(&database, &console, "alice", "viewer").await;
    let session = console.sign_in(&mut alice).await.expect("signed in");
    let (key, agent) = wallet_agent(&database).await;
    let (_, wallet) = server.get("/v1/wallet/address", Some(&key)).await;
    let address = wallet["address"].as_str().expect("an address");
    agentctl(&database, &["sandbox", "fund", address, "5000000"])
        .await
        .json();
    let intent = confirmed_send(
        &server,
        &database,
        &key,
        json!({"to": RECIPIENT, "amount_atomic": "1250000"}),
    )
    .await;
    let executed = settled_intent(&server, &key).await;
    assert_eq!(executed["status"], "executed", "{executed}");
    let id = intent["id"].as_str().expect("an id");
    let (status, signed) = server
        .get(&format!("/v1/wallet/intents/{id}/receipt"), Some(&key))
        .await;
    assert_eq!(status, 200, "{signed}");

    let today = time::OffsetDateTime::now_utc().date();
    let download = |query: String| {
        let request = console
            .client
            .get(format!("{}/console/history/export?{query}", console.base))
            .header("cookie", format!("__Host-console-session={session}"));
        async move {
            let response = request.send().await.expect("an answer");
            let status = response.status().as_u16();
            let disposition = response
                .headers()
                .get("content-disposition")
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            (status, disposition, response.text().await.expect("a body"))
        }
    };
    let from = (today - time::Duration::DAY).to_string();
    let (status, disposition, body) =
        download(format!("agent={agent}&from={from}&to={today}&format=json")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        disposition,
        format!("attachment; filename=\"receipts-{agent}-{from}-to-{today}.json\"")
    );
    let exported: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(exported, json!([signed]));

    let (status, _, page) = download(format!("agent={agent}&from={today}&to=2020-01-01")).await;
    assert_eq!(status, 400);
    assert!(page.contains("before it starts"), "{page}");
    let (_, mailer) = create_agent(&database, &["--email"]).await;
    let mailer = mailer["id"].as_str().expect("an id");
    let (status, _, page) = download(format!("agent={mailer}&from={today}&to={today}")).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.to_lowercase().contains("wallet"), "{page}");
    let (status, _, _) = download(format!(
        "agent=00000000-0000-7000-8000-000000000000&from={today}&to={today}"
    ))
    .await;
    assert_eq!(status, 404);
    let anonymous = console
        .client
        .get(format!(
            "{}/console/history/export?agent={agent}&from={today}&to={today}",
            console.base
        ))
        .send()
        .await
        .expect("an answer");
    assert_ne!(anonymous.status().as_u16(), 200, "no session, no receipts");
}
