//! `agentctl`: JSON on stdout, errors on stderr with a non-zero exit.

use serde_json::Value;

use crate::support::harness::{agentctl, agentctl_at, agentctl_with, create_agent};
use test_support::TestDatabase;

#[tokio::test]
async fn the_key_is_printed_once_at_creation_and_never_again() {
    let database = TestDatabase::new().await;
    let (key, agent) = create_agent(&database, &["--label", "ops bot", "--email"]).await;
    assert!(key.starts_with("ark_") && key.len() == 47, "{key}");
    let id = agent["id"].as_str().expect("id");
    for args in [
        vec!["agents", "list"],
        vec!["agents", "show", id],
        vec!["agents", "deactivate", id],
    ] {
        let output = agentctl(&database, &args).await;
        assert!(output.success, "{}", output.stderr);
        assert!(
            !output.stdout.contains(&key[4..]) && !output.stderr.contains(&key[4..]),
            "{args:?} leaked the key"
        );
    }
}

#[tokio::test]
async fn list_and_show_describe_agents_as_the_api_does() {
    let database = TestDatabase::new().await;
    let (_, first) = create_agent(&database, &[]).await;
    let (_, second) = create_agent(&database, &["--phone"]).await;
    let listed = agentctl(&database, &["agents", "list"]).await.json();
    assert_eq!(listed, Value::Array(vec![first.clone(), second.clone()]));
    let shown = agentctl(
        &database,
        &["agents", "show", second["id"].as_str().expect("id")],
    )
    .await
    .json();
    assert_eq!(shown, second);
}

#[tokio::test]
async fn unknown_agents_and_bad_arguments_fail_on_stderr() {
    let database = TestDatabase::new().await;
    let unknown = uuid::Uuid::new_v4().to_string();
    let (_, plain) = create_agent(&database, &[]).await;
    let plain_id = plain["id"].as_str().expect("id");
    let (_, walleted) = create_agent(&database, &["--wallet"]).await;
    let wallet_id = walleted["id"].as_str().expect("id");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["agents", "show", &unknown], "not found"),
        (vec!["agents", "rotate-key", &unknown], "not found"),
        (vec!["agents", "show", "not-a-uuid"], "invalid"),
        (vec!["policy", "show", plain_id], "has no wallet"),
        (
            vec!["policy", "set", plain_id, "--max-daily", "10"],
            "has no wallet",
        ),
        (
            vec!["policy", "set", wallet_id, "--max-per-tx", "1.5"],
            "--max-per-tx",
        ),
        (
            vec!["policy", "set", wallet_id, "--max-daily", "0"],
            "greater than zero",
        ),
        (
            vec![
                "policy",
                "set",
                wallet_id,
                "--allow",
                "0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913",
            ],
            "checksum",
        ),
        (vec!["agents", "create", "--label", "   "], "label"),
    ];
    for (args, expected) in cases {
        let output = agentctl(&database, &args).await;
        assert!(!output.success, "{args:?} should fail");
        assert!(
            output.stdout.is_empty(),
            "{args:?} printed to stdout: {}",
            output.stdout
        );
        assert!(
            output.stderr.to_lowercase().contains(expected),
            "{args:?}: {}",
            output.stderr
        );
    }
}

#[tokio::test]
async fn policy_set_changes_only_what_it_names() {
    let database = TestDatabase::new().await;
    let (_, agent) = create_agent(&database, &["--wallet"]).await;
    let id = agent["id"].as_str().expect("id");
    let first = "0x1111111111111111111111111111111111111111";
    let second = "0x2222222222222222222222222222222222222222";
    agentctl(
        &database,
        &["policy", "set", id, "--max-per-tx", "100", "--allow", first],
    )
    .await
    .json();
    let policy = agentctl(
        &database,
        &[
            "policy",
            "set",
            id,
            "--max-daily",
            "1000",
            "--allow",
            second,
        ],
    )
    .await
    .json();
    assert_eq!(policy["max_per_tx_atomic"], "100");
    assert_eq!(policy["max_daily_atomic"], "1000");
    assert_eq!(
        policy["allowlisted_addresses"],
        serde_json::json!([first, second])
    );
    let policy = agentctl(
        &database,
        &[
            "policy",
            "set",
            id,
            "--max-per-tx",
            "none",
            "--clear-allowlist",
        ],
    )
    .await
    .json();
    assert_eq!(policy["max_per_tx_atomic"], Value::Null);
    assert_eq!(policy["max_daily_atomic"], "1000");
    assert_eq!(policy["allowlisted_addresses"], Value::Null);
    let shown = agentctl(&database, &["policy", "show", id]).await.json();
    assert_eq!(
        shown, policy,
        "show prints what set left, as set printed it"
    );
    assert_eq!(
        shown["usage"],
        serde_json::json!({"daily": {"spent_atomic": "0", "remaining_atomic": "1000"}})
    );
}

#[tokio::test]
async fn migrate_reports_nothing_to_apply_on_a_migrated_database() {
    let database = TestDatabase::new().await;
    let output = agentctl(&database, &["migrate"]).await.json();
    assert_eq!(output, serde_json::json!({"applied": []}));
}

#[tokio::test]
async fn every_help_that_takes_an_amount_says_it_is_in_atomic_units() {
    let database = TestDatabase::new().await;
    for args in [
        vec!["--help"],
        vec!["policy", "set", "--help"],
        vec!["sandbox", "fund", "--help"],
    ] {
        let output = agentctl(&database, &args).await;
        assert!(output.success, "{args:?}: {}", output.stderr);
        assert!(
            output.stdout.contains("atomic units") && output.stdout.contains("100000000"),
            "{args:?}: {}",
            output.stdout
        );
    }
}

#[tokio::test]
async fn on_the_sandbox_chain_the_cli_prints_no_warning() {
    let database = TestDatabase::new().await;
    for args in [vec!["agents", "create", "--wallet"], vec!["agents", "list"]] {
        let output = agentctl(&database, &args).await;
        assert!(output.success, "{args:?}: {}", output.stderr);
        assert_eq!(output.stderr, "", "{args:?}");
    }
}

#[tokio::test]
async fn a_closed_stdout_is_an_error_on_stderr_not_a_panic() {
    let database = TestDatabase::new().await;
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let output = tokio::process::Command::new(crate::support::harness::binary("agentctl"))
        .args(["agents", "create", "--wallet"])
        .env_clear()
        .env("DATABASE_URL", database.url())
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("agentctl starts")
        .wait_with_output()
        .await
        .expect("agentctl runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "the key was never shown: {stderr}"
    );
    assert!(
        stderr.contains("writing the output failed") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

#[tokio::test]
async fn without_the_master_key_of_the_stored_wallets_no_wallet_is_sealed() {
    const MASTER_KEY: &str = "3333333333333333333333333333333333333333333333333333333333333333";
    let database = TestDatabase::new().await;
    agentctl_with(
        &database,
        &[("WALLET_MASTER_KEY", MASTER_KEY)],
        &["agents", "create", "--wallet"],
    )
    .await
    .json();
    // Run without WALLET_MASTER_KEY: the sandbox key does not open the wallet stored above.
    let refused = agentctl(&database, &["agents", "create", "--wallet"]).await;
    assert!(!refused.success, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("WALLET_MASTER_KEY") && !refused.stderr.contains(MASTER_KEY),
        "{}",
        refused.stderr
    );
    let agents = agentctl(&database, &["agents", "list"]).await.json();
    assert_eq!(agents.as_array().expect("list").len(), 1, "{agents}");
    // Off the sandbox chain there is no default key at all.
    let refused = agentctl_with(
        &database,
        &[("EVM_RPC_URL", "http://127.0.0.1:1")],
        &["agents", "list"],
    )
    .await;
    assert!(!refused.success, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("WALLET_MASTER_KEY"),
        "{}",
        refused.stderr
    );
}

/// The long options `agentctl ARGS --help` prints.
async fn options_in_help(args: &[&str]) -> Vec<String> {
    let mut asked = args.to_vec();
    asked.push("--help");
    let help = agentctl_at("postgres://localhost/unused", &[], &asked).await;
    assert!(help.success, "{asked:?}: {}", help.stderr);
    help.stdout
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| word.len() > 2 && word.starts_with("--") && *word != "--help")
        .map(str::to_owned)
        .collect()
}

/// The README's summary of `agentctl` (its control plane section) names every option of `policy
/// set` that `--help` prints, beside the options of every command, and shows them in an example
/// of two lines.
#[tokio::test]
async fn the_readme_lists_every_option_of_policy_set() {
    let everywhere = options_in_help(&[]).await;
    let options: Vec<String> = options_in_help(&["policy", "set"])
        .await
        .into_iter()
        .filter(|option| !everywhere.contains(option))
        .collect();
    assert!(options.len() > 10, "{options:?}");
    let readme = std::fs::read_to_string(test_support::workspace_root().join("README.md"))
        .expect("README.md");
    let section = readme
        .split("\n## ")
        .find(|section| section.starts_with("The control plane: `agentctl`"))
        .expect("the README's agentctl section");
    let summary = &section[section.find("agentctl policy set").expect("policy set")
        ..section.find("agentctl policy show").expect("policy show")];
    for option in &options {
        assert!(
            summary.contains(&format!("[{option} ")) || summary.contains(&format!("[{option}]")),
            "the README's summary of policy set lacks {option}:\n{summary}"
        );
    }
    let example = section
        .split("```bash\n")
        .filter_map(|block| block.split_once("```").map(|(code, _)| code))
        .find(|code| code.starts_with("agentctl policy set"))
        .expect("an example of policy set");
    assert_eq!(example.trim_end().lines().count(), 2, "{example}");
}

/// `agentctl sandbox email` of a mail to `address`, answering `in_reply_to` when given.
async fn sandbox_email(
    database: &TestDatabase,
    address: &str,
    in_reply_to: Option<&str>,
) -> crate::support::harness::CliOutput {
    let mut args = vec![
        "sandbox",
        "email",
        "--to",
        address,
        "--from",
        "alice@example.org",
        "--subject",
        "Plans",
        "--text",
        "Lunch?",
    ];
    if let Some(given) = in_reply_to {
        args.extend(["--in-reply-to", given]);
    }
    agentctl(database, &args).await
}

/// `sandbox email --in-reply-to` lands in the answered mail's thread whether it is given the
/// message's `id`, as the API lists it, or its Message-ID; anything else is refused, saying which
/// two it takes, before anything is delivered (issue 46).
#[tokio::test]
async fn sandbox_email_answers_a_message_named_by_its_api_id_or_its_message_id() {
    let database = TestDatabase::new().await;
    let (_, agent) = create_agent(&database, &["--email"]).await;
    let address = agent["email_inbox"]["address"].as_str().expect("an inbox");
    let first = sandbox_email(&database, address, None).await.json();
    let first = &first["delivered"][0];
    let id = first["id"].as_str().expect("an id");
    let message_id = first["internet_message_id"].as_str().expect("a Message-ID");
    let bare = message_id.trim_start_matches('<').trim_end_matches('>');
    for given in [id, message_id, bare] {
        let answer = sandbox_email(&database, address, Some(given)).await.json();
        let answer = &answer["delivered"][0];
        assert_eq!(answer["thread_id"], first["thread_id"], "{given:?}");
        assert_ne!(answer["id"], first["id"]);
    }

    let unknown = uuid::Uuid::now_v7().to_string();
    for (given, expected) in [
        ("plans-1", "`internet_message_id`"),
        ("<a@b> <c@d>", "`internet_message_id`"),
        (unknown.as_str(), "has no message"),
    ] {
        let refused = sandbox_email(&database, address, Some(given)).await;
        assert!(!refused.success, "{given:?}: {}", refused.stdout);
        assert!(
            refused.stderr.contains(expected),
            "{given:?}: {}",
            refused.stderr
        );
    }
}
