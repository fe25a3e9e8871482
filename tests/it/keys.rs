//! The keys contract from outside: scoped keys made by the agent for its sub-agents, each route
//! and stream refusing a key without its scope before reading the body, expiry, transitive
//! revocation on every instance, and the operator's `agentctl keys`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::console::count;
use crate::event_stream::Stream;
use crate::sms::{spawn_wait, waiting_for_route};
use crate::support::harness::{agentctl, create_agent, read, Server};

/// Every scope, in the contract's order.
const SCOPES: [&str; 10] = [
    "agent:read",
    "email:read",
    "email:send",
    "sms:read",
    "codes:read",
    "wallet:read",
    "wallet:pay",
    "events:read",
    "webhooks:manage",
    "keys:manage",
];

/// How soon a revocation or an expiry reaches what is open with the key.
const WITHIN: Duration = Duration::from_secs(1);

async fn send(
    server: &Server,
    method: reqwest::Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .client
        .request(method, server.url(path))
        .bearer_auth(key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    read(request.send().await.expect("request")).await
}

/// Makes a key with `key` as `body` asks; the answer.
async fn make_key(server: &Server, key: &str, body: Value) -> (u16, Value) {
    send(server, reqwest::Method::POST, "/v1/keys", key, Some(body)).await
}

/// A key `key` makes with `scopes`, and its id.
async fn made(server: &Server, key: &str, scopes: &[&str]) -> (String, String) {
    let (status, made) = make_key(server, key, json!({ "scopes": scopes })).await;
    assert_eq!(status, 201, "{made}");
    (
        made["key"].as_str().expect("key").to_owned(),
        made["id"].as_str().expect("id").to_owned(),
    )
}

/// Revokes `id` with `key`: the status, and the body unless it has none (a 204).
async fn revoke(server: &Server, key: &str, id: &str) -> (u16, Value) {
    let response = server
        .client
        .delete(server.url(&format!("/v1/keys/{id}")))
        .bearer_auth(key)
        .send()
        .await
        .expect("request");
    if response.status() == reqwest::StatusCode::NO_CONTENT {
        let body = response.text().await.expect("body");
        assert_eq!(body, "", "a 204 has no body");
        return (204, Value::Null);
    }
    read(response).await
}

async fn me(server: &Server, key: &str) -> (u16, Value) {
    server.get("/v1/agents/me", Some(key)).await
}

fn lacks(scope: &str) -> Value {
    json!({ "detail": format!("This key lacks the scope {scope}") })
}

/// The names of a list of scopes, as the API shows them.
fn names(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .expect("a list")
        .iter()
        .map(|scope| scope.as_str().expect("a name"))
        .collect()
}

#[tokio::test]
async fn an_agent_makes_a_read_only_mail_key_for_a_sub_agent() {
    let (server, database) = Server::start().await;
    let (key, agent) = create_agent(&database, &["--email", "--wallet"]).await;
    let (status, first_me) = me(&server, &key).await;
    assert_eq!(status, 200);
    assert_eq!(first_me["key"]["expires_at"], Value::Null);
    assert_eq!(names(&first_me["key"]["scopes"]), SCOPES);
    assert_eq!(
        first_me["key"], agent["key"],
        "agentctl shows the first key"
    );

    let (status, created) = make_key(
        &server,
        &key,
        json!({"label": "mail reader", "scopes": ["email:read"], "expires_in_seconds": 3600}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let child = created["key"].as_str().expect("key");
    assert!(child.starts_with("ark_") && child.len() == 47, "{child}");
    let id = created["id"].as_str().expect("id");
    assert!(id.starts_with("key_") && id.len() == 30, "{id}");
    assert_eq!(created["label"], "mail reader");
    assert_eq!(names(&created["scopes"]), ["agent:read", "email:read"]);
    let expires_at = created["expires_at"].as_str().expect("an expiry");

    let (status, child_me) = me(&server, child).await;
    assert_eq!(status, 200);
    assert_eq!(child_me["id"], agent["id"]);
    assert_eq!(
        child_me["key"],
        json!({"id": id, "label": "mail reader", "scopes": ["agent:read", "email:read"],
            "expires_at": expires_at})
    );
    assert_ne!(child_me["agent_key_hash"], first_me["agent_key_hash"]);
    assert_eq!(server.get("/v1/email/inbox", Some(child)).await.0, 200);
    let refused = send(
        &server,
        reqwest::Method::POST,
        "/v1/email/send",
        child,
        Some(json!({"to": ["a@example.com"], "subject": "hi", "text": "hello"})),
    )
    .await;
    assert_eq!(refused, (403, lacks("email:send")));
    assert_eq!(
        make_key(&server, child, json!({"scopes": ["email:read"]})).await,
        (403, lacks("keys:manage"))
    );
    assert_eq!(
        server.get("/v1/wallet/balance", Some(child)).await,
        (403, lacks("wallet:read"))
    );

    let (status, listed) = server.get("/v1/keys", Some(&key)).await;
    assert_eq!(status, 200);
    let items = listed["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{listed}");
    assert_eq!(items[0]["id"], first_me["key"]["id"]);
    assert_eq!(items[0]["parent_key_id"], Value::Null);
    assert_eq!(items[1]["id"], id);
    assert_eq!(items[1]["parent_key_id"], first_me["key"]["id"]);
    let used = items[1]["last_used_at"].as_str().expect("used just now");
    assert!(used.ends_with(":00Z"), "to the minute: {used}");
    assert!(
        !listed.to_string().contains(&child[4..]),
        "no secret listed"
    );
}

/// A request to the route `method path` of the OpenAPI document, its path parameters filled in
/// and, for a write, a body that is not even JSON: the scope is checked before the body is read.
async fn unread(server: &Server, method: &str, path: &str, key: &str) -> (u16, Value) {
    let filled: String = path
        .split('/')
        .map(|part| match part {
            "{key_id}" => "key_00000000000000000000000000",
            _ if part.starts_with('{') => "00000000-0000-7000-8000-000000000000",
            other => other,
        })
        .collect::<Vec<_>>()
        .join("/");
    let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
    let mut request = server
        .client
        .request(method.clone(), server.url(&filled))
        .bearer_auth(key);
    if method != reqwest::Method::GET && method != reqwest::Method::DELETE {
        request = request
            .header("content-type", "application/json")
            .body("{not json");
    }
    read(request.send().await.expect("request")).await
}

#[tokio::test]
async fn every_route_refuses_a_key_without_its_scope_before_reading_the_body() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &["--email", "--phone", "--wallet"]).await;
    let (status, document) = server.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let mut lacking_keys = std::collections::HashMap::new();
    for scope in &SCOPES[1..] {
        let others: Vec<&str> = SCOPES.iter().copied().filter(|s| s != scope).collect();
        lacking_keys.insert(*scope, made(&server, &key, &others).await.0);
    }
    let mut checked = 0;
    for (path, operations) in document["paths"].as_object().expect("paths") {
        for (method, operation) in operations.as_object().expect("operations") {
            let Some(scope) = operation["x-required-scope"].as_str() else {
                continue;
            };
            if scope == "agent:read" {
                continue;
            }
            let lacking = &lacking_keys[scope];
            assert_eq!(
                unread(&server, method, path, lacking).await,
                (403, lacks(scope)),
                "{method} {path}"
            );
            // A route's own 403 (a rule of the policy) is documented beside the scope's.
            let forbidden = operation["responses"]["403"]["description"]
                .as_str()
                .expect("a 403 described");
            assert!(
                forbidden == format!("The key lacks the scope {scope}")
                    || forbidden.ends_with(&format!("; or the key lacks the scope {scope}")),
                "{method} {path}: {forbidden}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 35, "only {checked} routes");

    // A code wait reads only the channels its key reads.
    let (mail_codes, _) = made(&server, &key, &["codes:read", "email:read"]).await;
    let body = json!({"timeout": 0, "channels": ["sms"]});
    let path = "/v1/codes/wait";
    let answer = send(
        &server,
        reqwest::Method::POST,
        path,
        &mail_codes,
        Some(body),
    )
    .await;
    assert_eq!(answer, (403, lacks("sms:read")));
    let body = json!({"timeout": 0});
    let answer = send(
        &server,
        reqwest::Method::POST,
        path,
        &mail_codes,
        Some(body),
    )
    .await;
    assert_eq!(answer.0, 408, "{answer:?}");
}

#[tokio::test]
async fn delegation_keeps_to_the_makers_scopes_expiry_depth_and_the_agents_fifty_keys() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &["--email"]).await;
    let (status, parent) = make_key(
        &server,
        &key,
        json!({"scopes": ["email:read", "keys:manage"], "expires_in_seconds": 600}),
    )
    .await;
    assert_eq!(status, 201);
    let parent_key = parent["key"].as_str().expect("key");

    let (status, refused) = make_key(&server, parent_key, json!({"scopes": ["email:send"]})).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["detail"][0]["loc"], json!(["body", "scopes"]));
    let message = refused["detail"][0]["msg"].as_str().expect("msg");
    assert!(message.contains("email:send"), "{message}");
    let (status, refused) = make_key(
        &server,
        parent_key,
        json!({"scopes": ["email:read"], "expires_in_seconds": 601}),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        refused["detail"][0]["loc"],
        json!(["body", "expires_in_seconds"])
    );
    let message = refused["detail"][0]["msg"].as_str().expect("msg");
    assert!(message.contains("expires at"), "{message}");
    for invalid in [
        json!({"scopes": ["admin"]}),
        json!({"scopes": ["email:read"], "expires_in_seconds": 0}),
        json!({"scopes": ["email:read"], "label": ""}),
        json!({}),
    ] {
        assert_eq!(
            make_key(&server, parent_key, invalid.clone()).await.0,
            422,
            "{invalid}"
        );
    }

    let (status, inherited) =
        make_key(&server, parent_key, json!({"scopes": ["keys:manage"]})).await;
    assert_eq!(status, 201);
    assert_eq!(
        inherited["expires_at"], parent["expires_at"],
        "the maker's expiry"
    );

    // Depth: the first key is 0; a key of depth 4 makes no other.
    let mut maker = key.clone();
    for depth in 1..=4 {
        let (status, child) = make_key(&server, &maker, json!({"scopes": ["keys:manage"]})).await;
        assert_eq!(status, 201, "depth {depth}: {child}");
        maker = child["key"].as_str().expect("key").to_owned();
    }
    let (status, refused) = make_key(&server, &maker, json!({"scopes": ["keys:manage"]})).await;
    assert_eq!(status, 422, "{refused}");

    // Fifty live keys, the first included: 1 + parent + inherited + 4 = 7 so far.
    for _ in 7..50 {
        made(&server, &key, &["email:read"]).await;
    }
    let (status, refused) = make_key(&server, &key, json!({"scopes": ["email:read"]})).await;
    assert_eq!(status, 409, "{refused}");
    let (_, listed) = server.get("/v1/keys", Some(&key)).await;
    assert_eq!(listed["items"].as_array().expect("items").len(), 50);
}

#[tokio::test]
async fn revocation_is_transitive_immediate_on_every_instance_and_ends_what_is_open() {
    let database = TestDatabase::new().await;
    let first = Server::start_on(&database, &[]).await;
    let second = Server::start_on(&database, &[]).await;
    let (key, _) = create_agent(&database, &["--phone"]).await;
    let (parent, parent_id) = made(&first, &key, &["sms:read", "events:read", "keys:manage"]).await;
    let (child, child_id) =
        made(&first, &parent, &["sms:read", "events:read", "keys:manage"]).await;
    let (grandchild, _) = made(&second, &child, &["sms:read", "events:read"]).await;
    let (sibling, sibling_id) = made(&first, &key, &["keys:manage"]).await;
    for server in [&first, &second] {
        for held in [&parent, &child, &grandchild] {
            assert_eq!(me(server, held).await.0, 200);
        }
    }
    // Only itself and the keys made from it: any other id is not found.
    let (_, other_agent) = create_agent(&database, &[]).await;
    let other_id = other_agent["key"]["id"].as_str().expect("id");
    for id in [
        parent_id.as_str(),
        sibling_id.as_str(),
        other_id,
        "key_nothing",
    ] {
        assert_eq!(revoke(&first, &child, id).await.0, 404, "{id}");
    }
    assert_eq!(revoke(&first, &sibling, &child_id).await.0, 404);

    let mut stream = Stream::open(&second, &grandchild, "", None).await;
    stream.next(Duration::from_secs(10)).await.expect("retry");
    let wait = spawn_wait(
        &second,
        "/v1/sms/wait-for-code",
        &grandchild,
        json!({"timeout": 30}),
    );
    waiting_for_route(&second, "/v1/sms/wait-for-code", 1).await;

    assert_eq!(revoke(&first, &key, &parent_id).await, (204, Value::Null));
    let revoked = Instant::now();
    for server in [&first, &second] {
        for held in [&parent, &child, &grandchild] {
            assert_eq!(
                me(server, held).await,
                (401, json!({"detail": "Invalid agent key"}))
            );
        }
        assert_eq!(me(server, &sibling).await.0, 200, "a sibling is untouched");
    }
    assert_eq!(
        stream.next(Duration::from_secs(5)).await,
        None,
        "the stream ends"
    );
    let (status, _) = wait.await.expect("wait");
    assert_eq!(status, 401, "the wait ends");
    assert!(revoked.elapsed() < WITHIN, "{:?}", revoked.elapsed());

    // A key may revoke itself.
    assert_eq!(revoke(&second, &sibling, &sibling_id).await.0, 204);
    assert_eq!(me(&first, &sibling).await.0, 401);
}

#[tokio::test]
async fn an_expired_key_is_refused_saying_so_and_its_waits_and_streams_end() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &["--phone"]).await;
    let (status, created) = make_key(
        &server,
        &key,
        json!({"scopes": ["sms:read", "events:read"], "expires_in_seconds": 2}),
    )
    .await;
    assert_eq!(status, 201);
    let short = created["key"].as_str().expect("key");
    let mut stream = Stream::open(&server, short, "", None).await;
    stream.next(Duration::from_secs(10)).await.expect("retry");
    let wait = spawn_wait(
        &server,
        "/v1/sms/wait-for-code",
        short,
        json!({"timeout": 30}),
    );
    waiting_for_route(&server, "/v1/sms/wait-for-code", 1).await;

    assert_eq!(
        stream.next(Duration::from_secs(5)).await,
        None,
        "the stream ends"
    );
    let (status, _) = wait.await.expect("wait");
    assert_eq!(status, 401);
    let expires_at = created["expires_at"].as_str().expect("expiry");
    let (status, refused) = me(&server, short).await;
    assert_eq!(status, 401);
    assert_eq!(
        refused["detail"].as_str().expect("detail"),
        format!("This key expired at {expires_at}")
    );
}

#[tokio::test]
async fn the_operator_lists_makes_and_revokes_keys_and_every_change_is_audited() {
    let (server, database) = Server::start().await;
    let (key, agent) = create_agent(&database, &["--wallet"]).await;
    let id = agent["id"].as_str().expect("id");
    let created = agentctl(
        &database,
        &[
            "keys",
            "create",
            id,
            "--scope",
            "wallet:read",
            "--label",
            "auditor",
            "--expires-in",
            "600",
        ],
    )
    .await
    .json();
    let auditor = created["key"].as_str().expect("key");
    assert_eq!(names(&created["scopes"]), ["agent:read", "wallet:read"]);
    assert_eq!(me(&server, auditor).await.0, 200);
    let (sub, _) = made(&server, &key, &["email:read"]).await;

    let listed = agentctl(&database, &["keys", "list", id]).await.json();
    let items = listed["items"].as_array().expect("items");
    assert_eq!(items.len(), 3, "{listed}");
    assert_eq!(items[1]["label"], "auditor");
    assert_eq!(
        items[1]["parent_key_id"],
        Value::Null,
        "made by the operator"
    );

    let bad = agentctl(&database, &["keys", "create", id, "--scope", "admin"]).await;
    assert!(
        !bad.success && bad.stderr.contains("the scopes are"),
        "{}",
        bad.stderr
    );

    // Rotating the first key revokes what it made, not what the operator made.
    let first_id = agent["key"]["id"].as_str().expect("first key id");
    let revoked = agentctl(&database, &["keys", "revoke", id, first_id])
        .await
        .json();
    assert_eq!(revoked["revoked_key_ids"].as_array().expect("ids").len(), 2);
    for gone in [key.as_str(), sub.as_str()] {
        assert_eq!(me(&server, gone).await.0, 401);
    }
    assert_eq!(me(&server, auditor).await.0, 200);
    let missing = agentctl(&database, &["keys", "revoke", id, first_id]).await;
    assert!(
        !missing.success && missing.stderr.contains("no live key"),
        "{}",
        missing.stderr
    );

    // The operator's creation and revocation, and the agent's own creation by its key.
    for (action, principal, rows) in [
        ("key_create", "cli%", 1),
        ("key_revoke", "cli%", 1),
        ("key_create", "key:key_%", 1),
    ] {
        let query = format!(
            "SELECT count(*) AS count FROM operator_audit WHERE action = '{action}' \
             AND operator LIKE '{principal}' AND target = 'agent:{id}'"
        );
        assert_eq!(
            count(&database, &query).await,
            rows,
            "{action} by {principal}"
        );
    }
}

/// One request a hammering client sent: when, relative to the revocation's answer, and its status.
struct Sent {
    after_the_answer: bool,
    status: u16,
}

#[tokio::test]
async fn a_parent_revoked_while_twenty_child_requests_are_in_flight_stops_them_all() {
    let database = TestDatabase::new().await;
    let servers = [
        Server::start_on(&database, &[]).await,
        Server::start_on(&database, &[]).await,
    ];
    let (key, _) = create_agent(&database, &["--phone", "--email"]).await;
    let (parent, parent_id) = made(
        &servers[0],
        &key,
        &["sms:read", "email:read", "keys:manage"],
    )
    .await;
    let mut children = Vec::new();
    for server in &servers {
        children.push(made(server, &parent, &["sms:read", "email:read"]).await.0);
    }

    // Twenty waits in flight, ten on each instance, each with a child key.
    let mut waits = Vec::new();
    for (server, child) in servers.iter().zip(&children) {
        for _ in 0..10 {
            let body = json!({"timeout": 30});
            waits.push(spawn_wait(server, "/v1/sms/wait-for-code", child, body));
        }
        waiting_for_route(server, "/v1/sms/wait-for-code", 10).await;
    }
    // And clients reading the inbox with the child keys without pause, on both instances.
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut readers = Vec::new();
    for (server, child) in servers.iter().zip(&children) {
        for _ in 0..2 {
            let request = server
                .client
                .get(server.url("/v1/email/inbox"))
                .bearer_auth(child);
            let (answered, stop) = (answered.clone(), stop.clone());
            readers.push(tokio::spawn(async move {
                let mut sent = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let after_the_answer = answered.load(std::sync::atomic::Ordering::SeqCst);
                    let request = request.try_clone().expect("a body-less request");
                    let status = request.send().await.expect("request").status().as_u16();
                    sent.push(Sent {
                        after_the_answer,
                        status,
                    });
                }
                sent
            }));
        }
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        revoke(&servers[1], &key, &parent_id).await,
        (204, Value::Null)
    );
    answered.store(true, std::sync::atomic::Ordering::SeqCst);
    let revoked = Instant::now();
    for wait in waits {
        let (status, body) = wait.await.expect("wait");
        assert_eq!(status, 401, "{body}");
    }
    assert!(
        revoked.elapsed() < WITHIN,
        "the waits ended in {:?}",
        revoked.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut before = 0;
    let mut after = 0;
    for reader in readers {
        for sent in reader.await.expect("reader") {
            if sent.after_the_answer {
                assert_eq!(
                    sent.status, 401,
                    "a request sent after the revocation's answer"
                );
                after += 1;
            } else {
                assert!([200, 401].contains(&sent.status), "{}", sent.status);
                before += sent.status.eq(&200) as usize;
            }
        }
    }
    assert!(
        before > 0 && after > 0,
        "{before} answered before, {after} after"
    );
    println!("{before} reads answered 200 before the revocation's answer, {after} refused after");
}

#[tokio::test]
async fn intents_mail_and_their_events_name_the_key_that_caused_them() {
    let database = TestDatabase::new().await;
    let server = crate::email::email_server(&database, &[]).await;
    let (key, agent) = create_agent(&database, &["--email", "--wallet"]).await;
    let agent_id = agent["id"].as_str().expect("id");
    let (child, child_id) = made(&server, &key, &["wallet:pay", "email:send"]).await;
    let (status, intent) = crate::wallet::send_amount(&server, &child, "1000000").await;
    assert_eq!(status, 200, "{intent}");
    let intent_id = intent["id"].as_str().expect("id");
    let sent = crate::email::send(&server, &child, crate::email::plain("a@example.com")).await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let message_id = sent.body["data"]["id"].as_str().expect("id");

    let shown = agentctl(&database, &["intents", "show", intent_id])
        .await
        .json();
    assert_eq!(shown["key_id"], child_id.as_str(), "{shown}");
    let events = agentctl(&database, &["events", "list", agent_id])
        .await
        .json();
    let created = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|event| event["type"] == "transfer_intent.created")
        .expect("the intent's event");
    assert_eq!(created["key_id"], child_id.as_str());
    let (_, feed) = server.get("/v1/events", Some(&key)).await;
    assert!(
        !feed.to_string().contains("key_id"),
        "agents read no key id in events"
    );
    let same_key = format!(
        "SELECT count(*) AS count FROM email_messages AS mail JOIN transfer_intents AS intent \
         ON intent.key_id = mail.key_id WHERE mail.id = '{message_id}' AND intent.id = '{intent_id}'"
    );
    assert_eq!(
        count(&database, &same_key).await,
        1,
        "the mail names the same key"
    );
}

#[tokio::test]
async fn a_rotation_revokes_what_the_first_key_made_but_not_the_operators_keys() {
    let (server, database) = Server::start().await;
    let (key, agent) = create_agent(&database, &[]).await;
    let id = agent["id"].as_str().expect("id");
    let (child, _) = made(&server, &key, &["keys:manage"]).await;
    let (grandchild, _) = made(&server, &child, &["agent:read"]).await;
    let operators = agentctl(&database, &["keys", "create", id, "--scope", "agent:read"])
        .await
        .json();
    let operators = operators["key"].as_str().expect("key");
    let rotated = agentctl(&database, &["agents", "rotate-key", id])
        .await
        .json();
    let new_key = rotated["agent_key"].as_str().expect("key");
    for gone in [key.as_str(), child.as_str(), grandchild.as_str()] {
        assert_eq!(me(&server, gone).await.0, 401);
    }
    for kept in [operators, new_key] {
        assert_eq!(me(&server, kept).await.0, 200);
    }
    let (_, new_me) = me(&server, new_key).await;
    assert_eq!(names(&new_me["key"]["scopes"]), SCOPES);
    assert_eq!(new_me["key"], rotated["agent"]["key"]);
}

/// Makes a key with `key` under `idempotency_key`: the status, the body and whether it was
/// answered `Idempotent-Replayed: true`.
async fn make_key_keyed(
    server: &Server,
    key: &str,
    idempotency_key: &str,
    body: Value,
) -> (u16, Value, bool) {
    crate::webhook_delivery::keyed(server, "/v1/keys", key, idempotency_key, body).await
}

#[tokio::test]
async fn a_key_made_again_under_its_idempotency_key_is_the_first_key_and_made_once() {
    let (server, database) = Server::start().await;
    let (key, _) = create_agent(&database, &["--email"]).await;
    let asked = json!({"label": "worker", "scopes": ["email:read"]});

    let (status, first, replayed) = make_key_keyed(&server, &key, "make-1", asked.clone()).await;
    assert_eq!((status, replayed), (201, false), "{first}");
    let (status, again, replayed) = make_key_keyed(&server, &key, "make-1", asked.clone()).await;
    assert_eq!((status, replayed), (201, true), "{again}");
    assert_eq!(again, first, "the first answer, its key included");
    let first_key = first["key"].as_str().expect("key");
    let (status, shown) = me(&server, first_key).await;
    assert_eq!(status, 200, "the key answered again authenticates: {shown}");
    assert_eq!(shown["key"]["id"], first["id"]);
    let (status, listed) = send(&server, reqwest::Method::GET, "/v1/keys", &key, None).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        listed["items"].as_array().map(Vec::len),
        Some(2),
        "the first key and one made: {listed}"
    );

    let other = json!({"label": "worker", "scopes": ["email:read"], "expires_in_seconds": 60});
    let (status, refused, _) = make_key_keyed(&server, &key, "make-1", other).await;
    assert_eq!(status, 409, "{refused}");
    assert!(refused["detail"].as_str().is_some(), "{refused}");

    // The same idempotency key under another agent key is another request.
    let (maker, _) = made(&server, &key, &["email:read", "keys:manage"]).await;
    let (status, by_other, replayed) = make_key_keyed(&server, &maker, "make-1", asked).await;
    assert_eq!((status, replayed), (201, false), "{by_other}");
    assert_ne!(by_other["id"], first["id"]);
    assert_ne!(by_other["key"], first["key"]);

    let (status, refused, _) = make_key_keyed(&server, &key, "", json!({"scopes": []})).await;
    assert_eq!(status, 422, "an empty idempotency key: {refused}");
}
