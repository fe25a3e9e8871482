//! The spend policy's second edition (`policy.md`), black-box: its fields on the policy read,
//! every rule's refusal, the dry-run check, the auto-confirm tier, quorum approvals, a policy of
//! the first edition, and every window holding exactly under concurrent sends over two instances.

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::console::{console_base, enrolled, ConsoleClient};
use crate::email::post;
use crate::support::harness::{agentctl, agentctl_with, read, Server, PATIENT_LOCKS, PATIENT_POOL};
use crate::wallet::{
    address_of, post_send, set_policy, settled_intent, wallet_agent, FAST_EXECUTOR, RECIPIENT,
    UNLIMITED_SENDS,
};

const OTHER: &str = "0x1111111111111111111111111111111111111111";

async fn post_check(server: &Server, key: &str, body: Value) -> (u16, Value) {
    let answer = post(server, "/v1/wallet/check", key, &body, None).await;
    (answer.status, answer.body)
}

fn to(recipient: &str, amount: &str) -> Value {
    json!({"to": recipient, "amount_atomic": amount})
}

fn window(spent: &str, remaining: &str) -> Value {
    json!({"spent_atomic": spent, "remaining_atomic": remaining})
}

#[tokio::test]
async fn every_new_field_is_set_by_agentctl_and_read_with_its_usage() {
    let (server, database) = Server::start().await;
    let (key, id) = wallet_agent(&database).await;
    let printed = set_policy(
        &database,
        &id,
        &[
            "--max-daily",
            "1000",
            "--max-weekly",
            "5000",
            "--max-monthly",
            "9000",
            "--recipient-limit",
            &format!("{RECIPIENT}:300:none"),
            "--recipient-limit",
            &format!("{OTHER}:none:700"),
            "--auto-confirm-max",
            "10",
            "--auto-confirm-daily",
            "25",
            "--approvals-required",
            "2",
            "--approvals-above",
            "500",
        ],
    )
    .await;
    // `policy set` prints the policy with its usage (policy.md), nothing spent yet.
    assert_eq!(
        printed["usage"],
        json!({
            "daily": window("0", "1000"),
            "weekly": window("0", "5000"),
            "monthly": window("0", "9000"),
            "auto_confirm_daily": window("0", "25"),
        })
    );
    let (status, sent) = post_send(&server, &key, to(OTHER, "100")).await;
    assert_eq!(status, 200, "{sent}");
    let (status, policy) = server.get("/v1/wallet/policy", Some(&key)).await;
    assert_eq!(status, 200);
    assert_eq!(policy["max_weekly_atomic"], "5000");
    assert_eq!(policy["max_monthly_atomic"], "9000");
    assert_eq!(
        policy["recipient_limits"],
        json!([
            {"address": RECIPIENT, "max_per_tx_atomic": "300", "max_daily_atomic": null},
            {"address": OTHER, "max_per_tx_atomic": null, "max_daily_atomic": "700"},
        ])
    );
    assert_eq!(policy["auto_confirm_max_atomic"], "10");
    assert_eq!(policy["auto_confirm_daily_atomic"], "25");
    assert_eq!(policy["approvals_required"], 2);
    assert_eq!(policy["approvals_required_above_atomic"], "500");
    assert_eq!(
        policy["usage"],
        json!({
            "daily": window("100", "900"),
            "weekly": window("100", "4900"),
            "monthly": window("100", "8900"),
            "auto_confirm_daily": window("0", "25"),
        })
    );
    let shown = agentctl(&database, &["policy", "show", &id]).await.json();
    assert_eq!(shown["usage"], policy["usage"]);
    assert_eq!(shown["recipient_limits"], policy["recipient_limits"]);
    // Cleared one by one, each reads null again, as a first-edition policy does.
    set_policy(
        &database,
        &id,
        &[
            "--max-weekly",
            "none",
            "--clear-recipient-limits",
            "--auto-confirm-max",
            "none",
            "--approvals-required",
            "none",
        ],
    )
    .await;
    let (_, policy) = server.get("/v1/wallet/policy", Some(&key)).await;
    for field in [
        "max_weekly_atomic",
        "recipient_limits",
        "auto_confirm_max_atomic",
        "approvals_required",
    ] {
        assert_eq!(policy[field], Value::Null, "{field}");
    }
    assert_eq!(policy["max_monthly_atomic"], "9000");
    assert!(policy["usage"].get("weekly").is_none());
}

#[tokio::test]
async fn a_policy_read_again_shows_every_change_and_an_execution_leaving_its_window() {
    let (server, database) = Server::start().await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(&database, &id, &["--max-daily", "1000"]).await;
    let daily = || async {
        let (status, policy) = server.get("/v1/wallet/policy", Some(&key)).await;
        assert_eq!(status, 200, "{policy}");
        policy["usage"]["daily"].clone()
    };
    assert_eq!(daily().await, window("0", "1000"));
    assert_eq!(daily().await, window("0", "1000"), "read again");
    assert!(
        server
            .metrics()
            .await
            .contains(r#"rendered_policies{measure="policies"} 1"#),
        "the answer is kept"
    );
    let (status, sent) = post_send(&server, &key, to(RECIPIENT, "100")).await;
    assert_eq!(status, 200, "{sent}");
    assert_eq!(daily().await, window("100", "900"), "after a send");
    set_policy(&database, &id, &["--max-daily", "2000"]).await;
    assert_eq!(
        daily().await,
        window("100", "1900"),
        "after a policy change"
    );
    // An execution of 50 that leaves the rolling day three seconds from now.
    database
        .execute(&format!(
            "INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain, \
                 recipient_address, amount_atomic, nonce, tx_hash, executed_at) \
             SELECT gen_random_uuid(), agent_id, id, 'executed', 'USDC', 'base', \
                 '0x{recipient}', 50, 0, '0x{hash}', \
                 now() - interval '24 hours' + interval '3 seconds' \
             FROM wallets WHERE agent_id = '{id}'",
            recipient = "22".repeat(20),
            hash = "ab".repeat(32),
        ))
        .await;
    assert_eq!(daily().await, window("150", "1850"), "after the execution");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let now = daily().await;
        if now == window("100", "1900") {
            break;
        }
        assert_eq!(now, window("150", "1850"), "until it leaves the day");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the execution never left the day"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn bad_policy_flags_are_refused_and_change_nothing() {
    let (_, database) = Server::start().await;
    let (_, id) = wallet_agent(&database).await;
    for flags in [
        ["--approvals-required", "6"].as_slice(),
        &["--approvals-required", "0"],
        // One operator is no quorum (policy.md: 2 to 5).
        &["--approvals-required", "1"],
        &["--recipient-limit", "0x12:1:1"],
        &["--recipient-limit", &format!("{RECIPIENT}:1")],
        &["--max-weekly", "-5"],
    ] {
        let mut args = vec!["policy", "set", id.as_str()];
        args.extend_from_slice(flags);
        let output = agentctl(&database, &args).await;
        assert!(!output.success, "{flags:?} was accepted");
    }
    let shown = agentctl(&database, &["policy", "show", &id]).await.json();
    assert_eq!(shown["approvals_required"], Value::Null);
    assert_eq!(shown["recipient_limits"], Value::Null);
}

#[tokio::test]
async fn every_rule_refuses_with_its_name_and_what_is_left() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &UNLIMITED_SENDS).await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(
        &database,
        &id,
        &[
            "--max-weekly",
            "500",
            "--max-monthly",
            "400",
            "--recipient-limit",
            &format!("{RECIPIENT}:50:80"),
        ],
    )
    .await;
    let cases = [
        (to(RECIPIENT, "51"), "recipient_max_per_tx", "maximum of 50"),
        (to(OTHER, "401"), "max_monthly", "400 is still available"),
    ];
    for (body, rule, detail) in cases {
        let (status, verdict) = post_check(&server, &key, body.clone()).await;
        assert_eq!(status, 200, "{verdict}");
        assert_eq!(verdict["allowed"], false);
        assert_eq!(verdict["rule"], rule);
        assert_eq!(verdict["would_be"], "pending_confirmation");
        let (status, refused) = post_send(&server, &key, body).await;
        assert_eq!(status, 403, "{refused}");
        let said = refused["detail"].as_str().expect("detail");
        assert!(said.contains(detail), "{said}");
    }
    assert_eq!(post_send(&server, &key, to(RECIPIENT, "50")).await.0, 200);
    let (status, refused) = post_send(&server, &key, to(RECIPIENT, "31")).await;
    assert_eq!(status, 403);
    assert!(
        refused["detail"]
            .as_str()
            .expect("detail")
            .contains("30 is still available to it in the rolling 24 hours"),
        "{refused}"
    );
    set_policy(&database, &id, &["--max-weekly", "100"]).await;
    let (status, refused) = post_send(&server, &key, to(OTHER, "51")).await;
    assert_eq!(status, 403);
    assert!(
        refused["detail"]
            .as_str()
            .expect("detail")
            .contains("weekly maximum of 100; 50 is still available in the rolling 7 days"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_check_judges_without_creating_or_reserving_anything() {
    let (server, database) = Server::start().await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(&database, &id, &["--max-daily", "100"]).await;
    for _ in 0..3 {
        let (status, verdict) = post_check(&server, &key, to(RECIPIENT, "100")).await;
        assert_eq!(status, 200);
        assert_eq!(
            verdict,
            json!({"allowed": true, "rule": null, "detail": null,
                   "would_be": "pending_confirmation", "usage": {"daily": window("0", "100")}})
        );
    }
    let (_, page) = server.get("/v1/wallet/intents", Some(&key)).await;
    assert_eq!(page["items"], json!([]), "nothing was created");
    assert_eq!(post_send(&server, &key, to(RECIPIENT, "100")).await.0, 200);
    let (_, verdict) = post_check(&server, &key, to(RECIPIENT, "1")).await;
    assert_eq!(verdict["allowed"], false);
    assert_eq!(verdict["rule"], "max_daily");
    assert_eq!(verdict["usage"]["daily"], window("100", "0"));
    let (status, refused) = post_check(&server, &key, json!({"to": "nope"})).await;
    assert_eq!(status, 422, "{refused}");
    let (status, _) = post_check(&server, &key, to(&address_of(&server, &key).await, "1")).await;
    assert_eq!(
        status, 422,
        "the wallet itself is refused as a send refuses it"
    );
}

#[tokio::test]
async fn an_auto_confirm_tier_without_a_daily_bound_is_refused_and_nothing_changes() {
    let database = TestDatabase::new().await;
    let (_, id) = wallet_agent(&database).await;
    let before = agentctl(&database, &["policy", "show", &id]).await.json();
    let unbounded = agentctl(
        &database,
        &["policy", "set", &id, "--auto-confirm-max", "10"],
    )
    .await;
    assert!(!unbounded.success, "an unbounded tier was accepted");
    assert!(
        unbounded
            .stderr
            .contains("the auto-confirm tier needs a daily bound")
            && unbounded.stderr.contains("--auto-confirm-daily"),
        "{}",
        unbounded.stderr
    );
    assert_eq!(
        agentctl(&database, &["policy", "show", &id]).await.json(),
        before,
        "nothing changed"
    );
    let bounded = set_policy(
        &database,
        &id,
        &["--auto-confirm-max", "10", "--auto-confirm-daily", "25"],
    )
    .await;
    assert_eq!(bounded["auto_confirm_max_atomic"], "10");
    // Taking the bound away alone leaves the tier unbounded: refused too.
    let unbound = agentctl(
        &database,
        &["policy", "set", &id, "--auto-confirm-daily", "none"],
    )
    .await;
    assert!(!unbound.success, "the bound was taken away");
    let removed = set_policy(
        &database,
        &id,
        &["--auto-confirm-daily", "none", "--auto-confirm-max", "none"],
    )
    .await;
    assert_eq!(removed["auto_confirm_max_atomic"], Value::Null);
}

#[tokio::test]
async fn the_policy_confirms_what_its_tier_allows_and_it_executes_without_an_operator() {
    let database = TestDatabase::new().await;
    let server = Server::start_on(&database, &[FAST_EXECUTOR]).await;
    let (key, id) = wallet_agent(&database).await;
    let payer = address_of(&server, &key).await;
    agentctl(&database, &["sandbox", "fund", &payer, "1000"])
        .await
        .json();
    set_policy(
        &database,
        &id,
        &["--auto-confirm-max", "10", "--auto-confirm-daily", "15"],
    )
    .await;
    let (_, verdict) = post_check(&server, &key, to(RECIPIENT, "10")).await;
    assert_eq!(verdict["would_be"], "confirmed");
    let (status, first) = post_send(&server, &key, to(RECIPIENT, "10")).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["status"], "confirmed");
    assert_eq!(first["confirmed_by"], "policy");
    assert!(first["confirmed_at"].is_string());
    assert_eq!(first["approvals"], json!({"required": 0, "received": 0}));
    let settled = settled_intent(&server, &key).await;
    assert_eq!(settled["status"], "executed", "{settled}");
    assert_eq!(settled["confirmed_by"], "policy");
    // 10 of the day's 15 are taken: 6 waits for an operator, 5 does not; 11 is over the max.
    for (amount, expected) in [
        ("6", "pending_confirmation"),
        ("11", "pending_confirmation"),
        ("5", "confirmed"),
    ] {
        let (_, intent) = post_send(&server, &key, to(RECIPIENT, amount)).await;
        assert_eq!(intent["status"], expected, "{amount}: {intent}");
    }
    let (_, policy) = server.get("/v1/wallet/policy", Some(&key)).await;
    assert_eq!(policy["usage"]["auto_confirm_daily"], window("15", "0"));
    // Raising the tier afterwards confirms nothing that waits.
    set_policy(&database, &id, &["--auto-confirm-daily", "1000"]).await;
    let (_, page) = server.get("/v1/wallet/intents", Some(&key)).await;
    let pending = page["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|intent| intent["status"] == "pending_confirmation")
        .count();
    assert_eq!(pending, 2);
    let (_, events) = server.get("/v1/events?limit=100", Some(&key)).await;
    let first_events: Vec<_> = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|event| event["data"]["id"] == first["id"])
        .map(|event| event["type"].as_str().expect("type").to_owned())
        .collect();
    assert_eq!(
        first_events[..2],
        ["transfer_intent.created", "transfer_intent.confirmed"]
    );
    assert!(first_events.contains(&"transfer_intent.executed".to_owned()));
}

#[tokio::test]
async fn above_the_threshold_two_distinct_operators_confirm_once() {
    let (server, database) = Server::start().await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(
        &database,
        &id,
        &["--approvals-required", "2", "--approvals-above", "100"],
    )
    .await;
    let (_, small) = post_send(&server, &key, to(RECIPIENT, "100")).await;
    assert_eq!(small["approvals"], json!({"required": 1, "received": 0}));
    let (_, large) = post_send(&server, &key, to(RECIPIENT, "101")).await;
    assert_eq!(large["approvals"], json!({"required": 2, "received": 0}));
    let large_id = large["id"].as_str().expect("id");
    // Each approver proves who they are with the token they issued on the console.
    let console = ConsoleClient::open(&console_base(&server)).await;
    let mut tokens = Vec::new();
    for name in ["alice", "bob", "carol"] {
        let mut passkey = enrolled(&database, &console, name, "approver").await;
        tokens.push(console.operator_token(&mut passkey).await);
    }
    let (database, tokens) = (&database, &tokens);
    // The approval of the operator whose token is `tokens[which]`, or the control plane's.
    let confirm = |which: Option<usize>| async move {
        let env: Vec<(&str, &str)> = which
            .map(|which| ("AGENTCTL_OPERATOR_TOKEN", tokens[which].as_str()))
            .into_iter()
            .collect();
        agentctl_with(database, &env, &["intents", "confirm", large_id]).await
    };
    let unnamed = confirm(None).await;
    assert!(!unnamed.success, "the control plane is no quorum");
    let first = confirm(Some(0)).await.json();
    assert_eq!(first["status"], "pending_confirmation");
    assert_eq!(first["approvals"], json!({"required": 2, "received": 1}));
    assert_eq!(first["decided_by"], "operator:alice");
    let again = confirm(Some(0)).await;
    assert!(!again.success, "alice counts once");
    let second = confirm(Some(1)).await.json();
    assert_eq!(second["status"], "confirmed");
    assert_eq!(second["confirmed_by"], "operator");
    assert_eq!(second["approvals"], json!({"required": 2, "received": 2}));
    assert!(!confirm(Some(2)).await.success, "confirmed once");
    // Below the threshold one approval confirms, the control plane's too.
    let small_id = small["id"].as_str().expect("id");
    let confirmed = agentctl(database, &["intents", "confirm", small_id])
        .await
        .json();
    assert_eq!(confirmed["status"], "confirmed");
    assert_eq!(
        confirmed["approvals"],
        json!({"required": 1, "received": 1})
    );
    // A pending intent follows the policy's quorum as it changes.
    let (_, waiting) = post_send(&server, &key, to(RECIPIENT, "50")).await;
    set_policy(database, &id, &["--approvals-above", "none"]).await;
    let (_, page) = server.get("/v1/wallet/intents?limit=1", Some(&key)).await;
    assert_eq!(page["items"][0]["id"], waiting["id"]);
    assert_eq!(page["items"][0]["approvals"]["required"], 2);
}

/// Sends at once in a race, each of `RACE_AMOUNT`, against windows of `RACE_CAP`: exactly
/// `RACE_CAP / RACE_AMOUNT` of them fit.
const RACE_SENDS: usize = 40;
const RACE_AMOUNT: u64 = 1000;
const RACE_CAP: &str = "10000";
const RACE_FITS: usize = 10;

/// `RACE_SENDS` sends of `RACE_AMOUNT` to `RECIPIENT` at once by one agent whose policy is set by
/// `flags`, alternating between two instances of the server on one database. Neither instance
/// executes anything, so no settlement frees a window during the race.
async fn race_over_two_instances(flags: &[&str]) -> Vec<(u16, Value)> {
    let database = TestDatabase::new().await;
    // Forty sends at once on one wallet queue for its lock and the pool: each waits as long as a
    // client would (beside the whole suite, the quick timeouts answered some 503 and 429).
    let settings = [
        UNLIMITED_SENDS.as_slice(),
        &[("EXECUTOR_ENABLED", "false"), PATIENT_POOL, PATIENT_LOCKS],
    ]
    .concat();
    let instances = [
        Server::start_on(&database, &settings).await,
        Server::start_on(&database, &settings).await,
    ];
    let (key, id) = wallet_agent(&database).await;
    set_policy(&database, &id, flags).await;
    let urls = instances
        .each_ref()
        .map(|server| server.url("/v1/wallet/send"));
    let client = reqwest::Client::new();
    let sends: Vec<_> = (0..RACE_SENDS)
        .map(|n| {
            let (client, url, key) = (client.clone(), urls[n % 2].clone(), key.clone());
            tokio::spawn(async move {
                let response = client
                    .post(url)
                    .bearer_auth(key)
                    .json(&to(RECIPIENT, &RACE_AMOUNT.to_string()))
                    .send()
                    .await
                    .expect("request");
                read(response).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for send in sends {
        answers.push(send.await.expect("send"));
    }
    let (_, page) = instances[0]
        .get("/v1/wallet/intents?limit=100", Some(&key))
        .await;
    let stored = page["items"].as_array().expect("items").len();
    let admitted = answers.iter().filter(|(status, _)| *status == 200).count();
    assert_eq!(stored, admitted, "a refused send leaves no intent");
    answers
}

/// Exactly what fits the window was admitted; every other send was refused naming it.
fn assert_admitted_exactly_what_fits(answers: &[(u16, Value)], refusal: &str) {
    let admitted = answers.iter().filter(|(status, _)| *status == 200).count();
    assert_eq!(admitted, RACE_FITS, "{answers:?}");
    for (status, body) in answers.iter().filter(|(status, _)| *status != 200) {
        assert_eq!(*status, 403, "{body}");
        let detail = body["detail"].as_str().expect("detail");
        assert!(detail.contains(refusal), "{detail}");
    }
}

#[tokio::test]
async fn concurrent_sends_over_two_instances_admit_exactly_the_daily_limit() {
    let answers = race_over_two_instances(&["--max-daily", RACE_CAP]).await;
    assert_admitted_exactly_what_fits(&answers, "daily maximum of 10000;");
}

#[tokio::test]
async fn concurrent_sends_over_two_instances_admit_exactly_the_weekly_limit() {
    let answers = race_over_two_instances(&["--max-weekly", RACE_CAP]).await;
    assert_admitted_exactly_what_fits(&answers, "weekly maximum of 10000");
}

#[tokio::test]
async fn concurrent_sends_over_two_instances_admit_exactly_the_monthly_limit() {
    let answers = race_over_two_instances(&["--max-monthly", RACE_CAP]).await;
    assert_admitted_exactly_what_fits(&answers, "monthly maximum of 10000");
}

#[tokio::test]
async fn concurrent_sends_over_two_instances_admit_exactly_the_recipients_daily_limit() {
    let limit = format!("{RECIPIENT}:{RACE_AMOUNT}:{RACE_CAP}");
    let answers = race_over_two_instances(&["--recipient-limit", &limit]).await;
    assert_admitted_exactly_what_fits(&answers, "daily maximum of 10000 for this recipient");
}

#[tokio::test]
async fn concurrent_sends_over_two_instances_auto_confirm_exactly_the_tiers_daily_limit() {
    let max = RACE_AMOUNT.to_string();
    let answers =
        race_over_two_instances(&["--auto-confirm-max", &max, "--auto-confirm-daily", RACE_CAP])
            .await;
    assert!(
        answers.iter().all(|(status, _)| *status == 200),
        "{answers:?}"
    );
    let confirmed = answers
        .iter()
        .filter(|(_, intent)| intent["status"] == "confirmed")
        .inspect(|(_, intent)| assert_eq!(intent["confirmed_by"], "policy"))
        .count();
    assert_eq!(confirmed, RACE_FITS, "{answers:?}");
    let waiting = answers
        .iter()
        .filter(|(_, intent)| intent["status"] == "pending_confirmation")
        .count();
    assert_eq!(waiting, RACE_SENDS - RACE_FITS, "{answers:?}");
}

#[tokio::test]
async fn a_first_edition_policy_reads_and_behaves_as_before() {
    let (server, database) = Server::start().await;
    let (key, id) = wallet_agent(&database).await;
    set_policy(
        &database,
        &id,
        &[
            "--max-per-tx",
            "100",
            "--max-daily",
            "150",
            "--allow",
            RECIPIENT,
        ],
    )
    .await;
    let (_, policy) = server.get("/v1/wallet/policy", Some(&key)).await;
    for field in [
        "max_weekly_atomic",
        "max_monthly_atomic",
        "recipient_limits",
        "auto_confirm_max_atomic",
        "auto_confirm_daily_atomic",
        "approvals_required",
        "approvals_required_above_atomic",
    ] {
        assert_eq!(policy[field], Value::Null, "{field}");
    }
    assert_eq!(policy["usage"], json!({"daily": window("0", "150")}));
    let (status, intent) = post_send(&server, &key, to(RECIPIENT, "100")).await;
    assert_eq!(status, 200, "{intent}");
    assert_eq!(intent["status"], "pending_confirmation");
    assert_eq!(intent["confirmed_by"], Value::Null);
    assert_eq!(intent["approvals"], json!({"required": 1, "received": 0}));
    for (body, rule) in [
        (to(RECIPIENT, "101"), "max_per_tx"),
        (to(RECIPIENT, "51"), "max_daily"),
        (to(OTHER, "1"), "allowlist"),
    ] {
        let (_, verdict) = post_check(&server, &key, body.clone()).await;
        assert_eq!(verdict["rule"], rule, "{verdict}");
        assert_eq!(post_send(&server, &key, body).await.0, 403, "{rule}");
    }
    let intent_id = intent["id"].as_str().expect("id");
    let confirmed = agentctl(&database, &["intents", "confirm", intent_id])
        .await
        .json();
    assert_eq!(confirmed["status"], "confirmed");
    assert_eq!(confirmed["confirmed_by"], "operator");
    assert_eq!(
        confirmed["approvals"],
        json!({"required": 1, "received": 1})
    );
}
