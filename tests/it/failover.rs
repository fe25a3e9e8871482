//! The service over a PostgreSQL formation that fails over (docs/decisions/0089, the
//! high-availability spec's test): a pg_auto_failover formation of the test's own
//! (`scripts/ha.sh`), two instances on its multi-host URL (one listing the nodes in the
//! formation's order, the other reversed), anvil, and a workload of several agents: sends under
//! idempotency keys with a spend window each, the operator's confirmations, executions mined on
//! chain, mail sent and received, waits for SMS codes, an event stream per agent and a webhook
//! endpoint. Through six failovers in a row, every kind at least once, the test records every
//! request with its answer; afterwards it retries what was in doubt and accounts each kind of
//! record against the database and the chain (acknowledged, lost, duplicated, in doubt). It
//! fails on a 500, a hang, a loss, a duplicate, a gap or repeat of an event `seq`, a window
//! exceeded, or an instance that takes more than 5 s after the new primary to answer writes.
//! Then it removes one acknowledged intent behind the service's back and checks the same
//! accounting reports it lost.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use alloy_primitives::U256;
use futures_util::future::join_all;
use serde_json::{json, Value};

use crate::email::QUICK;
use crate::onchain::OnChain;
use crate::sms::{message_sid, TWILIO_UNREACHABLE};
use crate::support::event_watch::{follow, target, Receiver, Target};
use crate::support::fake_mail_api::FakeMailApi;
use crate::support::formation::{destroy, failover_folder, Fault, Formation, Injected};
use crate::support::harness::{Server, QUICK_POOL};
use crate::support::load::{
    account, agentctl, all_intents, all_pages, confirm_pending, create_agent, exchange, stored,
    Agent, Answer, Ledger, Load, Outcome, Tally, Work,
};

/// The failovers, in a row: every kind the spec names, the planned one twice.
const FAULTS: [Fault; 6] = [
    Fault::Planned,
    Fault::PostmasterKilled,
    Fault::PrimaryPaused,
    Fault::PrimaryCrashed,
    Fault::StandbyLost,
    Fault::Planned,
];
const AGENTS: usize = 3;
/// The works of each agent's workers; SMS come with the waits.
const WORKS: [Work; 4] = [Work::Send, Work::MailSend, Work::InboundMail, Work::Read];
/// The pause between one worker's requests.
const PACE: Duration = Duration::from_millis(100);
/// The pause between one agent's sends: each is a transaction on chain once executed.
const SEND_PACE: Duration = Duration::from_millis(400);
/// Each agent's daily window (atomic units): the first is reached about halfway through.
const WINDOWS: [u64; AGENTS] = [100, 2_000, 2_000];
/// Sends at or under this amount are confirmed by the policy; the others wait for the operator.
const AUTO_CONFIRM_MAX: u64 = 2;
/// Tokens each wallet holds: far more than its window.
const FUNDS: u64 = 1_000_000;
/// The types the webhook endpoints take.
const HOOKED: [&str; 3] = ["transfer_intent.created", "sms.received", "email.received"];
/// Successful writes of each instance before a fault: the load is steady.
const STEADY_WRITES: usize = 10;
/// Every instance answers writes again within this of the new primary taking them.
const RECOVERY: Duration = Duration::from_secs(5);
/// How long a fault may take before a node takes writes again (the monitor's timeouts give
/// 12–16 s for a lost primary).
const FAILOVER_DEADLINE: Duration = Duration::from_secs(60);
/// How long the test waits for what the load left to settle (executions, the outbox, deliveries,
/// streams).
const SETTLE: Duration = Duration::from_secs(90);
/// The whole test, formation included, stops past this (the issue allows 6 minutes).
const WHOLE: Duration = Duration::from_secs(330);
/// A wait for a code waits this long (seconds).
const WAIT_SECS: u64 = 10;

/// A send's amount in a worker's round: 1, 2 (confirmed by the policy) or 3 (by the operator).
fn amount(round: usize) -> u64 {
    round as u64 % 3 + 1
}

/// An address of the agent's own to pay, so the chain counts each agent's transfers apart.
fn recipient(tag: usize) -> String {
    format!("0x{:040}", 7_000 + tag)
}

/// One fault's course.
struct FaultRun {
    fault: Fault,
    injected: Instant,
    old_primary: u16,
    /// When a node (another, when the fault moves the primary) first took a write through the
    /// formation's URL, probed directly, and its port.
    writable: Instant,
    new_primary: u16,
    /// When the formation was whole again (a standby in sync).
    whole: Instant,
}

/// What one wait for a code came to.
#[derive(Debug)]
struct WaitRound {
    tag: usize,
    round: usize,
    code: String,
    /// When the SMS carrying the code was acknowledged by the webhook.
    acknowledged: Option<Instant>,
    /// The codes the round's waits were answered with (a 408 is `None`), and when.
    answers: Vec<(Option<String>, Instant)>,
    /// Attempts of a wait that gave no answer (503, timed out).
    unanswered: usize,
}

async fn policy(url: &str, env: &[(&str, &str)], agent: &Agent, window: u64) {
    let window = window.to_string();
    agentctl(
        url,
        env,
        &[
            "policy",
            "set",
            &agent.id,
            "--max-daily",
            &window,
            "--auto-confirm-max",
            &AUTO_CONFIRM_MAX.to_string(),
            "--auto-confirm-daily",
            &window,
        ],
    )
    .await
    .json();
}

async fn webhook_endpoint(server: &Server, agent: &Agent, receiver: &Receiver) {
    let request = server
        .client
        .post(server.url("/v1/webhooks"))
        .bearer_auth(&agent.key)
        .json(&json!({"url": receiver.url, "types": HOOKED}));
    let reply = exchange(request, Duration::from_secs(15)).await;
    assert_eq!(reply.outcome, Outcome::Status(201), "{}", reply.body);
}

/// Agent `tag`'s waits for codes: each round sends an SMS with a code of its own through the
/// webhook of one instance while a wait for it runs on the other; a wait with no answer is
/// asked again with its `request_id`, an SMS until acknowledged.
async fn waits(load: &Load<'_>, tag: usize, log: &Mutex<Vec<WaitRound>>) {
    let agent = &load.agents[tag];
    let mut round = 0usize;
    while !load.stopped() {
        let code = format!("{:06}", 100_000 + tag * 10_000 + round % 10_000);
        let sid = message_sid(((tag as u64) << 32) | round as u64);
        let wait = async {
            let mut answers = Vec::new();
            let mut unanswered = 0;
            let mut attempt = 0;
            loop {
                let request_id = format!("wait-{tag}-{round}-{}", answers.len());
                let (_, server) = load.server_of(tag, round + attempt);
                attempt += 1;
                let request = server
                    .client
                    .post(server.url("/v1/sms/wait-for-code"))
                    .bearer_auth(&agent.key)
                    .json(&json!({"request_id": request_id, "timeout": WAIT_SECS}));
                let deadline = load.deadline + Duration::from_secs(WAIT_SECS);
                let reply = exchange(request, deadline).await;
                match (reply.outcome, reply.body) {
                    (Outcome::Status(200), body) => {
                        let got = body["code"].as_str().map(str::to_owned);
                        let done = got.as_deref() == Some(code.as_str());
                        answers.push((got, Instant::now()));
                        if done {
                            break;
                        }
                    }
                    (Outcome::Status(408), _) => {
                        answers.push((None, Instant::now()));
                        // Stop waiting once the round's SMS was never taken.
                        if answers.len() > 3 {
                            break;
                        }
                    }
                    _ => {
                        unanswered += 1;
                        if load.stopped() && unanswered > 20 {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
            (answers, unanswered)
        };
        let text = format!("Your verification code is {code}");
        let sms = async {
            // The wait is asked first; the SMS follows it.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let mut attempt = 1;
            loop {
                let (index, server) = load.server_of(tag, round + attempt);
                let sent = Instant::now();
                let answer = load.inbound_sms(server, agent, &sid, &text).await;
                let ok = answer.outcome == Outcome::Status(200);
                load.record(index, Work::InboundSms, Some(sid.clone()), sent, answer);
                if ok {
                    return Some(Instant::now());
                }
                if load.stopped() && attempt > 20 {
                    return None;
                }
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        };
        let ((answers, unanswered), acknowledged) = tokio::join!(wait, sms);
        log.lock().expect("waits").push(WaitRound {
            tag,
            round,
            code,
            acknowledged,
            answers,
            unanswered,
        });
        round += 1;
        tokio::time::sleep(load.pace).await;
    }
}

/// One line of the table: a kind of record and what became of it.
struct Row {
    what: String,
    acknowledged: usize,
    lost: usize,
    duplicated: usize,
    /// Answered 503 (or another 5xx, or 429) only, and of those how many had taken effect.
    unavailable: String,
    /// Never answered (timed out, connection failed), and of those how many had taken effect.
    in_doubt: String,
    note: String,
}

impl Row {
    /// The final tally, with what the unanswered requests had done as read before the retries.
    fn of(what: &str, after: &Tally, before: &Tally) -> Row {
        Row {
            what: what.to_owned(),
            acknowledged: after.acknowledged,
            lost: after.lost.len(),
            duplicated: after.duplicated.len() + after.unexpected.len(),
            unavailable: format!("{} ({})", before.unavailable, before.unavailable_stored),
            in_doubt: format!("{} ({})", before.in_doubt, before.in_doubt_stored),
            note: String::new(),
        }
    }

    /// A record the ledger does not hold: acknowledged is what the service gave.
    fn counted(what: &str) -> Row {
        Row {
            what: what.to_owned(),
            acknowledged: 0,
            lost: 0,
            duplicated: 0,
            unavailable: "-".into(),
            in_doubt: "-".into(),
            note: String::new(),
        }
    }
}

const TABLE_HEAD: &str =
    "acknowledged   lost duplicated  503 (took effect)  no answer (took effect)";

fn table(rows: &[Row]) -> String {
    let mut out = format!("{:<20} {TABLE_HEAD}\n", "record");
    for row in rows {
        let _ = writeln!(
            out,
            "{:<20} {:>12} {:>6} {:>10}  {:>17}  {:>23}  {}",
            row.what,
            row.acknowledged,
            row.lost,
            row.duplicated,
            row.unavailable,
            row.in_doubt,
            row.note
        );
    }
    out
}

/// The figures of one fault for one instance, from the ledger.
#[derive(Debug, Default)]
struct Recovery {
    /// Writes sent during the fault that failed with an answer (503, another 5xx, 429).
    unavailable: usize,
    /// Writes sent during the fault that got no answer (timed out, connection failed).
    in_doubt: usize,
    /// From the first failed write (sent) to the first successful answer to a write sent after
    /// the last failure.
    outage: Duration,
    /// That answer, from the fault.
    back: Option<Duration>,
    /// From the new primary taking writes (as probed) to that write: negative when the instance
    /// was back before the probe saw the new primary.
    after_primary: f64,
    slowest: Duration,
}

/// The figures of `run` for instance `server`: its writes answered from the fault until `until`,
/// the next fault (a write failed by the next fault counts there, wherever it was sent).
fn recovery(answers: &[Answer], server: usize, run: &FaultRun, until: Instant) -> Recovery {
    let writes: Vec<&Answer> = answers
        .iter()
        .filter(|answer| {
            answer.server == server
                && answer.work.writes()
                && answer.at >= run.injected
                && answer.at < until
        })
        .collect();
    let failed: Vec<&&Answer> = writes
        .iter()
        .filter(|answer| !answer.outcome.answered())
        .collect();
    let in_doubt = failed
        .iter()
        .filter(|answer| answer.outcome.in_doubt())
        .count();
    let mut figures = Recovery {
        unavailable: failed.len() - in_doubt,
        in_doubt,
        slowest: writes
            .iter()
            .map(|answer| answer.took())
            .max()
            .unwrap_or_default(),
        ..Recovery::default()
    };
    let first_failed = failed.iter().map(|answer| answer.sent).min();
    let last_failed = failed.iter().map(|answer| answer.sent).max();
    let back = writes
        .iter()
        .filter(|answer| answer.outcome.is_success())
        .filter(|answer| last_failed.is_none_or(|last| answer.sent > last))
        .map(|answer| answer.at)
        .min();
    if let (Some(first), Some(back)) = (first_failed, back) {
        figures.outage = back.saturating_duration_since(first.max(run.injected));
    }
    if let Some(back) = back {
        figures.back = Some(back.saturating_duration_since(run.injected));
        figures.after_primary = if back >= run.writable {
            (back - run.writable).as_secs_f64()
        } else {
            -(run.writable - back).as_secs_f64()
        };
    }
    figures
}

/// What was acknowledged, lost, duplicated and left without an answer, by the phase of the load
/// each identity was first sent in: before the first fault, or during (and after) a fault of a
/// kind, until the next.
fn per_kind(
    ledger: &Ledger,
    runs: &[FaultRun],
    before: &BTreeMap<Work, Vec<String>>,
    after: &BTreeMap<Work, Vec<String>>,
) -> String {
    let phase = |key: &(Work, String)| -> &'static str {
        let sent = ledger.first_sent.get(key).copied();
        runs.iter()
            .rev()
            .find(|run| sent.is_some_and(|sent| sent >= run.injected))
            .map_or("before the faults", |run| run.fault.name())
    };
    let mut kinds = vec!["before the faults"];
    for run in runs {
        if !kinds.contains(&run.fault.name()) {
            kinds.push(run.fault.name());
        }
    }
    let mut out = format!("{:<20} {:<14} {TABLE_HEAD}\n", "during", "record");
    for kind in kinds {
        let keep = |key: &(Work, String)| phase(key) == kind;
        let tallies = account(ledger, after, keep);
        let tallies_before = account(ledger, before, keep);
        for (work, tally) in &tallies {
            let row = Row::of(work.noun(), tally, &tallies_before[work]);
            let _ = writeln!(
                out,
                "{:<20} {:<14} {:>12} {:>6} {:>10}  {:>17}  {:>23}",
                kind,
                row.what,
                row.acknowledged,
                row.lost,
                row.duplicated,
                row.unavailable,
                row.in_doubt
            );
        }
    }
    out
}

/// Every event of the agent's feed, oldest first.
async fn feed(server: &Server, key: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut after = 0;
    loop {
        let (status, page) = server
            .get(&format!("/v1/events?limit=100&after={after}"), Some(key))
            .await;
        assert_eq!(status, 200, "{page}");
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        match page["next_after"].as_u64() {
            Some(next) => after = next,
            None => return items,
        }
    }
}

/// Confirms what waits for the operator; the agents' intents still open (neither executed nor
/// failed), and what the last confirmation that failed said.
async fn open_intents(
    url: &str,
    env: &[(&str, &str)],
    server: &Server,
    agents: &[Agent],
) -> (Vec<Value>, Option<String>) {
    let confirmed = confirm_pending(url, env, server, agents).await;
    let mut open = Vec::new();
    for agent in agents {
        open.extend(
            all_pages(server, &agent.key, "/v1/wallet/intents?limit=100")
                .await
                .into_iter()
                .filter(|intent| {
                    !["executed", "failed", "rejected", "expired"]
                        .contains(&intent["status"].as_str().unwrap_or_default())
                }),
        );
    }
    (open, confirmed.last_failure)
}

/// The last resort against a test stuck where its own deadline cannot fire (a thread blocked):
/// past `WHOLE` and a margin, the formation is destroyed, this process's children (the servers,
/// anvil, each with its process group) killed, and the process ends, no Drop having run.
fn watchdog(folder: PathBuf) -> std::sync::mpsc::Sender<()> {
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(RecvTimeoutError::Timeout) =
            finished.recv_timeout(WHOLE + Duration::from_secs(30))
        {
            eprintln!("failover: stuck past {WHOLE:?}; destroying the formation and exiting");
            destroy(&folder);
            for child in children() {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", "--", &format!("-{child}"), &child.to_string()])
                    .output();
            }
            std::process::exit(101);
        }
    });
    done
}

/// The processes this one started, as /proc tells.
fn children() -> Vec<u32> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // After the command's name in parentheses: the state, then the parent's pid.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(|ppid| ppid == me))
                    .unwrap_or(false)
            })
        })
        .collect()
}

#[tokio::test]
async fn six_failovers_under_load_lose_repeat_and_exceed_nothing() {
    let started = Instant::now();
    let folder = Formation::folder();
    let _watchdog = watchdog(folder.clone());
    let (formation, chain) = tokio::join!(
        async {
            tokio::task::spawn_blocking(move || Formation::start(folder))
                .await
                .expect("the formation")
        },
        OnChain::start()
    );
    let formation_up = started.elapsed();
    let report = tokio::time::timeout(WHOLE.saturating_sub(started.elapsed()), async {
        scenario(&formation, &chain, started, formation_up).await
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the failover test ran past {WHOLE:?}; the formation:\n{}",
            formation.status()
        )
    });
    drop(chain);
    drop(formation);
    let wall = format!(
        "wall time {:.0} s, formation destroyed",
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::write(report_path(), format!("{report}\n{wall}\n"));
    println!("{wall}");
}

/// Where the report is left for a person, and for `make bench`.
fn report_path() -> PathBuf {
    failover_folder().join("report.txt")
}

/// The run, its checks, and the report it prints and writes to target/failover/report.txt.
async fn scenario(
    formation: &Formation,
    chain: &OnChain,
    started: Instant,
    formation_up: Duration,
) -> String {
    let url = formation.url.clone();
    let reversed = formation.reversed_url();
    let env = chain.env();
    let mail_api = FakeMailApi::start().await;
    let receiver = Receiver::start().await;
    let mut common = vec![
        ("EMAIL_PROVIDER", "resend"),
        ("RESEND_API_KEY", "re_test_key"),
        ("RESEND_BASE_URL", mail_api.url.as_str()),
        ("EMAIL_SEND_BURST", "100000"),
        ("EMAIL_SEND_RATE_PER_MINUTE", "100000"),
        ("EMAIL_AGENT_SEND_BURST", "100000"),
        ("EMAIL_AGENT_SEND_RATE_PER_MINUTE", "100000"),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
        ("WEBHOOK_RETRY_SCHEDULE", "0,1,2,4,8,16,32"),
        ("EVENT_STREAM_KEEPALIVE_SECS", "1"),
        QUICK_POOL,
    ];
    common.extend_from_slice(&QUICK);
    common.extend_from_slice(&TWILIO_UNREACHABLE);
    let mut first = common.clone();
    first.extend([("DATABASE_URL", url.as_str()), ("MIGRATE_ON_START", "true")]);
    let migrated = chain.server(&first).await;
    let mut second = common.clone();
    second.extend([
        ("DATABASE_URL", reversed.as_str()),
        ("MIGRATE_ON_START", "false"),
    ]);
    let other = chain.server(&second).await;
    let servers = [&migrated, &other];

    let mut agents = Vec::new();
    for tag in 0..AGENTS {
        let agent = create_agent(&url, &env, tag, &recipient(tag)).await;
        chain.anvil.mint(&chain.token, &agent.wallet, FUNDS).await;
        chain
            .anvil
            .set_eth(&agent.wallet, 1_000_000_000_000_000_000)
            .await;
        policy(&url, &env, &agent, WINDOWS[tag]).await;
        webhook_endpoint(servers[tag % 2], &agent, &receiver).await;
        agents.push(agent);
    }
    let setup = started.elapsed();

    let mut load = Load::new(servers.to_vec(), &agents, PACE);
    load.amount = amount;
    load.send_pace = SEND_PACE;
    let load = load;
    let wait_log = Mutex::new(Vec::new());
    let targets: Vec<Target> = agents.iter().map(|_| target()).collect();
    let followers = join_all(
        agents
            .iter()
            .zip(&targets)
            .map(|(agent, target)| follow(&servers, &agent.key, target, SETTLE)),
    );
    let waiting = join_all((0..AGENTS).map(|tag| waits(&load, tag, &wait_log)));
    let confirming = async {
        while !load.stopped() {
            confirm_pending(&url, &env, &migrated, &agents).await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let faults = async {
        let mut runs = Vec::new();
        for fault in FAULTS {
            let steady_from = Instant::now();
            load.until(
                "every instance answering writes before the fault",
                |ledger| {
                    (0..servers.len()).all(|server| {
                        ledger
                            .answers
                            .iter()
                            .filter(|answer| {
                                answer.server == server
                                    && answer.work.writes()
                                    && answer.sent >= steady_from
                                    && answer.outcome.is_success()
                            })
                            .count()
                            >= STEADY_WRITES
                    })
                },
            )
            .await;
            let injected = Instant::now();
            let strike: Injected = formation.inject(fault).await;
            let (writable, new_primary) = formation
                .writes_taken(
                    strike.old_primary,
                    fault.moves_the_primary(),
                    FAILOVER_DEADLINE,
                )
                .await;
            formation.writes_back(&strike);
            let old_primary = strike.old_primary;
            formation.whole(strike).await;
            eprintln!(
                "failover: {} at {:.1} s: writes taken by {new_primary} after {:.1} s, whole again \
                 after {:.1} s",
                fault.name(),
                (injected - started).as_secs_f64(),
                (writable - injected).as_secs_f64(),
                injected.elapsed().as_secs_f64()
            );
            runs.push(FaultRun {
                fault,
                injected,
                old_primary,
                writable,
                new_primary,
                whole: Instant::now(),
            });
        }
        // The load goes on a little on the whole formation, then stops.
        let calm = Instant::now();
        load.until("writes after the last fault", |ledger| {
            ledger.each_work(
                &[Work::MailSend, Work::InboundMail],
                calm,
                STEADY_WRITES,
                Outcome::is_success,
            )
        })
        .await;
        load.stop();
        runs
    };
    // The load and its faults, then the retries and the settling, while the streams follow.
    let work = async {
        let load_started = Instant::now();
        let (_, _, _, runs) = tokio::join!(load.run(&WORKS), waiting, confirming, faults);
        let load_took = load_started.elapsed();
        // Every identity in doubt asked again; then everything settles.
        let tried = load.tried();
        let in_doubt: Vec<(Work, String)> = {
            let ledger = load.ledger.lock().expect("ledger");
            tried
                .into_iter()
                .filter(|key| !ledger.accepted.contains_key(key) && !ledger.refused.contains(key))
                .collect()
        };
        let before_retries = stored(&url, &env, &migrated, &agents).await;
        let refused_on_retry = load.retry(&in_doubt).await;
        let settle_started = Instant::now();
        loop {
            let (open, last_failure) = open_intents(&url, &env, &migrated, &agents).await;
            if open.is_empty() {
                break;
            }
            assert!(
                settle_started.elapsed() < SETTLE,
                "{} intents never settled (the last confirmation that failed: {last_failure:?}): \
                 {open:?}",
                open.len()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mail_total = stored(&url, &env, &migrated, &agents).await[&Work::MailSend].len();
        let handed_over =
            crate::database_outage::handed_over_once(&mail_api, mail_total, &migrated, &agents)
                .await;
        // The streams follow each agent's feed to its end.
        let feeds: Vec<Vec<Value>> =
            join_all(agents.iter().map(|agent| feed(&migrated, &agent.key))).await;
        for (target, feed) in targets.iter().zip(&feeds) {
            let last = feed
                .last()
                .and_then(|event| event["seq"].as_u64())
                .unwrap_or(0);
            target.store(last, Ordering::Relaxed);
        }
        (
            runs,
            load_took,
            before_retries,
            refused_on_retry,
            handed_over,
            feeds,
        )
    };
    let ((runs, load_took, before_retries, refused_on_retry, handed_over, feeds), followed) =
        tokio::join!(work, followers);
    // Deliveries of the last events may still be under way.
    let hooked = feeds
        .iter()
        .flatten()
        .filter(|event| HOOKED.contains(&event["type"].as_str().unwrap_or_default()))
        .count();
    let deliveries_started = Instant::now();
    while receiver.deliveries().len() < hooked && deliveries_started.elapsed() < SETTLE {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The accounting, against the database and the chain.
    let after = stored(&url, &env, &migrated, &agents).await;
    let ledger: Ledger = std::mem::take(&mut load.ledger.lock().expect("ledger"));
    let tallies = account(&ledger, &after, |_| true);
    let tallies_before = account(&ledger, &before_retries, |_| true);
    let mut rows = Vec::new();
    for (work, tally) in &tallies {
        let mut row = Row::of(work.noun(), tally, &tallies_before[work]);
        if *work == Work::Send {
            row.note = format!(
                "{} refused by the window, {} more on retry",
                tally.refused,
                refused_on_retry.len()
            );
        }
        if *work == Work::MailSend {
            row.note = format!("{handed_over} handed to the provider, none twice");
        }
        rows.push(row);
    }

    // Events: the feed has every seq from 1 without a gap; each stream saw exactly the feed.
    let mut event_row = Row::counted("events (streams)");
    let mut hook_row = Row::counted("webhook deliveries");
    let deliveries = receiver.deliveries();
    let mut event_problems = Vec::new();
    let (mut reconnects, mut refused, mut silent) = (0, 0, 0);
    for ((agent, feed), followed) in agents.iter().zip(&feeds).zip(&followed) {
        let seqs: Vec<u64> = feed
            .iter()
            .map(|event| event["seq"].as_u64().expect("seq"))
            .collect();
        let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
        if seqs != expected {
            event_problems.push(format!(
                "{}: the feed's seqs have gaps or repeats",
                agent.id
            ));
        }
        event_row.acknowledged += seqs.len();
        let seen: HashSet<u64> = followed.seqs.iter().copied().collect();
        event_row.lost += seqs.iter().filter(|seq| !seen.contains(seq)).count();
        event_row.duplicated += followed.seqs.len() - seen.len();
        if followed.seqs != seqs {
            let skipped: Vec<u64> = seqs
                .iter()
                .filter(|seq| !seen.contains(seq))
                .copied()
                .collect();
            event_problems.push(format!(
                "{}: the stream gave {} events for the feed's {} (skipped {:?}, resets {})",
                agent.id,
                followed.seqs.len(),
                seqs.len(),
                &skipped[..skipped.len().min(20)],
                followed.resets
            ));
        }
        reconnects += followed.reconnects.saturating_sub(followed.refused.len());
        refused += followed.refused.len();
        silent += followed.silent;
        for event in feed {
            if HOOKED.contains(&event["type"].as_str().unwrap_or_default()) {
                hook_row.acknowledged += 1;
                match deliveries.get(event["id"].as_str().unwrap_or_default()) {
                    None => hook_row.lost += 1,
                    Some(times) if *times > 1 => hook_row.duplicated += 1,
                    Some(_) => {}
                }
            }
        }
    }
    event_row.note = format!(
        "streams opened again with Last-Event-ID {reconnects} times ({refused} openings \
             refused meanwhile), {silent} left for silence"
    );
    hook_row.note = "a repeat is a delivery retried with its webhook-id".into();

    // The chain: each wallet mined exactly its executed intents, and its recipient holds their sum.
    let intents = all_intents(&url, &env).await;
    let mut chain_row = Row::counted("chain transfers");
    let mut windows = Vec::new();
    let mut chain_problems = Vec::new();
    for (tag, agent) in agents.iter().enumerate() {
        let own: Vec<&Value> = intents
            .iter()
            .filter(|intent| intent["agent_id"] == agent.id.as_str())
            .collect();
        let executed: Vec<&&Value> = own
            .iter()
            .filter(|intent| intent["status"] == "executed")
            .collect();
        let paid: u64 = executed
            .iter()
            .map(|intent| crate::support::harness::amount_of(intent))
            .sum();
        let held: u64 = own
            .iter()
            .filter(|intent| {
                !["failed", "rejected", "expired"]
                    .contains(&intent["status"].as_str().unwrap_or_default())
            })
            .map(|intent| crate::support::harness::amount_of(intent))
            .sum();
        windows.push(format!("agent {tag}: {held} of {}", WINDOWS[tag]));
        chain_row.acknowledged += executed.len();
        let mined = chain.anvil.mined_nonce(&agent.wallet).await;
        let hashes: HashSet<&str> = executed
            .iter()
            .filter_map(|intent| intent["tx_hash"].as_str())
            .collect();
        for hash in &hashes {
            let receipt = chain
                .anvil
                .rpc("eth_getTransactionReceipt", json!([hash]))
                .await;
            if receipt["status"] != "0x1" {
                chain_row.lost += 1;
            }
        }
        let failed = own
            .iter()
            .filter(|intent| intent["status"] == "failed")
            .count() as u64;
        let mined_beyond = mined.saturating_sub(executed.len() as u64 + failed);
        chain_row.duplicated += mined_beyond as usize + (executed.len() - hashes.len());
        let received = chain
            .anvil
            .token_balance(&chain.token, &agent.recipient)
            .await;
        if received != U256::from(paid) {
            chain_problems.push(format!(
                "agent {tag}: its recipient holds {received}, its executed intents sum to {paid}"
            ));
        }
        if held > WINDOWS[tag] {
            chain_problems.push(format!(
                "agent {tag}: its window holds {held} of {}",
                WINDOWS[tag]
            ));
        }
    }
    chain_row.note = format!("windows: {}", windows.join(", "));

    // Waits: each acknowledged code was answered by its round's wait, once, and only there.
    let wait_rounds: Vec<WaitRound> = std::mem::take(&mut wait_log.lock().expect("waits"));
    let mut wait_row = Row::counted("waits for codes");
    let mut answered_codes: HashMap<&str, usize> = HashMap::new();
    let mut wait_problems = Vec::new();
    let mut unanswered = 0;
    for round in wait_rounds.iter() {
        unanswered += round.unanswered;
        for (code, _) in &round.answers {
            if let Some(code) = code {
                *answered_codes.entry(code.as_str()).or_default() += 1;
            }
        }
        let Some(acknowledged) = round.acknowledged else {
            continue;
        };
        wait_row.acknowledged += 1;
        let problem = |what: &str| {
            format!(
                "agent {} round {} {what}: {round:?}",
                round.tag, round.round
            )
        };
        if !round
            .answers
            .iter()
            .any(|(code, _)| code.as_deref() == Some(round.code.as_str()))
        {
            wait_row.lost += 1;
            wait_problems.push(problem("never got its code"));
        }
        for (code, at) in &round.answers {
            match code {
                // Its SMS was stored well before the wait gave up: a wake-up missed.
                None if *at > acknowledged + RECOVERY => {
                    wait_problems.push(problem("timed out after its code was stored"));
                }
                Some(code) if *code != round.code => {
                    wait_problems.push(problem("got another round's code"));
                }
                _ => {}
            }
        }
    }
    wait_row.duplicated = answered_codes.values().filter(|times| **times > 1).count();
    wait_row.note = format!(
        "{} rounds, {} woke late or wrong; {unanswered} attempts without an answer, asked again",
        wait_rounds.len(),
        wait_problems.len()
    );
    rows.extend([event_row, hook_row, chain_row, wait_row]);

    // Every answer: never a 500, never past the deadline.
    let errors: Vec<String> = ledger
        .answers
        .iter()
        .filter(|answer| matches!(answer.outcome, Outcome::Status(status) if status >= 500 && status != 503))
        .map(|answer| format!("{:?} on instance {}: {:?} {}", answer.work, answer.server, answer.outcome, answer.body))
        .collect();
    let hung: Vec<String> = ledger
        .answers
        .iter()
        .filter(|answer| answer.outcome == Outcome::TimedOut)
        .map(|answer| {
            format!(
                "{:?} on instance {} after {:?}",
                answer.work,
                answer.server,
                answer.took()
            )
        })
        .collect();
    let without_retry_after = ledger
        .answers
        .iter()
        .filter(|answer| answer.outcome == Outcome::Status(503) && answer.retry_after.is_none())
        .count();

    // Per fault and instance: unavailability and recovery.
    let mut faults_table = format!(
        "{:<20} {:>13} {:>9} {:>7}  {:<9} {:>11} {:>9} {:>8} {:>10} {:>8}\n",
        "failover",
        "primary",
        "writable",
        "whole",
        "instance",
        "503 / none",
        "outage",
        "back",
        "vs primary",
        "slowest"
    );
    let mut late = Vec::new();
    for (index, run) in runs.iter().enumerate() {
        let until = runs
            .get(index + 1)
            .map_or(Instant::now(), |next| next.injected);
        for server in 0..servers.len() {
            let figures = recovery(&ledger.answers, server, run, until);
            if figures.after_primary > RECOVERY.as_secs_f64() || figures.back.is_none() {
                late.push(format!(
                    "{} (#{}): instance {server} answered writes again {:.1} s after the new \
                     primary took them ({figures:?})",
                    run.fault.name(),
                    index + 1,
                    figures.after_primary
                ));
            }
            let head = match server {
                0 => format!(
                    "{:<20} {:>13} {:>8.1}s {:>6.1}s",
                    format!("{}. {}", index + 1, run.fault.name()),
                    format!("{}→{}", run.old_primary, run.new_primary),
                    (run.writable - run.injected).as_secs_f64(),
                    (run.whole - run.injected).as_secs_f64(),
                ),
                _ => " ".repeat(52),
            };
            let _ = writeln!(
                faults_table,
                "{head}  {:<9} {:>11} {:>8.1}s {:>7} {:>9.1}s {:>7.1}s",
                ["in order", "reversed"][server],
                format!("{} / {}", figures.unavailable, figures.in_doubt),
                figures.outage.as_secs_f64(),
                figures.back.map_or("never".to_owned(), |back| format!(
                    "{:.1}s",
                    back.as_secs_f64()
                )),
                figures.after_primary,
                figures.slowest.as_secs_f64()
            );
        }
    }
    let kinds_table = per_kind(&ledger, &runs, &before_retries, &after);
    let answers = ledger.answers.len();

    let mut report = format!(
        "failover: {} faults in a row on a formation of a monitor and two synchronous nodes, two \
         instances, {AGENTS} agents; formation up in {:.0} s, set up in {:.0} s, load for {:.0} s, \
         {answers} answers\n\nper failover, each instance's writes: failed with 503 / without an \
         answer; the outage, from the first failed write to the first success of a write sent \
         after the last failure; back, that success from the fault, and vs primary, from the new \
         primary taking writes; the slowest write\n\
         {faults_table}\nevery record\n{}\nby when it was first asked for\n{kinds_table}",
        runs.len(),
        formation_up.as_secs_f64(),
        setup.as_secs_f64(),
        load_took.as_secs_f64(),
        table(&rows)
    );

    // The accounting catches a loss: one acknowledged intent removed behind the service's back.
    let removed = {
        let (key, id) = ledger
            .accepted
            .iter()
            .filter(|((work, _), _)| *work == Work::Send)
            .map(|((_, key), id)| (key.clone(), id.clone()))
            .min()
            .expect("an acknowledged send");
        formation.sql(&format!("DELETE FROM transfer_intents WHERE id = '{id}'"));
        key
    };
    let after_removal = stored(&url, &env, &migrated, &agents).await;
    let caught = account(&ledger, &after_removal, |_| true);
    let _ = writeln!(
        report,
        "\none acknowledged intent ({removed}) deleted behind the service's back: the accounting \
         reports intents lost {} {:?}",
        caught[&Work::Send].lost.len(),
        caught[&Work::Send].lost
    );

    if let Some(folder) = report_path().parent() {
        let _ = std::fs::create_dir_all(folder);
    }
    let _ = std::fs::write(report_path(), &report);
    println!("{report}");

    // The verdict, once everything is printed.
    assert!(
        errors.is_empty(),
        "answers of 500 and the like: {errors:#?}"
    );
    assert!(
        hung.is_empty(),
        "requests with no answer within {:?}: {hung:#?}",
        load.deadline
    );
    assert_eq!(without_retry_after, 0, "503s without Retry-After");
    for (work, tally) in &tallies {
        assert!(tally.clean(), "{work:?}: {tally:?}");
    }
    assert!(event_problems.is_empty(), "{event_problems:#?}");
    assert_eq!(hook_row_lost(&rows), 0, "webhook deliveries lost");
    assert!(chain_problems.is_empty(), "{chain_problems:#?}");
    assert!(
        rows.iter()
            .all(|row| row.lost == 0 && (row.duplicated == 0 || row.what == "webhook deliveries")),
        "{}",
        table(&rows)
    );
    assert!(
        wait_problems.is_empty(),
        "waits that woke late or wrong: {wait_problems:#?}"
    );
    assert!(
        late.is_empty(),
        "an instance took more than {RECOVERY:?} after the new primary to answer writes again: {late:#?}"
    );
    assert_eq!(
        caught[&Work::Send].lost,
        vec![removed],
        "the accounting saw the intent removed behind the service's back"
    );
    report
}

fn hook_row_lost(rows: &[Row]) -> usize {
    rows.iter()
        .find(|row| row.what == "webhook deliveries")
        .map_or(0, |row| row.lost)
}

/// Answers within this of a formation losing and regaining its primary.
const NO_PRIMARY_WITHIN: Duration = Duration::from_secs(15);

/// Sends `request` until it is answered `wanted`, each other answer a 503 with `Retry-After`.
async fn until_answered(request: impl Fn() -> reqwest::RequestBuilder, wanted: u16) {
    let deadline = Instant::now() + NO_PRIMARY_WITHIN;
    loop {
        let response = request().send().await.expect("an answer");
        let status = response.status().as_u16();
        if status == wanted {
            return;
        }
        assert_eq!(status, 503, "{}", response.text().await.unwrap_or_default());
        assert!(
            response.headers().contains_key("retry-after"),
            "a 503 says when to retry"
        );
        assert!(Instant::now() < deadline, "still {status}, not {wanted}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn reads_are_answered_by_a_standby_while_no_node_takes_writes() {
    use diesel_async::SimpleAsyncConnection;
    let database = test_support::TestDatabase::new().await;
    let (key, _) = crate::support::harness::create_agent(&database, &["--email"]).await;
    let url = database.formation_url();
    let server = Server::start_with(&[("DATABASE_URL", url.as_str())]).await;
    let keys = || server.client.get(server.url("/v1/keys")).bearer_auth(&key);
    let mail = || {
        server
            .client
            .get(server.url("/v1/email/inbox"))
            .bearer_auth(&key)
    };
    let write = || {
        server
            .client
            .post(server.url("/v1/keys"))
            .bearer_auth(&key)
            .json(&json!({"scopes": ["email:read"]}))
    };
    until_answered(keys, 200).await;

    let mut own = database.connection().await;
    // No node takes writes: every session opened from now on is read-only, as a standby's, and
    // the primary's sessions are gone.
    own.batch_execute(&format!(
        "ALTER DATABASE \"{}\" SET default_transaction_read_only = on; \
         SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
        database.name()
    ))
    .await
    .expect("no primary");
    until_answered(keys, 200).await;
    until_answered(mail, 200).await;
    let (status, listed) = server.get("/v1/keys", Some(&key)).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        listed["items"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    let refused = write().send().await.expect("an answer");
    assert_eq!(refused.status().as_u16(), 503, "no write without a primary");
    assert!(refused.headers().contains_key("retry-after"));

    own.batch_execute(&format!(
        "ALTER DATABASE \"{}\" RESET default_transaction_read_only",
        database.name()
    ))
    .await
    .expect("a primary again");
    until_answered(write, 201).await;
}
