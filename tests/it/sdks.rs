//! The client libraries of sdks/ (decision 0093), installed from the artifacts `make sdks` (and
//! `make test`, through `scripts/sdks.sh build`) leaves in target/sdks/ into clean environments:
//! a new virtualenv given only the wheel and its dependencies' wheels, a new npm project given
//! only the tarball. Each runs its unit tests there, its README's quickstart as written and the
//! README walkthrough's journey (sdks/*/tests/journey.*) against a real server on anvil, paying
//! the official x402 resource server (PyPI's x402, as in x402_official.rs). The Python package's
//! run on the oldest Python 3.9+ here (its floor) too, where its wheel is also installed alone to
//! show that it needs httpx and nothing else. The tools and wheels come from
//! scripts/sdk-tools.sh (`SDK_TOOLS`). A last test edits a copy of the OpenAPI document and
//! expects the staleness check of `make lint` to fail.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use test_support::workspace_root;
use tokio::process::Command;

use crate::onchain::{OnChain, RECIPIENT};
use crate::support::harness::{binary, target_dir, Server};
use crate::support::process::run;
use crate::x402_official::PaidResource;

const QUICKSTART_START: &str = "<!-- quickstart: start -->";
const QUICKSTART_END: &str = "<!-- quickstart: end -->";

fn sdk_tools() -> PathBuf {
    std::env::var_os("SDK_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "SDK_TOOLS is not set: run `export SDK_TOOLS=$(scripts/sdk-tools.sh)` and \
             `scripts/sdks.sh build` (make test does) to install the SDKs' tools and build their \
             wheel and npm tarball"
            )
        })
}

/// The one artifact in target/sdks/ whose name starts with `prefix` and ends with `suffix`.
fn artifact(prefix: &str, suffix: &str) -> PathBuf {
    let folder = target_dir().join("sdks");
    let found: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| {
                    let name = path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or_default();
                    name.starts_with(prefix) && name.ends_with(suffix)
                })
                .collect()
        })
        .unwrap_or_default();
    match found.as_slice() {
        [one] => one.clone(),
        _ => panic!(
            "expected one {prefix}*{suffix} in {}: run `scripts/sdks.sh build` (make test does)",
            folder.display()
        ),
    }
}

/// A folder of the test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!(
            "agent-runtime-sdk-{what}-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&path).expect("a scratch folder");
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `output` of a command that must have succeeded; its stdout.
fn succeeded(what: &str, output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    eprintln!("{what}: {}", stdout.lines().last().unwrap_or_default());
    stdout
}

/// The code of the first ```LANGUAGE block between the quickstart markers of `readme`.
fn quickstart(readme: &Path, language: &str) -> String {
    let text = std::fs::read_to_string(readme).expect("the README");
    let start = text
        .find(QUICKSTART_START)
        .expect("a quickstart start marker");
    let end = text.find(QUICKSTART_END).expect("a quickstart end marker");
    let block = &text[start..end];
    let fence = format!("```{language}\n");
    let code = &block[block.find(&fence).expect("a code block") + fence.len()..];
    code[..code.find("```").expect("a closed code block")].to_owned()
}

/// The oldest Python 3.9+ on the machine (3.9 is the package's floor), as scripts/sdk-tools.sh
/// found it; python3 where it found none newer.
fn oldest_python() -> PathBuf {
    let recorded = sdk_tools().join("oldest-python");
    let path = std::fs::read_to_string(&recorded).unwrap_or_else(|error| {
        panic!("{}: {error}: run scripts/sdk-tools.sh", recorded.display())
    });
    PathBuf::from(path.trim())
}

/// A clean virtualenv made by `interpreter` with the built wheel and its dependencies, installed
/// offline from the wheelhouse.
async fn python_environment(interpreter: &Path) -> (Scratch, PathBuf) {
    let scratch = Scratch::new("python");
    let venv = scratch.0.join("venv");
    let mut create = Command::new(interpreter);
    create.args(["-m", "venv"]).arg(&venv);
    succeeded(
        &format!("{} -m venv", interpreter.display()),
        &run(create, Duration::from_secs(120)).await,
    );
    let python = venv.join("bin/python");
    pip_install(&python, [artifact("agent_runtime-", ".whl")]).await;
    (scratch, python)
}

/// Installs `what` into the virtualenv of `python`, offline from the wheelhouse.
async fn pip_install(python: &Path, what: impl IntoIterator<Item = impl AsRef<OsStr>>) {
    let mut install = Command::new(python);
    install
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg("--find-links")
        .arg(sdk_tools().join("wheelhouse"))
        .args(what);
    succeeded("pip install", &run(install, Duration::from_secs(120)).await);
}

/// The unit tests of the hand-written layer (and of the generated models' timestamps) run by
/// `python`, in the virtualenv `scratch` holds.
async fn python_unit_tests(scratch: &Scratch, python: &Path) {
    let mut pytest = Command::new(python);
    pytest
        .current_dir(&scratch.0)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(workspace_root().join("sdks/python/tests/test_layer.py"));
    let stdout = succeeded("pytest", &run(pytest, Duration::from_secs(180)).await);
    assert!(passed(&stdout, "passed") >= 30, "{stdout}");
}

/// A clean npm project with the built tarball installed, offline (the package has no
/// dependencies); the package's tests copied beside it.
async fn node_environment() -> Scratch {
    let scratch = Scratch::new("node");
    std::fs::write(
        scratch.0.join("package.json"),
        r#"{"name": "sdk-test", "private": true, "type": "module"}"#,
    )
    .expect("package.json");
    let mut install = Command::new("npm");
    install
        .current_dir(&scratch.0)
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .arg(artifact("agent-runtime-", ".tgz"));
    succeeded(
        "installing the tarball",
        &run(install, Duration::from_secs(120)).await,
    );
    let tests = workspace_root().join("sdks/typescript/test");
    for entry in std::fs::read_dir(&tests).expect("sdks/typescript/test") {
        let path = entry.expect("an entry").path();
        std::fs::copy(&path, scratch.0.join(path.file_name().expect("a name"))).expect("copied");
    }
    scratch
}

/// The server, the agent and the official x402 seller a journey runs against.
struct Journey {
    chain: OnChain,
    server: Server,
    key: String,
    /// Another agent's, for the quickstart: the journey counts its agent's mail and intents.
    quickstart_key: String,
    seller: PaidResource,
}

impl Journey {
    async fn start() -> Journey {
        let chain = OnChain::start().await;
        let server = chain
            .server(&[
                ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
                ("WEBHOOK_RETRY_SCHEDULE", "0,0.5,1"),
                // One mail at once, then one every 5 s: the journey's second mail meets a 429.
                ("EMAIL_AGENT_SEND_BURST", "1"),
                ("EMAIL_AGENT_SEND_RATE_PER_MINUTE", "12"),
                ("EVENT_STREAM_KEEPALIVE_SECS", "2"),
            ])
            .await;
        let created = chain
            .agentctl(&[
                "agents", "create", "--label", "sdk", "--email", "--phone", "--wallet",
            ])
            .await
            .json();
        let key = created["agent_key"].as_str().expect("a key").to_owned();
        let id = created["agent"]["id"].as_str().expect("an id");
        let wallet = created["agent"]["wallet"]["address"]
            .as_str()
            .expect("a wallet");
        chain.anvil.mint(&chain.token, wallet, 100_000_000).await;
        chain.anvil.set_eth(wallet, 1_000_000_000_000_000_000).await;
        chain
            .agentctl(&[
                "policy",
                "set",
                id,
                "--max-per-tx",
                "45000000",
                "--max-daily",
                "50000000",
            ])
            .await
            .json();

        let quickstart = chain
            .agentctl(&[
                "agents",
                "create",
                "--label",
                "quickstart",
                "--email",
                "--wallet",
            ])
            .await
            .json();
        let quickstart_key = quickstart["agent_key"].as_str().expect("a key").to_owned();

        let seller = PaidResource::start(&chain, 0, 30_000).await;
        Journey {
            chain,
            server,
            key,
            quickstart_key,
            seller,
        }
    }

    /// `program` with the environment of a journey: the SDK's defaults (AGENT_RUNTIME_KEY,
    /// AGENT_RUNTIME_URL), agentctl with the chain's settings for the operator's steps, the paid
    /// resource, and nothing else of this process's.
    fn command(&self, program: &Path, current_dir: &Path, key: &str) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(current_dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", current_dir)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("AGENT_RUNTIME_KEY", key)
            .env("AGENT_RUNTIME_URL", &self.server.base_url)
            .env("AGENTCTL", binary("agentctl"))
            .env("DATABASE_URL", self.chain.database.url())
            .envs(self.chain.env())
            .env("RECIPIENT", RECIPIENT)
            .env("PAID_URL", &self.seller.url);
        command
    }
}

/// The count a test runner's closing line gives, e.g. "32 passed in 1.9s" or "# pass 20".
fn passed(stdout: &str, marker: &str) -> usize {
    stdout
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words
                .iter()
                .position(|word| word.trim_matches(',') == marker)?;
            match marker {
                "passed" => words.get(at.checked_sub(1)?)?.parse().ok(),
                _ => words.get(at + 1)?.parse().ok(),
            }
        })
        .next_back()
        .unwrap_or(0)
}

#[tokio::test]
async fn the_python_sdks_unit_tests_pass_against_the_installed_wheel() {
    let (scratch, python) = python_environment(Path::new("python3")).await;
    pip_install(&python, ["pytest"]).await;
    python_unit_tests(&scratch, &python).await;
}

/// sdks.md: one runtime dependency, httpx, on Python 3.9+. The wheel installed alone by the oldest
/// Python here brings httpx and its own dependencies only; every module imports and a model reads
/// the server's `Z` timestamps (tests/httpx_alone.py); then the unit tests pass there too.
#[tokio::test]
async fn the_python_sdk_needs_httpx_alone_and_passes_its_unit_tests_on_the_oldest_python() {
    let (scratch, python) = python_environment(&oldest_python()).await;
    let mut alone = Command::new(&python);
    alone
        .current_dir(&scratch.0)
        .env_clear()
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .arg(workspace_root().join("sdks/python/tests/httpx_alone.py"));
    let stdout = succeeded(
        "the package beside httpx alone",
        &run(alone, Duration::from_secs(60)).await,
    );
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("a JSON summary");
    assert!(summary["modules"].as_u64() >= Some(50), "{summary}");

    pip_install(&python, ["pytest"]).await;
    python_unit_tests(&scratch, &python).await;
}

#[tokio::test]
async fn the_python_sdk_runs_its_quickstart_and_the_journey_against_the_real_server() {
    // On the oldest Python here, which reads the server's timestamps with the least help.
    let (scratch, python) = python_environment(&oldest_python()).await;
    let journey = Journey::start().await;
    let readme = workspace_root().join("sdks/python/README.md");
    let script = scratch.0.join("quickstart.py");
    std::fs::write(&script, quickstart(&readme, "python")).expect("quickstart.py");
    let mut quick = journey.command(&python, &scratch.0, &journey.quickstart_key);
    quick.arg(&script);
    succeeded(
        "the quickstart",
        &run(quick, Duration::from_secs(120)).await,
    );

    let mut run_journey = journey.command(&python, &scratch.0, &journey.key);
    run_journey.arg(workspace_root().join("sdks/python/tests/journey.py"));
    let stdout = succeeded(
        "the journey",
        &run(run_journey, Duration::from_secs(300)).await,
    );
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("a JSON summary");
    assert!(
        summary["stream_connections"].as_u64() >= Some(2),
        "{summary}"
    );
}

#[tokio::test]
async fn the_typescript_sdks_unit_tests_pass_against_the_installed_tarball() {
    let scratch = node_environment().await;
    let mut test = Command::new("node");
    test.current_dir(&scratch.0)
        .env("OPENAPI_DOC", workspace_root().join("docs/openapi.json"))
        .args(["--test", "--test-timeout=30000", "unit.test.mjs"]);
    let stdout = succeeded("node --test", &run(test, Duration::from_secs(180)).await);
    assert!(passed(&stdout, "pass") >= 20, "{stdout}");
}

#[tokio::test]
async fn the_typescript_sdk_runs_its_quickstart_and_the_journey_against_the_real_server() {
    let scratch = node_environment().await;
    let journey = Journey::start().await;
    let readme = workspace_root().join("sdks/typescript/README.md");
    std::fs::write(scratch.0.join("quickstart.mjs"), quickstart(&readme, "js"))
        .expect("quickstart.mjs");
    let node = PathBuf::from("node");
    let mut quick = journey.command(&node, &scratch.0, &journey.quickstart_key);
    quick.arg("quickstart.mjs");
    succeeded(
        "the quickstart",
        &run(quick, Duration::from_secs(120)).await,
    );

    let mut run_journey = journey.command(&node, &scratch.0, &journey.key);
    run_journey.arg("journey.mjs");
    let stdout = succeeded(
        "the journey",
        &run(run_journey, Duration::from_secs(300)).await,
    );
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("a JSON summary");
    assert!(
        summary["stream_connections"].as_u64() >= Some(2),
        "{summary}"
    );
}

#[tokio::test]
async fn the_staleness_check_passes_on_the_committed_document_and_fails_on_an_edited_one() {
    let tools = sdk_tools();
    let check = |document: &Path| {
        let mut command = Command::new(workspace_root().join("scripts/sdks.sh"));
        command
            .current_dir(workspace_root())
            .env("SDK_TOOLS", &tools)
            .arg("check")
            .arg(document);
        run(command, Duration::from_secs(180))
    };
    let committed = workspace_root().join("docs/openapi.json");
    let output = check(&committed).await;
    succeeded("the check of the committed document", &output);

    let scratch = Scratch::new("openapi");
    let mut document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&committed).expect("the document")).expect("JSON");
    document["components"]["schemas"]["ErrorBody"]["properties"]["hint"] =
        serde_json::json!({"type": "string", "description": "What to do about it."});
    let edited = scratch.0.join("openapi.json");
    std::fs::write(&edited, document.to_string()).expect("the edited copy");
    let output = check(&edited).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "a stale generation passed:\n{stderr}"
    );
    assert!(
        stderr.contains("error_body.py") && stderr.contains("types.gen.ts"),
        "the check names the stale files of both languages:\n{stderr}"
    );
}
