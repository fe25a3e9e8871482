//! The README's walkthrough, run as written: its shell blocks are taken from README.md (between
//! the walkthrough markers) and run by bash against a fresh server, with only the base URL
//! pointed at that server. A step that stops working fails this test.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use test_support::workspace_root;

use crate::support::harness::{agentctl, binary, Server};

const START: &str = "<!-- walkthrough: start -->";
const END: &str = "<!-- walkthrough: end -->";
const README_BASE_URL: &str = "http://127.0.0.1:8080";
const DEADLINE: Duration = Duration::from_secs(120);

/// The contents of every ```bash block between the markers, in order.
fn walkthrough_script(readme: &str) -> String {
    let start = readme
        .find(START)
        .expect("README has a walkthrough start marker");
    let end = readme
        .find(END)
        .expect("README has a walkthrough end marker");
    let mut script = String::new();
    let mut in_block = false;
    for line in readme[start..end].lines() {
        match (in_block, line.trim_end()) {
            (false, "```bash") => in_block = true,
            (true, "```") => in_block = false,
            (true, code) => {
                script.push_str(code);
                script.push('\n');
            }
            (false, _) => {}
        }
    }
    assert!(!in_block, "an unclosed code block in the walkthrough");
    script
}

#[test]
fn the_script_is_every_shell_block_between_the_markers() {
    let readme = format!(
        "```bash\nmake run\n```\n{START}\ntext\n```bash\none\ntwo\n```\nmore\n```json\n{{}}\n```\n```bash\nthree\n```\n{END}\n```bash\nafter\n```\n"
    );
    assert_eq!(walkthrough_script(&readme), "one\ntwo\nthree\n");
}

#[tokio::test]
async fn the_readme_walkthrough_runs_as_written() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let script = walkthrough_script(&readme);
    for step in [
        "agents create",
        "/v1/agents/me",
        "/v1/email/send",
        "sandbox outbox",
        "sandbox email",
        "/v1/email/inbox",
        "/v1/codes/wait",
        "sandbox sms",
        "/v1/sms/wait-for-code",
        "sandbox fund",
        "policy set",
        "/v1/wallet/send",
        "/v1/wallet/intents",
        "intents confirm",
        "/v1/wallet/x402/authorize",
        "/v1/events",
        "/v1/events/stream",
    ] {
        assert!(
            script.contains(step),
            "the walkthrough lost its step {step:?}"
        );
    }
    let (server, database) = Server::start().await;
    let script = script.replace(README_BASE_URL, &server.base_url);
    let run = tokio::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(workspace_root())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("DATABASE_URL", database.url())
        .env("AGENTCTL_BIN", binary("agentctl"))
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(DEADLINE, run)
        .await
        .expect("the walkthrough finished in time")
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the walkthrough failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    // What a person sees of a step that worked is its output: curl's errors (a stream cut by
    // its deadline among them) say something failed.
    assert!(
        !stderr.contains("curl: ("),
        "a step printed an error:\n{stderr}"
    );
    assert!(
        stdout.contains("Spend policy violation") && stdout.contains("HTTP 403"),
        "the over-limit send was refused: {stdout}"
    );
    for (what, shown) in [
        ("the mail reached the provider", "\"subject\": \"Hello\""),
        (
            "the inbound mail's code was waited for",
            "\"code\": \"385920\"",
        ),
        ("the SMS code was waited for", "\"code\": \"482913\""),
        (
            "the feed listed the intent",
            "\"type\":\"transfer_intent.created\"",
        ),
        ("the stream carried the SMS", "event: sms.received"),
        (
            "the payment waited for an operator",
            "\"status\": \"pending_confirmation\"",
        ),
        (
            "the approved payment was signed",
            "\"header\": \"PAYMENT-SIGNATURE\"",
        ),
    ] {
        assert!(stdout.contains(shown), "{what}: {stdout}");
    }
    let executed = agentctl(&database, &["intents", "list", "--status", "executed"])
        .await
        .json();
    let executed = executed.as_array().expect("a list");
    assert_eq!(executed.len(), 1, "one transfer executed: {executed:?}");
    assert_eq!(executed[0]["amount_atomic"], "10000000");
    assert_eq!(
        executed[0]["recipient_address"],
        "0x000000000000000000000000000000000000dEaD"
    );
    let balance: Value = stdout
        .rsplit_once("\n{")
        .map(|(_, last)| serde_json::from_str(&format!("{{{last}")).expect("balance JSON"))
        .expect("the walkthrough ends with the balance");
    assert_eq!(
        balance["assets"][1]["amount_atomic"], "90000000",
        "{balance}"
    );
}
