//! PostgreSQL stopped under a mixed load (sends, confirmations, reads, inbound mail and SMS),
//! cleanly (`-m fast`) and by killing it (`-m immediate`), then started again. The server is not
//! restarted: readiness goes red and green again, requests meanwhile are answered 503 at once, and
//! afterwards every request that was answered 2xx is still visible, and each intent, message and
//! outbox entry exists once. Each test runs on a cluster of its own.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use futures_util::{stream, StreamExt};
use serde_json::{json, Value};

use crate::email::{now, post, raw_mail, webhook_signed, QUICK, SECRET};
use crate::sms::{message_sid, twilio_params, twilio_webhook, TOKEN, TWILIO_UNREACHABLE};
use crate::support::fake_mail_api::FakeMailApi;
use crate::support::harness::{agentctl_at, CliOutput, Server, QUICK_POOL};
use crate::support::private_pg::{PrivateCluster, StopMode};
use crate::wallet::{post_send, FAST_EXECUTOR, RECIPIENT, UNLIMITED_SENDS};

const AGENTS: usize = 3;
const FUNDS: u64 = 1_000_000;
/// An answer slower than this is a hang: with the database down, the server must answer at once.
const HANG: Duration = Duration::from_secs(15);
const DEADLINE: Duration = Duration::from_secs(60);
/// The pause between one worker's requests: a steady load, not the most the machine can do.
const PACE: Duration = Duration::from_millis(20);
/// The database stays down at least this long, beyond the 503s the test waits for.
const OUTAGE: Duration = Duration::from_secs(3);
/// Answers of each kind of request before the fault and after it, and a quarter as many 503s
/// while the database is down: the outage lasts while they come.
const ANSWERS_PER_PHASE: usize = 20;

/// One agent with every resource.
struct Agent {
    key: String,
    address: String,
    number: String,
}

/// What kind of request a worker makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Work {
    Send,
    MailSend,
    Read,
    InboundMail,
    InboundSms,
}

const WORKS: [Work; 5] = [
    Work::Send,
    Work::MailSend,
    Work::Read,
    Work::InboundMail,
    Work::InboundSms,
];

/// One answer the load received.
struct Answer {
    work: Work,
    at: Instant,
    took: Duration,
    status: u16,
    body: Value,
}

/// Every answer, and each work's last request by the identity a retry repeats.
#[derive(Default)]
struct Ledger {
    answers: Vec<Answer>,
    /// Idempotency key (or provider message id) → the id of what the first 2xx created.
    accepted: HashMap<(Work, String), String>,
    /// Every identity tried, whatever the answer.
    tried: HashSet<(Work, String)>,
}

type Shared = Arc<Mutex<Ledger>>;

fn record(
    ledger: &Shared,
    work: Work,
    identity: Option<String>,
    (status, body): (u16, Value),
    took: Duration,
) {
    let mut ledger = ledger.lock().expect("ledger");
    if let Some(identity) = identity {
        if status == 200 {
            let id = created_id(&body);
            ledger
                .accepted
                .entry((work, identity.clone()))
                .or_insert(id);
        }
        ledger.tried.insert((work, identity));
    }
    ledger.answers.push(Answer {
        work,
        at: Instant::now(),
        took,
        status,
        body,
    });
}

/// A request's answer, or a failure of the test if it hangs.
async fn within<T>(what: &str, request: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(HANG, request)
        .await
        .unwrap_or_else(|_| panic!("{what} hung for {HANG:?}"))
}

async fn wallet_send(server: &Server, agent: &Agent, idempotency_key: &str) -> (u16, Value) {
    let body = json!({"to": RECIPIENT, "amount_atomic": "1", "idempotency_key": idempotency_key});
    within("a send", post_send(server, &agent.key, body)).await
}

async fn mail_send(server: &Server, agent: &Agent, idempotency_key: &str) -> (u16, Value) {
    let body = json!({
        "to": [format!("{idempotency_key}@example.com")],
        "subject": "Outage",
        "body_text": "Sent while the database came and went",
    });
    let answer = within(
        "an email send",
        post(
            server,
            "/v1/email/send",
            &agent.key,
            &body,
            Some(idempotency_key),
        ),
    )
    .await;
    (answer.status, answer.body)
}

async fn inbound_mail(server: &Server, agent: &Agent, id: &str) -> (u16, Value) {
    let mail = raw_mail(
        "sender@example.com",
        &agent.address,
        "Inbound during an outage",
        &format!("<{id}@outage.test>"),
        "Hello",
    );
    within(
        "the inbound mail webhook",
        webhook_signed(server, SECRET, id, now(), "message/rfc822", &mail),
    )
    .await
}

async fn inbound_sms(server: &Server, agent: &Agent, sid: &str) -> u16 {
    let params = twilio_params(sid, "+15550002222", &agent.number, "Hello");
    let response = within("the SMS webhook", twilio_webhook(server, TOKEN, &params)).await;
    response.status().as_u16()
}

const READS: [&str; 5] = [
    "/v1/agents/me",
    "/v1/wallet/policy",
    "/v1/wallet/intents",
    "/v1/email/inbox",
    "/v1/sms/messages",
];

/// Runs `work` for `agent` until `stopping`, one request at a time.
async fn worker(
    server: &Server,
    agent: &Agent,
    tag: usize,
    work: Work,
    ledger: Shared,
    stopping: &AtomicBool,
) {
    let mut round = 0usize;
    while !stopping.load(Ordering::Relaxed) {
        let identity = identity_of(work, tag, round);
        let sent_at = Instant::now();
        let (identity, status, body) = match work {
            Work::Send => {
                let (status, body) = wallet_send(server, agent, &identity).await;
                (Some(identity), status, body)
            }
            Work::MailSend => {
                let (status, body) = mail_send(server, agent, &identity).await;
                (Some(identity), status, body)
            }
            Work::InboundMail => {
                let (status, body) = inbound_mail(server, agent, &identity).await;
                (Some(identity), status, body)
            }
            Work::InboundSms => {
                let status = inbound_sms(server, agent, &identity).await;
                (Some(identity), status, Value::Null)
            }
            Work::Read => {
                let path = READS[round % READS.len()];
                let (status, body) = within(path, server.get(path, Some(&agent.key))).await;
                (None, status, body)
            }
        };
        record(&ledger, work, identity, (status, body), sent_at.elapsed());
        round += 1;
        tokio::time::sleep(PACE).await;
    }
}

/// Readiness every few milliseconds until `stopping`: (when, status).
async fn probe_readiness(server: &Server, stopping: &AtomicBool) -> Vec<(Instant, u16)> {
    let mut seen = Vec::new();
    while !stopping.load(Ordering::Relaxed) {
        let (status, _) = within("/readyz", server.get("/readyz", None)).await;
        seen.push((Instant::now(), status));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seen
}

/// Waits (with a deadline) until the ledger satisfies `reached`.
async fn until(ledger: &Shared, what: &str, reached: impl Fn(&Ledger) -> bool) {
    let started = Instant::now();
    while !reached(&ledger.lock().expect("ledger")) {
        assert!(started.elapsed() < DEADLINE, "never saw {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The id of what a 200 created: a send's intent, an email's message (under `data`), or none
/// (an SMS webhook answers TwiML).
fn created_id(body: &Value) -> String {
    body["id"]
        .as_str()
        .or(body["data"]["id"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Every kind of work has at least `count` answers with `status` since `since`.
fn each_work_answered(ledger: &Ledger, status: u16, since: Instant, count: usize) -> bool {
    WORKS.iter().all(|work| {
        ledger
            .answers
            .iter()
            .filter(|answer| answer.work == *work && answer.status == status && answer.at >= since)
            .count()
            >= count
    })
}

async fn agentctl(url: &str, args: &[&str]) -> CliOutput {
    agentctl_at(url, &[], args).await
}

async fn create_agent(server: &Server, url: &str, tag: usize) -> Agent {
    let sponsor = format!("sponsor-{tag}");
    let created = agentctl(
        url,
        &[
            "agents",
            "create",
            "--wallet",
            "--email",
            "--phone",
            "--sponsor",
            &sponsor,
        ],
    )
    .await
    .json();
    let agent = Agent {
        key: created["agent_key"].as_str().expect("key").to_owned(),
        address: created["agent"]["email_inbox"]["address"]
            .as_str()
            .expect("an inbox")
            .to_owned(),
        number: created["agent"]["phone_number"]["number"]
            .as_str()
            .expect("a number")
            .to_owned(),
    };
    let (_, wallet) = server.get("/v1/wallet/address", Some(&agent.key)).await;
    let wallet = wallet["address"].as_str().expect("a wallet address");
    agentctl(url, &["sandbox", "fund", wallet, &FUNDS.to_string()])
        .await
        .json();
    agent
}

/// Every item of a cursor-paged list at `path` (which has its query started), or the answer
/// of a page that was not 200.
async fn try_all_pages(server: &Server, key: &str, path: &str) -> Result<Vec<Value>, Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page_path = match &cursor {
            Some(cursor) => format!("{path}&cursor={cursor}"),
            None => path.to_owned(),
        };
        let (status, page) = within(path, server.get(&page_path, Some(key))).await;
        if status != 200 {
            return Err(page);
        }
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(items),
        }
    }
}

async fn all_pages(server: &Server, key: &str, path: &str) -> Vec<Value> {
    try_all_pages(server, key, path)
        .await
        .unwrap_or_else(|answer| panic!("{path}: {answer}"))
}

/// Ids of the agent's intents in `status`, when the list can be read.
async fn intents_in(server: &Server, agent: &Agent, status: &str) -> Option<Vec<String>> {
    let intents = try_all_pages(server, &agent.key, "/v1/wallet/intents?limit=100")
        .await
        .ok()?;
    Some(
        intents
            .into_iter()
            .filter(|intent| intent["status"] == status)
            .map(|intent| intent["id"].as_str().expect("id").to_owned())
            .collect(),
    )
}

/// What the API shows stored, by kind of work: intent ids for sends, and for the rest the
/// identity the load gave each item (in its recipient, Message-ID or SMS sid). Sorted, with any
/// duplicates kept.
async fn stored(server: &Server, agents: &[Agent]) -> HashMap<Work, Vec<String>> {
    let text = |value: &Value| value.as_str().expect("a string").to_owned();
    let mut stored: HashMap<Work, Vec<String>> = HashMap::new();
    for agent in agents {
        let key = &agent.key;
        let intents = all_pages(server, key, "/v1/wallet/intents?limit=100").await;
        let outbound = all_pages(server, key, "/v1/email/inbox?limit=100&direction=outbound").await;
        let inbound = all_pages(server, key, "/v1/email/inbox?limit=100&direction=inbound").await;
        let sms = all_sms(server, key).await;
        let identities = [
            (
                Work::Send,
                intents
                    .iter()
                    .map(|intent| text(&intent["id"]))
                    .collect::<Vec<_>>(),
            ),
            (
                Work::MailSend,
                outbound
                    .iter()
                    .map(|mail| {
                        text(&mail["to"][0])
                            .trim_end_matches("@example.com")
                            .to_owned()
                    })
                    .collect(),
            ),
            (
                Work::InboundMail,
                inbound
                    .iter()
                    .map(|mail| {
                        text(&mail["internet_message_id"])
                            .trim_start_matches('<')
                            .trim_end_matches("@outage.test>")
                            .to_owned()
                    })
                    .collect(),
            ),
            (
                Work::InboundSms,
                sms.iter()
                    .map(|message| text(&message["raw_payload"]["provider_message_id"]))
                    .collect(),
            ),
        ];
        for (work, items) in identities {
            stored.entry(work).or_default().extend(items);
        }
    }
    for items in stored.values_mut() {
        items.sort();
    }
    stored
}

/// Every stored SMS of the agent, newest first.
async fn all_sms(server: &Server, key: &str) -> Vec<Value> {
    let mut items = Vec::new();
    loop {
        let path = format!("/v1/sms/messages?limit=100&offset={}", items.len());
        let (status, page) = server.get(&path, Some(key)).await;
        assert_eq!(status, 200, "{page}");
        let page = page.as_array().expect("an array").clone();
        if page.is_empty() {
            return items;
        }
        items.extend(page);
    }
}

/// The identity of a worker's request of `work` in round `round` of worker `tag`: an SMS's is a
/// message id of Twilio's shape, which the webhook alone takes.
fn identity_of(work: Work, tag: usize, round: usize) -> String {
    match work {
        Work::InboundSms => message_sid((tag as u64) << 32 | round as u64),
        _ => format!("{work:?}-{tag}-{round}").to_lowercase(),
    }
}

/// The worker (and agent) an identity of `identity_of` belongs to.
fn tag_of(work: Work, identity: &str) -> usize {
    let tag = match work {
        Work::InboundSms => u128::from_str_radix(&identity[2..], 16)
            .ok()
            .map(|number| number >> 32),
        _ => identity.split('-').nth(1).and_then(|tag| tag.parse().ok()),
    };
    tag.and_then(|tag| usize::try_from(tag).ok())
        .expect("an identity of identity_of")
}

/// Asks again, after the outage, for everything the load tried: a retry of what was accepted
/// must find the same thing, and what was refused must now be accepted. Returns how many
/// identities were tried.
async fn retry_everything(server: &Server, agents: &[Agent], ledger: &Ledger) -> usize {
    let retries = ledger.tried.iter().map(|(work, identity)| {
        let agent = &agents[tag_of(*work, identity)];
        async move {
            let (status, body) = match work {
                Work::Send => wallet_send(server, agent, identity).await,
                Work::MailSend => mail_send(server, agent, identity).await,
                Work::InboundMail => inbound_mail(server, agent, identity).await,
                Work::InboundSms => (inbound_sms(server, agent, identity).await, Value::Null),
                Work::Read => unreachable!("reads create nothing"),
            };
            assert_eq!(status, 200, "{work:?} {identity} after the outage: {body}");
            let id = created_id(&body);
            if let Some(first) = ledger.accepted.get(&(*work, identity.clone())) {
                assert_eq!(
                    *first, id,
                    "{work:?} {identity}: a retry found another item"
                );
            }
        }
    });
    stream::iter(retries)
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    ledger.tried.len()
}

/// Confirms, as the operator, every intent still waiting for it; an attempt while the database
/// is down fails and is made again later.
async fn confirm_pending(url: &str, server: &Server, agents: &[Agent]) -> usize {
    let mut confirmed = 0;
    for agent in agents {
        let Some(pending) = intents_in(server, agent, "pending_confirmation").await else {
            continue;
        };
        for batch in pending.chunks(8) {
            let results = join_all(
                batch
                    .iter()
                    .map(|id| async move { agentctl(url, &["intents", "confirm", id]).await }),
            )
            .await;
            confirmed += results.iter().filter(|output| output.success).count();
        }
    }
    confirmed
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
        agents.push(create_agent(&server, &url, tag).await);
    }

    let ledger: Shared = Arc::default();
    let stopping = AtomicBool::new(false);
    let load = join_all(agents.iter().enumerate().flat_map(|(tag, agent)| {
        let (server, ledger, stopping) = (&server, &ledger, &stopping);
        WORKS
            .iter()
            .map(move |work| worker(server, agent, tag, *work, ledger.clone(), stopping))
    }));
    let readiness = probe_readiness(&server, &stopping);
    let confirming = async {
        let mut confirmed = 0;
        while !stopping.load(Ordering::Relaxed) {
            confirmed += confirm_pending(&url, &server, &agents).await;
            tokio::time::sleep(PACE).await;
        }
        confirmed
    };
    let fault = async {
        let started = Instant::now();
        until(&ledger, "each kind of request answered 2xx", |ledger| {
            each_work_answered(ledger, 200, started, ANSWERS_PER_PHASE)
        })
        .await;
        let down_at = Instant::now();
        cluster.stop(mode);
        until(&ledger, "each kind of request answered 503", |ledger| {
            each_work_answered(ledger, 503, down_at, ANSWERS_PER_PHASE / 4)
        })
        .await;
        tokio::time::sleep(OUTAGE.saturating_sub(down_at.elapsed())).await;
        let up_at = Instant::now();
        cluster.start_again();
        until(
            &ledger,
            "each kind of request answered 2xx again",
            |ledger| each_work_answered(ledger, 200, up_at, ANSWERS_PER_PHASE),
        )
        .await;
        let recovered_at = Instant::now();
        stopping.store(true, Ordering::Relaxed);
        (down_at, up_at, recovered_at)
    };
    let (_, readiness, confirmed_under_load, (down_at, up_at, recovered_at)) =
        tokio::join!(load, readiness, confirming, fault);

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

    // Every answer was 2xx or a 503 naming the database; none was anything else.
    let ledger = Arc::into_inner(ledger)
        .expect("the load is over")
        .into_inner()
        .expect("ledger");
    let mut counts = Counts::default();
    for answer in &ledger.answers {
        match answer.status {
            200 if answer.at < down_at => counts.before += 1,
            200 if answer.at < up_at => *counts.while_down.entry(answer.work).or_default() += 1,
            200 => counts.after += 1,
            503 => {
                counts.unavailable += 1;
                counts.slowest_unavailable = counts.slowest_unavailable.max(answer.took);
                if answer.work != Work::InboundSms {
                    assert_eq!(
                        answer.body,
                        json!({"detail": "Database unavailable"}),
                        "{:?}",
                        answer.work
                    );
                }
            }
            other => panic!("{:?} answered {other}: {}", answer.work, answer.body),
        }
    }
    let accepted_under_load = ledger.accepted.len();

    // Nothing lost: what was accepted before, during and after the outage is still there.
    let before_retries = stored(&server, &agents).await;
    for ((work, identity), id) in &ledger.accepted {
        let kept = if *work == Work::Send { id } else { identity };
        assert!(
            before_retries[work].binary_search(kept).is_ok(),
            "{work:?} {identity} was answered 200 but is gone"
        );
    }
    // Nothing twice: a retry of each returns what was accepted, or is accepted now that the
    // database is back, and the lists hold exactly one item for each identity tried.
    let tried = retry_everything(&server, &agents, &ledger).await;
    let mut confirmed = confirmed_under_load;
    let confirm_started = Instant::now();
    loop {
        confirmed += confirm_pending(&url, &server, &agents).await;
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
            "{} intents never executed: {waiting:?}\n{}",
            waiting.len(),
            server.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let after = stored(&server, &agents).await;
    for work in WORKS.into_iter().filter(|work| *work != Work::Read) {
        let mut tried: Vec<String> = ledger
            .tried
            .iter()
            .filter(|(tried, _)| *tried == work)
            .map(|(_, identity)| identity.clone())
            .collect();
        tried.sort();
        if work == Work::Send {
            assert_eq!(
                after[&work].len(),
                tried.len(),
                "one intent per idempotency key"
            );
        } else {
            assert_eq!(
                after[&work], tried,
                "{work:?}: one stored item per identity tried"
            );
        }
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
    let started = Instant::now();
    while mail_api.accepted().len() < total(Work::MailSend) {
        if started.elapsed() >= DEADLINE {
            let handed_over = mail_api.accepted();
            let mut waiting = Vec::new();
            for agent in &agents {
                let outbound = all_pages(
                    &server,
                    &agent.key,
                    "/v1/email/inbox?limit=100&direction=outbound",
                )
                .await;
                waiting.extend(outbound.into_iter().filter(|mail| {
                    !handed_over.contains_key(mail["id"].as_str().unwrap_or_default())
                }));
            }
            panic!("the outbox never drained: {waiting:?}\n{}", server.logs());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let handed_over = mail_api.accepted();
    assert_eq!(handed_over.len(), total(Work::MailSend));
    let twice = handed_over.values().filter(|times| **times > 1).count();
    assert_eq!(
        twice, 0,
        "mail handed to the provider twice: {handed_over:?}"
    );

    println!(
        "PostgreSQL stopped -m {} under load, down {:.1} s, every kind of request 2xx again \
         {:.1} s after its start; readiness red {:.1} s after the stop began, green again {:.1} s after \
         the start; answers: 2xx before {}, 2xx after the stop began {} {:?}, 503 {} (slowest {} ms), \
         2xx after {}, other 0; identities accepted under load {accepted_under_load}, tried \
         {tried}, each retried after: intents {} (all executed, {confirmed} confirmations), \
         mail sent {} (each handed to the provider once), inbound mail {}, inbound SMS {}; \
         lost 0, duplicated 0",
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
        total(Work::Send),
        total(Work::MailSend),
        total(Work::InboundMail),
        total(Work::InboundSms),
    );
}

#[tokio::test]
async fn a_fast_restart_of_postgres_under_load_loses_and_repeats_nothing() {
    mixed_load_through(StopMode::Fast).await;
}

#[tokio::test]
async fn postgres_killed_under_load_loses_and_repeats_nothing() {
    mixed_load_through(StopMode::Immediate).await;
}
