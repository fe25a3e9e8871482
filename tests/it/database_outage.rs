//! PostgreSQL stopped under a mixed load (sends, confirmations, reads, inbound mail and SMS),
//! cleanly (`-m fast`) and by killing it (`-m immediate`), then started again. The server is not
//! restarted: readiness goes red and green again, requests meanwhile are answered 503 at once, and
//! afterwards every request that was answered 2xx is still visible, and each intent, message and
//! outbox entry exists once. Each test runs on a cluster of its own.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::email::QUICK;
use crate::sms::TWILIO_UNREACHABLE;
use crate::support::fake_mail_api::FakeMailApi;
use crate::support::harness::{Server, QUICK_POOL};
use crate::support::load::{
    account, agentctl, all_pages, confirm_pending, create_agent, stored, Agent, Load, Outcome,
    Work, WORKS,
};
use crate::support::private_pg::{PrivateCluster, StopMode};
use crate::wallet::{FAST_EXECUTOR, RECIPIENT, UNLIMITED_SENDS};

const AGENTS: usize = 3;
const FUNDS: u64 = 1_000_000;
const DEADLINE: Duration = Duration::from_secs(60);
/// The pause between one worker's requests: a steady load, not the most the machine can do.
const PACE: Duration = Duration::from_millis(20);
/// The database stays down at least this long, beyond the 503s the test waits for.
const OUTAGE: Duration = Duration::from_secs(3);
/// Answers of each kind of request before the fault and after it, and a quarter as many 503s
/// while the database is down: the outage lasts while they come.
const ANSWERS_PER_PHASE: usize = 20;

/// An agent of the sandbox chain, its wallet funded there.
async fn funded_agent(url: &str, tag: usize) -> Agent {
    let agent = create_agent(url, &[], tag, RECIPIENT).await;
    agentctl(
        url,
        &[],
        &["sandbox", "fund", &agent.wallet, &FUNDS.to_string()],
    )
    .await
    .json();
    agent
}

/// Readiness every few milliseconds until the load stops: (when, status).
async fn probe_readiness(server: &Server, load: &Load<'_>) -> Vec<(Instant, u16)> {
    let mut seen = Vec::new();
    while !load.stopped() {
        let request = server.client.get(server.url("/readyz"));
        let reply = crate::support::load::exchange(request, load.deadline).await;
        let status = reply
            .outcome
            .status()
            .unwrap_or_else(|| panic!("/readyz: {:?}", reply.outcome));
        seen.push((Instant::now(), status));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seen
}

#[derive(Default)]
struct Counts {
    before: usize,
    /// By kind: requests under way when the database stopped, and reads of the cached identity
    /// before the server learnt that its notifications were cut.
    while_down: HashMap<Work, usize>,
    after: usize,
    unavailable: usize,
    slowest_unavailable: Duration,
}

async fn mixed_load_through(mode: StopMode) {
    let cluster = PrivateCluster::start();
    cluster.create_database("agent_runtime");
    let url = cluster.url("agent_runtime");
    let mail_api = FakeMailApi::start().await;
    let mut settings = vec![
        ("DATABASE_URL", url.as_str()),
        ("MIGRATE_ON_START", "true"),
        ("EMAIL_PROVIDER", "resend"),
        ("RESEND_API_KEY", "re_test_key"),
        ("RESEND_BASE_URL", mail_api.url.as_str()),
        ("EMAIL_SEND_BURST", "100000"),
        ("EMAIL_SEND_RATE_PER_MINUTE", "100000"),
        ("EMAIL_AGENT_SEND_BURST", "100000"),
        ("EMAIL_AGENT_SEND_RATE_PER_MINUTE", "100000"),
        FAST_EXECUTOR,
        // The sandbox chain lives in the same database, so it is down too; a transfer broadcast
        // into the outage is sent again within a second of its end, not a minute.
        ("EXECUTOR_RETRY_BASE_MS", "100"),
        ("EXECUTOR_RETRY_CAP_SECS", "1"),
        QUICK_POOL,
    ];
    settings.extend_from_slice(&QUICK);
    settings.extend_from_slice(&UNLIMITED_SENDS);
    settings.extend_from_slice(&TWILIO_UNREACHABLE);
    let server = Server::start_with(&settings).await;
    let mut agents = Vec::new();
    for tag in 0..AGENTS {
        agents.push(funded_agent(&url, tag).await);
    }

    let load = Load::new(vec![&server], &agents, PACE);
    let readiness = probe_readiness(&server, &load);
    let confirming = async {
        let mut confirmed = 0;
        while !load.stopped() {
            confirmed += confirm_pending(&url, &[], &server, &agents).await.confirmed;
            tokio::time::sleep(PACE).await;
        }
        confirmed
    };
    let each_work = |status: u16, since: Instant, count: usize| {
        move |ledger: &crate::support::load::Ledger| {
            ledger.each_work(&WORKS, since, count, |outcome| {
                outcome == Outcome::Status(status)
            })
        }
    };
    let fault = async {
        let started = Instant::now();
        load.until(
            "each kind of request answered 2xx",
            each_work(200, started, ANSWERS_PER_PHASE),
        )
        .await;
        let down_at = Instant::now();
        cluster.stop(mode);
        load.until(
            "each kind of request answered 503",
            each_work(503, down_at, ANSWERS_PER_PHASE / 4),
        )
        .await;
        tokio::time::sleep(OUTAGE.saturating_sub(down_at.elapsed())).await;
        let up_at = Instant::now();
        cluster.start_again();
        load.until(
            "each kind of request answered 2xx again",
            each_work(200, up_at, ANSWERS_PER_PHASE),
        )
        .await;
        let recovered_at = Instant::now();
        load.stop();
        (down_at, up_at, recovered_at)
    };
    let (_, readiness, confirmed_under_load, (down_at, up_at, recovered_at)) =
        tokio::join!(load.run(&WORKS), readiness, confirming, fault);

    // Readiness: green, red while the database was down, green again without a restart.
    let red = readiness
        .iter()
        .position(|(at, status)| *at >= down_at && *status == 503)
        .expect("readiness went red");
    assert!(readiness[..red].iter().any(|(_, status)| *status == 200));
    let green_again = readiness
        .iter()
        .find(|(at, status)| *at >= up_at && *status == 200)
        .map(|(at, _)| *at)
        .expect("readiness green again");
    assert_eq!(
        readiness.last().map(|(_, status)| *status),
        Some(200),
        "readiness stays green"
    );

    // Every answer was 2xx or a 503 naming the database, at once; none was anything else.
    let mut counts = Counts::default();
    let accepted_under_load = {
        let ledger = load.ledger.lock().expect("ledger");
        for answer in &ledger.answers {
            match answer.outcome {
                Outcome::Status(200) if answer.at < down_at => counts.before += 1,
                Outcome::Status(200) if answer.at < up_at => {
                    *counts.while_down.entry(answer.work).or_default() += 1;
                }
                Outcome::Status(200) => counts.after += 1,
                Outcome::Status(503) => {
                    counts.unavailable += 1;
                    counts.slowest_unavailable = counts.slowest_unavailable.max(answer.took());
                    if answer.work != Work::InboundSms {
                        assert_eq!(
                            answer.body,
                            json!({"detail": "Database unavailable"}),
                            "{:?}",
                            answer.work
                        );
                    }
                }
                other => panic!("{:?} answered {other:?}: {}", answer.work, answer.body),
            }
        }
        ledger.accepted.len()
    };

    // Nothing lost: what was accepted before, during and after the outage is still there.
    let before_retries = stored(&url, &[], &server, &agents).await;
    {
        let ledger = load.ledger.lock().expect("ledger");
        for (work, tally) in account(&ledger, &before_retries, |_| true) {
            assert!(
                tally.lost.is_empty(),
                "{work:?} answered 200 but gone: {tally:?}"
            );
        }
    }
    // Nothing twice: a retry of each returns what was accepted, or is accepted now that the
    // database is back, and the lists hold exactly one item for each identity tried.
    let tried = load.tried();
    let refused = load.retry(&tried).await;
    assert!(refused.is_empty(), "refused after the outage: {refused:?}");
    let mut confirmed = confirmed_under_load;
    let confirm_started = Instant::now();
    loop {
        let round = confirm_pending(&url, &[], &server, &agents).await;
        confirmed += round.confirmed;
        let mut waiting = Vec::new();
        for agent in &agents {
            waiting.extend(
                all_pages(&server, &agent.key, "/v1/wallet/intents?limit=100")
                    .await
                    .into_iter()
                    .filter(|intent| {
                        !["executed", "failed"]
                            .contains(&intent["status"].as_str().unwrap_or_default())
                    }),
            );
        }
        if waiting.is_empty() {
            break;
        }
        assert!(
            confirm_started.elapsed() < DEADLINE,
            "{} intents never executed (the last confirmation that failed: {:?}): {waiting:?}\n{}",
            waiting.len(),
            round.last_failure,
            server.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let after = stored(&url, &[], &server, &agents).await;
    let tallies = account(&load.ledger.lock().expect("ledger"), &after, |_| true);
    for work in WORKS.into_iter().filter(|work| work.writes()) {
        let tried = tried.iter().filter(|(tried, _)| *tried == work).count();
        let tally = &tallies[&work];
        assert!(tally.clean(), "{work:?}: {tally:?}");
        assert_eq!(
            after[&work].len(),
            tried,
            "{work:?}: one stored item per identity tried"
        );
    }
    for agent in &agents {
        let intents = all_pages(&server, &agent.key, "/v1/wallet/intents?limit=100").await;
        assert!(
            intents.iter().all(|intent| intent["status"] == "executed"),
            "every intent executed: {intents:?}"
        );
        let hashes: HashSet<&str> = intents
            .iter()
            .map(|intent| intent["tx_hash"].as_str().expect("tx_hash"))
            .collect();
        assert_eq!(hashes.len(), intents.len(), "each intent paid once");
        let (_, balance) = server.get("/v1/wallet/balance", Some(&agent.key)).await;
        assert_eq!(
            balance["assets"][1]["amount_atomic"],
            (FUNDS - intents.len() as u64).to_string(),
            "the wallet paid exactly its intents: {balance}"
        );
    }
    let total = |work: Work| after[&work].len();

    // The outbox hands each message to the provider once, the outage notwithstanding.
    let handed_over = handed_over_once(&mail_api, total(Work::MailSend), &server, &agents).await;

    println!(
        "PostgreSQL stopped -m {} under load, down {:.1} s, every kind of request 2xx again \
         {:.1} s after its start; readiness red {:.1} s after the stop began, green again {:.1} s after \
         the start; answers: 2xx before {}, 2xx after the stop began {} {:?}, 503 {} (slowest {} ms), \
         2xx after {}, other 0; identities accepted under load {accepted_under_load}, tried \
         {}, each retried after: intents {} (all executed, {confirmed} confirmations), \
         mail sent {} (each handed to the provider once: {handed_over}), inbound mail {}, inbound \
         SMS {}; lost 0, duplicated 0",
        mode.as_str(),
        (up_at - down_at).as_secs_f64(),
        (recovered_at - up_at).as_secs_f64(),
        (readiness[red].0 - down_at).as_secs_f64(),
        (green_again - up_at).as_secs_f64(),
        counts.before,
        counts.while_down.values().sum::<usize>(),
        counts.while_down,
        counts.unavailable,
        counts.slowest_unavailable.as_millis(),
        counts.after,
        tried.len(),
        total(Work::Send),
        total(Work::MailSend),
        total(Work::InboundMail),
        total(Work::InboundSms),
    );
}

/// Every agent's outbound mail, as each lists it.
async fn outbound(server: &Server, agents: &[Agent]) -> Vec<Value> {
    let mut listed = Vec::new();
    for agent in agents {
        listed.extend(
            all_pages(
                server,
                &agent.key,
                "/v1/email/inbox?limit=100&direction=outbound",
            )
            .await,
        );
    }
    listed
}

/// Waits until the provider took `total` messages, and asserts it took none twice; how many it
/// took.
pub(crate) async fn handed_over_once(
    mail_api: &FakeMailApi,
    total: usize,
    server: &Server,
    agents: &[Agent],
) -> usize {
    let started = Instant::now();
    while mail_api.accepted().len() < total {
        if started.elapsed() >= DEADLINE {
            let handed_over = mail_api.accepted();
            let waiting: Vec<Value> = outbound(server, agents)
                .await
                .into_iter()
                .filter(|mail| !handed_over.contains_key(mail["id"].as_str().unwrap_or_default()))
                .collect();
            panic!("the outbox never drained: {waiting:?}\n{}", server.logs());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let handed_over = mail_api.accepted();
    if handed_over.len() != total {
        // Listed again, to tell a read that missed rows from rows that are gone.
        let listed: HashSet<String> = outbound(server, agents)
            .await
            .iter()
            .map(|mail| mail["id"].as_str().unwrap_or_default().to_owned())
            .collect();
        let unlisted: Vec<&String> = handed_over
            .keys()
            .filter(|key| !listed.contains(*key))
            .collect();
        panic!(
            "{} mails handed to the provider, {total} listed before, {} listed now; handed over \
             and not listed now: {unlisted:?}\n{}",
            handed_over.len(),
            listed.len(),
            server.logs()
        );
    }
    let twice: BTreeMap<&String, &usize> = handed_over
        .iter()
        .filter(|(_, times)| **times > 1)
        .collect();
    assert!(
        twice.is_empty(),
        "mail handed to the provider twice: {twice:?}"
    );
    handed_over.len()
}

#[tokio::test]
async fn a_fast_restart_of_postgres_under_load_loses_and_repeats_nothing() {
    mixed_load_through(StopMode::Fast).await;
}

#[tokio::test]
async fn postgres_killed_under_load_loses_and_repeats_nothing() {
    mixed_load_through(StopMode::Immediate).await;
}
