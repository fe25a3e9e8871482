//! A mixed load of agents over one or more servers, every answer in a ledger, and what it left
//! read back and accounted as Jepsen does (acknowledged, lost, duplicated, in doubt). The tests of
//! a database that goes away share it: `database_outage` (PostgreSQL stopped and started) and
//! `failover` (a pg_auto_failover formation failing over).
//!
//! Every request has a deadline: one with no answer by then, or whose connection failed, is
//! recorded as such (in doubt), never left to hang the load. Each write carries an identity a
//! retry repeats (an idempotency key, a provider's message id), so that afterwards every identity
//! tried can be asked again and what was stored counted by identity.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use futures_util::{stream, StreamExt};
use serde_json::{json, Value};

use crate::email::{now, raw_mail, SECRET};
use crate::sms::{message_sid, twilio_params, TOKEN, TWILIO_UNREACHABLE};
use crate::support::harness::{agentctl_at, header, CliOutput, Server};

/// How long a test waits for the load to reach a state.
const DEADLINE: Duration = Duration::from_secs(60);
/// Where the provider's webhooks are served.
const MAIL_WEBHOOK: &str = "/webhooks/email/inbound";
const SMS_WEBHOOK: &str = "/webhooks/sms/twilio";

/// One agent with every resource, and the address its sends pay.
pub(crate) struct Agent {
    pub key: String,
    pub id: String,
    pub address: String,
    pub number: String,
    pub wallet: String,
    pub recipient: String,
}

/// What kind of request a worker makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Work {
    Send,
    MailSend,
    Read,
    InboundMail,
    InboundSms,
}

pub(crate) const WORKS: [Work; 5] = [
    Work::Send,
    Work::MailSend,
    Work::Read,
    Work::InboundMail,
    Work::InboundSms,
];

impl Work {
    /// Whether the request writes (and so carries an identity).
    pub fn writes(self) -> bool {
        self != Work::Read
    }

    /// How the accounting names what it creates.
    pub fn noun(self) -> &'static str {
        match self {
            Work::Send => "intents",
            Work::MailSend => "mail sent",
            Work::Read => "reads",
            Work::InboundMail => "mail received",
            Work::InboundSms => "SMS received",
        }
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// An answer with this status.
    Status(u16),
    /// No answer within the request's deadline.
    TimedOut,
    /// The connection failed before an answer.
    Failed,
}

impl Outcome {
    pub fn status(self) -> Option<u16> {
        match self {
            Outcome::Status(status) => Some(status),
            _ => None,
        }
    }

    pub fn is_success(self) -> bool {
        matches!(self, Outcome::Status(200..=299))
    }

    /// No answer: whether the request did anything is unknown.
    pub fn in_doubt(self) -> bool {
        matches!(self, Outcome::TimedOut | Outcome::Failed)
    }

    /// The service answered and did what it was asked or refused it for a reason of the
    /// request's own (a business rule), not for want of its database.
    pub fn answered(self) -> bool {
        matches!(self, Outcome::Status(status) if status < 500 && status != 408 && status != 429)
    }
}

/// One answer the load received.
pub(crate) struct Answer {
    pub work: Work,
    /// The index of the server asked.
    pub server: usize,
    pub sent: Instant,
    pub at: Instant,
    pub outcome: Outcome,
    pub body: Value,
    pub retry_after: Option<String>,
}

impl Answer {
    pub fn took(&self) -> Duration {
        self.at - self.sent
    }
}

/// Every answer, and each work's requests by the identity a retry repeats.
#[derive(Default)]
pub(crate) struct Ledger {
    pub answers: Vec<Answer>,
    /// (work, identity) → the id of what the first 2xx created.
    pub accepted: HashMap<(Work, String), String>,
    /// Every identity tried, whatever the answer.
    pub tried: HashSet<(Work, String)>,
    /// Identities refused for a reason of their own (a 4xx other than 408, 409 and 429): not done,
    /// and known not to be.
    pub refused: HashSet<(Work, String)>,
    /// Identities a request of which got no answer (timed out, connection failed).
    pub unanswered: HashSet<(Work, String)>,
    /// When each identity was first sent.
    pub first_sent: HashMap<(Work, String), Instant>,
}

pub(crate) type Shared = Arc<Mutex<Ledger>>;

impl Ledger {
    fn record(&mut self, identity: Option<String>, answer: Answer) {
        if let Some(identity) = identity {
            if answer.outcome == Outcome::Status(200) {
                let id = created_id(&answer.body);
                self.accepted
                    .entry((answer.work, identity.clone()))
                    .or_insert(id);
            } else if answer.outcome.answered() && answer.outcome != Outcome::Status(409) {
                self.refused.insert((answer.work, identity.clone()));
            } else if answer.outcome.in_doubt() {
                self.unanswered.insert((answer.work, identity.clone()));
            }
            self.first_sent
                .entry((answer.work, identity.clone()))
                .or_insert(answer.sent);
            self.tried.insert((answer.work, identity));
        }
        self.answers.push(answer);
    }

    /// Every kind of `works` has at least `count` answers matching `wanted` sent since `since`.
    pub fn each_work(
        &self,
        works: &[Work],
        since: Instant,
        count: usize,
        wanted: impl Fn(Outcome) -> bool,
    ) -> bool {
        works.iter().all(|work| {
            self.answers
                .iter()
                .filter(|answer| {
                    answer.work == *work && answer.sent >= since && wanted(answer.outcome)
                })
                .count()
                >= count
        })
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

/// What a request came to.
pub(crate) struct Reply {
    pub outcome: Outcome,
    /// The body as JSON (`null` when it is not JSON), or the error's text.
    pub body: Value,
    /// The `Retry-After` header of an answer.
    pub retry_after: Option<String>,
}

/// The request's outcome and body within `deadline`.
pub(crate) async fn exchange(request: reqwest::RequestBuilder, deadline: Duration) -> Reply {
    let answered = tokio::time::timeout(deadline, async {
        let response = request.send().await?;
        let status = response.status().as_u16();
        let retry_after = header(&response, "retry-after");
        let text = response.text().await?;
        Ok::<_, reqwest::Error>((status, retry_after, text))
    })
    .await;
    let failed = |outcome, body| Reply {
        outcome,
        body,
        retry_after: None,
    };
    match answered {
        Err(_) => failed(Outcome::TimedOut, Value::Null),
        Ok(Err(error)) if error.is_timeout() => failed(Outcome::TimedOut, json!(error.to_string())),
        Ok(Err(error)) => failed(Outcome::Failed, json!(error.to_string())),
        Ok(Ok((status, retry_after, text))) => Reply {
            outcome: Outcome::Status(status),
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
            retry_after,
        },
    }
}

/// The mixed load: agents, the servers they are spread over, what they send and how often.
pub(crate) struct Load<'a> {
    pub servers: Vec<&'a Server>,
    pub agents: &'a [Agent],
    pub ledger: Shared,
    pub stopping: AtomicBool,
    /// The pause between one worker's requests: a steady load, not the most the machine can do.
    pub pace: Duration,
    /// The pause between one worker's sends (each a transaction on chain once executed).
    pub send_pace: Duration,
    /// A request unanswered after this is recorded as timed out.
    pub deadline: Duration,
    /// The amount of a worker's send in round `round`.
    pub amount: fn(usize) -> u64,
}

const READS: [&str; 5] = [
    "/v1/agents/me",
    "/v1/wallet/policy",
    "/v1/wallet/intents",
    "/v1/email/inbox",
    "/v1/sms/messages",
];

impl<'a> Load<'a> {
    pub fn new(servers: Vec<&'a Server>, agents: &'a [Agent], pace: Duration) -> Self {
        Load {
            servers,
            agents,
            ledger: Arc::default(),
            stopping: AtomicBool::new(false),
            pace,
            send_pace: pace,
            deadline: Duration::from_secs(15),
            amount: |_| 1,
        }
    }

    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }

    pub fn stopped(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// The server a worker asks in `round`: each worker goes round the servers, starting at its
    /// own.
    pub fn server_of(&self, tag: usize, round: usize) -> (usize, &'a Server) {
        let index = (tag + round) % self.servers.len();
        (index, self.servers[index])
    }

    pub fn record(
        &self,
        server: usize,
        work: Work,
        identity: Option<String>,
        sent: Instant,
        reply: Reply,
    ) {
        let answer = Answer {
            work,
            server,
            sent,
            at: Instant::now(),
            outcome: reply.outcome,
            body: reply.body,
            retry_after: reply.retry_after,
        };
        self.ledger.lock().expect("ledger").record(identity, answer);
    }

    /// A send of `amount` to the agent's recipient under `idempotency_key`.
    pub async fn wallet_send(
        &self,
        server: &Server,
        agent: &Agent,
        idempotency_key: &str,
        amount: u64,
    ) -> Reply {
        let body = json!({
            "to": agent.recipient,
            "amount_atomic": amount.to_string(),
            "idempotency_key": idempotency_key,
        });
        let request = server
            .client
            .post(server.url("/v1/wallet/send"))
            .bearer_auth(&agent.key)
            .json(&body);
        exchange(request, self.deadline).await
    }

    pub async fn mail_send(&self, server: &Server, agent: &Agent, idempotency_key: &str) -> Reply {
        let body = json!({
            "to": [format!("{idempotency_key}@example.com")],
            "subject": "Outage",
            "body_text": "Sent while the database came and went",
        });
        let request = server
            .client
            .post(server.url("/v1/email/send"))
            .bearer_auth(&agent.key)
            .header("Idempotency-Key", idempotency_key)
            .json(&body);
        exchange(request, self.deadline).await
    }

    /// A mail to the agent through the provider's signed webhook, `id` its webhook id and in its
    /// Message-ID.
    pub async fn inbound_mail(&self, server: &Server, agent: &Agent, id: &str) -> Reply {
        let mail = raw_mail(
            "sender@example.com",
            &agent.address,
            "Inbound during an outage",
            &format!("<{id}@outage.test>"),
            "Hello",
        );
        let timestamp = now();
        let request = server
            .client
            .post(server.url(MAIL_WEBHOOK))
            .header("content-type", "message/rfc822")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header(
                "webhook-signature",
                email::sign(SECRET, id, timestamp, &mail),
            )
            .body(mail);
        exchange(request, self.deadline).await
    }

    /// An SMS to the agent through Twilio's signed webhook, `sid` its message id.
    pub async fn inbound_sms(
        &self,
        server: &Server,
        agent: &Agent,
        sid: &str,
        text: &str,
    ) -> Reply {
        let params = twilio_params(sid, "+15550002222", &agent.number, text);
        let public = TWILIO_UNREACHABLE
            .iter()
            .find(|(name, _)| *name == "SMS_PUBLIC_BASE_URL")
            .map(|(_, url)| *url)
            .expect("the public base URL Twilio signs");
        let signature = sms::sign(TOKEN, &format!("{public}{SMS_WEBHOOK}"), &params);
        let request = server
            .client
            .post(server.url(SMS_WEBHOOK))
            .header("X-Twilio-Signature", signature)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(&params).expect("a form"));
        exchange(request, self.deadline).await
    }

    /// The request of `work` for `identity` (and `round`, which picks a send's amount and a
    /// read's path).
    async fn request(
        &self,
        server: &Server,
        agent: &Agent,
        work: Work,
        identity: &str,
        round: usize,
    ) -> Reply {
        match work {
            Work::Send => {
                self.wallet_send(server, agent, identity, (self.amount)(round))
                    .await
            }
            Work::MailSend => self.mail_send(server, agent, identity).await,
            Work::InboundMail => self.inbound_mail(server, agent, identity).await,
            Work::InboundSms => self.inbound_sms(server, agent, identity, "Hello").await,
            Work::Read => {
                let path = READS[round % READS.len()];
                let request = server.client.get(server.url(path)).bearer_auth(&agent.key);
                exchange(request, self.deadline).await
            }
        }
    }

    /// Runs `work` for agent `tag` until the load stops, one request at a time.
    pub async fn worker(&self, tag: usize, work: Work) {
        let agent = &self.agents[tag];
        let mut round = 0usize;
        while !self.stopped() {
            let identity = identity_of(work, tag, round);
            let (index, server) = self.server_of(tag, round);
            let sent = Instant::now();
            let answer = self.request(server, agent, work, &identity, round).await;
            let identity = work.writes().then_some(identity);
            self.record(index, work, identity, sent, answer);
            round += 1;
            let pace = match work {
                Work::Send => self.send_pace,
                _ => self.pace,
            };
            tokio::time::sleep(pace).await;
        }
    }

    /// Every agent's workers of `works`, until the load stops.
    pub async fn run(&self, works: &[Work]) {
        join_all(
            (0..self.agents.len())
                .flat_map(|tag| works.iter().map(move |work| self.worker(tag, *work))),
        )
        .await;
    }

    /// Waits (with a deadline) until the ledger satisfies `reached`.
    pub async fn until(&self, what: &str, reached: impl Fn(&Ledger) -> bool) {
        let started = Instant::now();
        while !reached(&self.ledger.lock().expect("ledger")) {
            assert!(started.elapsed() < DEADLINE, "never saw {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Asks again, once the load is over, for every identity of `identities`: a retry of what was
    /// accepted must find the same thing, and what was not must now be accepted, or, for a send,
    /// refused by the spend policy. Returns the identities each retry refused.
    pub async fn retry(&self, identities: &[(Work, String)]) -> HashSet<(Work, String)> {
        let accepted: Vec<Option<String>> = {
            let ledger = self.ledger.lock().expect("ledger");
            identities
                .iter()
                .map(|key| ledger.accepted.get(key).cloned())
                .collect()
        };
        let retries = identities
            .iter()
            .zip(accepted)
            .map(|((work, identity), accepted)| {
                async move {
                    let agent = &self.agents[tag_of(*work, identity)];
                    let server = self.servers[0];
                    let started = Instant::now();
                    let Reply { outcome, body, .. } = loop {
                        let round = round_of(*work, identity);
                        let reply = self.request(server, agent, *work, identity, round).await;
                        // The first request may still be under way on a server stuck on a node that
                        // went away: its key is busy until it ends.
                        if reply.outcome != Outcome::Status(409) || started.elapsed() > DEADLINE {
                            break reply;
                        }
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    };
                    match outcome {
                        Outcome::Status(200) => {
                            if let Some(first) = accepted {
                                assert_eq!(
                                    first,
                                    created_id(&body),
                                    "{work:?} {identity}: a retry found another item"
                                );
                            }
                            None
                        }
                        Outcome::Status(403) if *work == Work::Send && accepted.is_none() => {
                            Some((*work, identity.clone()))
                        }
                        _ => {
                            panic!("{work:?} {identity} retried after the load: {outcome:?} {body}")
                        }
                    }
                }
            });
        let refused = stream::iter(retries)
            .buffer_unordered(16)
            .collect::<Vec<_>>()
            .await;
        refused.into_iter().flatten().collect()
    }

    /// Every identity tried, in order.
    pub fn tried(&self) -> Vec<(Work, String)> {
        let mut tried: Vec<_> = self
            .ledger
            .lock()
            .expect("ledger")
            .tried
            .iter()
            .cloned()
            .collect();
        tried.sort();
        tried
    }
}

/// The identity of a worker's request of `work` in round `round` of agent `tag`: an SMS's is a
/// message id of Twilio's shape, which the webhook alone takes.
pub(crate) fn identity_of(work: Work, tag: usize, round: usize) -> String {
    match work {
        Work::InboundSms => message_sid((tag as u64) << 32 | round as u64),
        _ => format!("{work:?}-{tag}-{round}").to_lowercase(),
    }
}

/// The agent and round an identity of `identity_of` belongs to.
fn parts_of(work: Work, identity: &str) -> (usize, usize) {
    let parts = match work {
        Work::InboundSms => u128::from_str_radix(&identity[2..], 16)
            .ok()
            .map(|number| (number >> 32, number & 0xffff_ffff)),
        _ => {
            let mut parts = identity.split('-').skip(1).map(|part| part.parse().ok());
            parts.next().flatten().zip(parts.next().flatten())
        }
    };
    parts
        .and_then(|(tag, round)| Some((usize::try_from(tag).ok()?, usize::try_from(round).ok()?)))
        .expect("an identity of identity_of")
}

pub(crate) fn tag_of(work: Work, identity: &str) -> usize {
    parts_of(work, identity).0
}

fn round_of(work: Work, identity: &str) -> usize {
    parts_of(work, identity).1
}

/// `agentctl` on the database at `url` with `env` besides.
pub(crate) async fn agentctl(url: &str, env: &[(&str, &str)], args: &[&str]) -> CliOutput {
    agentctl_at(url, env, args).await
}

/// An agent with a wallet, an inbox and a number, sponsored apart from the others (each sponsor
/// has a send rate of its own). Its sends pay `recipient`; the caller funds its wallet.
pub(crate) async fn create_agent(
    url: &str,
    env: &[(&str, &str)],
    tag: usize,
    recipient: &str,
) -> Agent {
    let sponsor = format!("sponsor-{tag}");
    let created = agentctl(
        url,
        env,
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
    let text = |value: &Value, what: &str| value.as_str().expect(what).to_owned();
    let agent = &created["agent"];
    Agent {
        key: text(&created["agent_key"], "key"),
        id: text(&agent["id"], "id"),
        address: text(&agent["email_inbox"]["address"], "an inbox"),
        number: text(&agent["phone_number"]["number"], "a number"),
        wallet: text(&agent["wallet"]["address"], "a wallet"),
        recipient: recipient.to_owned(),
    }
}

/// Every item of a cursor-paged list at `path` (which has its query started), or the answer
/// of a page that was not 200.
pub(crate) async fn try_all_pages(
    server: &Server,
    key: &str,
    path: &str,
) -> Result<Vec<Value>, Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page_path = match &cursor {
            Some(cursor) => format!("{path}&cursor={cursor}"),
            None => path.to_owned(),
        };
        let (status, page) = server.get(&page_path, Some(key)).await;
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

pub(crate) async fn all_pages(server: &Server, key: &str, path: &str) -> Vec<Value> {
    try_all_pages(server, key, path)
        .await
        .unwrap_or_else(|answer| panic!("{path}: {answer}"))
}

/// Ids of the agent's intents in `status`, when the list can be read.
pub(crate) async fn intents_in(
    server: &Server,
    agent: &Agent,
    status: &str,
) -> Option<Vec<String>> {
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

/// What a round of confirmations came to.
#[derive(Debug, Default)]
pub(crate) struct Confirmed {
    pub confirmed: usize,
    /// What the last confirmation that failed said.
    pub last_failure: Option<String>,
}

/// Confirms, as the operator, every intent still waiting for it; an attempt while the database
/// is away fails and is made again later.
pub(crate) async fn confirm_pending(
    url: &str,
    env: &[(&str, &str)],
    server: &Server,
    agents: &[Agent],
) -> Confirmed {
    let mut confirmed = Confirmed::default();
    for agent in agents {
        let Some(pending) = intents_in(server, agent, "pending_confirmation").await else {
            continue;
        };
        for batch in pending.chunks(8) {
            let results =
                join_all(batch.iter().map(|id| async move {
                    agentctl(url, env, &["intents", "confirm", id]).await
                }))
                .await;
            for output in results {
                if output.success {
                    confirmed.confirmed += 1;
                } else {
                    confirmed.last_failure = Some(output.stderr);
                }
            }
        }
    }
    confirmed
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

/// Every intent, as the operator lists them (with the idempotency key each was made under).
pub(crate) async fn all_intents(url: &str, env: &[(&str, &str)]) -> Vec<Value> {
    let listed = agentctl(url, env, &["intents", "list"]).await.json();
    listed.as_array().expect("a list").clone()
}

/// What is stored, by kind of work, as the identities the load gave each item (the idempotency
/// key of an intent, the recipient of a mail sent, the Message-ID of a mail received, the sid
/// of an SMS): sorted, duplicates kept. Intents come from the operator's list, the rest from the
/// agents' own reads.
pub(crate) async fn stored(
    url: &str,
    env: &[(&str, &str)],
    server: &Server,
    agents: &[Agent],
) -> BTreeMap<Work, Vec<String>> {
    let text = |value: &Value| value.as_str().expect("a string").to_owned();
    let mut stored: BTreeMap<Work, Vec<String>> = BTreeMap::new();
    let ours: HashSet<&str> = agents.iter().map(|agent| agent.id.as_str()).collect();
    stored.insert(
        Work::Send,
        all_intents(url, env)
            .await
            .iter()
            .filter(|intent| ours.contains(intent["agent_id"].as_str().unwrap_or_default()))
            .map(|intent| {
                intent["idempotency_key"]
                    .as_str()
                    .unwrap_or("(none)")
                    .to_owned()
            })
            .collect(),
    );
    for agent in agents {
        let key = &agent.key;
        let outbound = all_pages(server, key, "/v1/email/inbox?limit=100&direction=outbound").await;
        let inbound = all_pages(server, key, "/v1/email/inbox?limit=100&direction=inbound").await;
        let sms = all_sms(server, key).await;
        let identities = [
            (
                Work::MailSend,
                outbound
                    .iter()
                    .map(|mail| {
                        text(&mail["to"][0])
                            .trim_end_matches("@example.com")
                            .to_owned()
                    })
                    .collect::<Vec<_>>(),
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

/// One line of the accounting: what the load was told and what is there.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Identities answered 2xx under the load.
    pub acknowledged: usize,
    /// Acknowledged identities not stored.
    pub lost: Vec<String>,
    /// Identities stored more than once (each named once).
    pub duplicated: Vec<String>,
    /// Identities stored that no request carried.
    pub unexpected: Vec<String>,
    /// Identities refused under the load for a reason of their own.
    pub refused: usize,
    /// Identities answered only 503 (or another 5xx, or 429) under the load: not done, as far
    /// as the answer says.
    pub unavailable: usize,
    /// Of those, the ones stored before they were retried: their write took effect after all.
    pub unavailable_stored: usize,
    /// Identities a request of which got no answer (timed out, connection failed), none 2xx:
    /// whether they took effect was unknown until read back.
    pub in_doubt: usize,
    /// Of those, the ones stored before they were retried.
    pub in_doubt_stored: usize,
}

impl Tally {
    pub fn clean(&self) -> bool {
        self.lost.is_empty() && self.duplicated.is_empty() && self.unexpected.is_empty()
    }
}

/// The accounting of each kind of write: the ledger against what `stored` read, for the
/// identities `keep` keeps (every one, or those of a phase of the load). Run it before the
/// retries to see what the requests without a 2xx did, after them for the final word.
pub(crate) fn account(
    ledger: &Ledger,
    stored: &BTreeMap<Work, Vec<String>>,
    keep: impl Fn(&(Work, String)) -> bool,
) -> BTreeMap<Work, Tally> {
    let mut tallies = BTreeMap::new();
    for (work, items) in stored {
        let kept = |identity: &str| keep(&(*work, identity.to_owned()));
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for item in items.iter().filter(|item| kept(item)) {
            *counts.entry(item.as_str()).or_default() += 1;
        }
        let of_work = |set: &HashSet<(Work, String)>| -> Vec<String> {
            let mut identities: Vec<String> = set
                .iter()
                .filter(|(of, identity)| of == work && kept(identity))
                .map(|(_, identity)| identity.clone())
                .collect();
            identities.sort();
            identities
        };
        let tried: HashSet<String> = of_work(&ledger.tried).into_iter().collect();
        let acknowledged: Vec<String> = ledger
            .accepted
            .keys()
            .filter(|(of, identity)| of == work && kept(identity))
            .map(|(_, identity)| identity.clone())
            .collect();
        let unresolved = |identity: &String| {
            let key = (*work, identity.clone());
            !ledger.accepted.contains_key(&key) && !ledger.refused.contains(&key)
        };
        let (in_doubt, unavailable): (Vec<&String>, Vec<&String>) = tried
            .iter()
            .filter(|identity| unresolved(identity))
            .partition(|identity| ledger.unanswered.contains(&(*work, (*identity).clone())));
        let stored_count = |identities: &[&String]| {
            identities
                .iter()
                .filter(|identity| counts.contains_key(identity.as_str()))
                .count()
        };
        let mut tally = Tally {
            acknowledged: acknowledged.len(),
            lost: acknowledged
                .iter()
                .filter(|identity| !counts.contains_key(identity.as_str()))
                .cloned()
                .collect(),
            duplicated: counts
                .iter()
                .filter(|(_, count)| **count > 1)
                .map(|(identity, _)| (*identity).to_owned())
                .collect(),
            unexpected: counts
                .keys()
                .filter(|identity| !tried.contains(**identity))
                .map(|identity| (*identity).to_owned())
                .collect(),
            refused: of_work(&ledger.refused)
                .iter()
                .filter(|identity| !ledger.accepted.contains_key(&(*work, (*identity).clone())))
                .count(),
            unavailable: unavailable.len(),
            unavailable_stored: stored_count(&unavailable),
            in_doubt: in_doubt.len(),
            in_doubt_stored: stored_count(&in_doubt),
        };
        tally.lost.sort();
        tally.duplicated.sort();
        tally.unexpected.sort();
        tallies.insert(*work, tally);
    }
    tallies
}
