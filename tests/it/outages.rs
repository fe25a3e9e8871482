//! Provider outages, black-box: the email provider, the SMS provider and the chain node each go
//! down for a while and come back. Whatever arrived or was asked for meanwhile is carried through
//! once: nothing lost, nothing twice. Each test prints what was injected and what it came to.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::email::{
    email_agent, email_server, get, message_reaching, now, plain, raw_mail, send, webhook_signed,
    DEADLINE, SECRET,
};
use crate::fake_mail_api::FakeMailApi;
use crate::fake_twilio_api::FakeTwilioApi;
use crate::harness::Server;
use crate::sms::{
    history, phone_agent, spawn_wait, twilio_params, twilio_server, twilio_webhook, waiting_for,
    TOKEN,
};

/// How many of `expected` are missing from `times` (what was counted, by key), and how many
/// extra times the others were counted.
fn lost_and_duplicated(expected: &[String], times: &HashMap<String, usize>) -> (usize, usize) {
    let lost = expected
        .iter()
        .filter(|key| times.get(*key).copied().unwrap_or(0) == 0)
        .count();
    let duplicated = times.values().map(|n| n.saturating_sub(1)).sum();
    (lost, duplicated)
}

/// How many times each key occurs.
fn counted<'a>(keys: impl IntoIterator<Item = &'a str>) -> HashMap<String, usize> {
    let mut times = HashMap::new();
    for key in keys {
        *times.entry(key.to_owned()).or_insert(0) += 1;
    }
    times
}

/// The agent's inbound mail, by `Message-ID`: how many times each is stored.
async fn inbound_mail(server: &Server, key: &str) -> HashMap<String, usize> {
    let (status, inbox) = get(server, "/v1/email/inbox?direction=inbound&limit=100", key).await;
    assert_eq!(status, 200, "{inbox}");
    let items = inbox["items"].as_array().expect("items");
    counted(
        items
            .iter()
            .map(|item| item["internet_message_id"].as_str().expect("a Message-ID")),
    )
}

#[tokio::test]
async fn an_email_provider_outage_delays_mail_and_loses_none_then_two_instances_send_each_once() {
    const SENT_WHILE_DOWN: usize = 20;
    const INBOUND_WHILE_DOWN: usize = 3;
    let database = TestDatabase::new().await;
    let api = FakeMailApi::start().await;
    let provider = [
        ("EMAIL_PROVIDER", "resend"),
        ("RESEND_API_KEY", "re_test_key"),
        ("RESEND_BASE_URL", api.url.as_str()),
        ("EMAIL_SEND_BURST", "100"),
    ];
    let first = email_server(&database, &provider).await;
    let second = email_server(&database, &provider).await;
    let (key, address) = email_agent(&database, "acme").await;

    api.go_down();
    let mut ids = Vec::new();
    for n in 0..SENT_WHILE_DOWN {
        let server = if n % 2 == 0 { &first } else { &second };
        let answer = send(server, &key, plain(&format!("r{n}@example.com"))).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        ids.push(answer.body["data"]["id"].as_str().expect("id").to_owned());
    }
    // Inbound mail needs nothing of the provider's API: it is stored while the API is down, once
    // however often the provider's webhook delivers it.
    let mut inbound_ids = Vec::new();
    for n in 0..INBOUND_WHILE_DOWN {
        let message_id = format!("<outage-{n}@example.org>");
        let mail = raw_mail(
            "alice@example.org",
            &address,
            "During the outage",
            &message_id,
            "Your code is 123456",
        );
        for server in [&first, &second] {
            let (status, stored) = webhook_signed(
                server,
                SECRET,
                &format!("msg_outage_{n}"),
                now(),
                "message/rfc822",
                &mail,
            )
            .await;
            assert_eq!(status, 200, "{stored}");
        }
        inbound_ids.push(message_id);
    }
    // Two hand-offs of each message refused: the outbox met the outage and kept trying.
    let started = Instant::now();
    while api.requests() < 2 * SENT_WHILE_DOWN {
        assert!(started.elapsed() < DEADLINE, "the outbox never tried");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused_while_down = api.requests();
    for id in &ids {
        let (_, queued) = get(&first, &format!("/v1/email/messages/{id}"), &key).await;
        assert_eq!(queued["status"], "queued", "an outage keeps mail queued");
    }
    assert!(api.accepted().is_empty(), "the provider took nothing");
    let inbound_while_down = inbound_mail(&first, &key).await;
    api.come_back();

    for id in &ids {
        let sent = message_reaching(&first, &key, id, "sent").await;
        assert_eq!(sent["provider_message_id"], format!("re-{id}"));
        let body = api.body_of(id).expect("the provider has it");
        assert_eq!(body["headers"]["Message-ID"], sent["internet_message_id"]);
        assert_eq!(body["to"], sent["to"]);
    }
    let accepted = api.accepted();
    let (lost, duplicated) = lost_and_duplicated(&ids, &accepted);
    let inbound_after = inbound_mail(&second, &key).await;
    let (inbound_lost, inbound_duplicated) = lost_and_duplicated(&inbound_ids, &inbound_after);
    println!(
        "email provider outage: {} sends accepted while down ({refused_while_down} hand-offs \
         refused with 503), {} delivered after, {lost} lost, {duplicated} duplicated; \
         {INBOUND_WHILE_DOWN} inbound mails delivered twice each by webhook while down, {} \
         stored, {inbound_lost} lost, {inbound_duplicated} duplicated",
        ids.len(),
        accepted.len(),
        inbound_after.len(),
    );
    assert_eq!((lost, duplicated), (0, 0), "{accepted:?}");
    assert_eq!(accepted.len(), ids.len(), "nothing else was sent");
    assert_eq!(inbound_while_down, inbound_after, "stored while down");
    assert_eq!(
        (inbound_lost, inbound_duplicated),
        (0, 0),
        "{inbound_after:?}"
    );
    assert_eq!(inbound_after.len(), INBOUND_WHILE_DOWN);

    api.fail_next(3);
    let more: Vec<String> = join_all((0..30).map(|n| {
        let server = if n % 2 == 0 { &first } else { &second };
        let key = key.clone();
        async move {
            let answer = send(server, &key, plain(&format!("s{n}@example.com"))).await;
            assert_eq!(answer.status, 200, "{}", answer.body);
            answer.body["data"]["id"].as_str().expect("id").to_owned()
        }
    }))
    .await;
    for id in &more {
        message_reaching(&second, &key, id, "sent").await;
    }
    let accepted = api.accepted();
    assert_eq!(accepted.len(), ids.len() + more.len());
    assert!(accepted.values().all(|times| *times == 1), "{accepted:?}");
}

#[tokio::test]
async fn an_sms_provider_outage_serves_the_stored_history_stale_then_brings_in_what_arrived_once() {
    const DELIVERED_BEFORE: usize = 5;
    const ONLY_AT_THE_PROVIDER: usize = 5;
    const FROM: &str = "+15550004444";
    let database = TestDatabase::new().await;
    let api = FakeTwilioApi::start().await;
    let server = twilio_server(&database, &[("TWILIO_BASE_URL", api.url.as_str())]).await;
    let (key, number) = phone_agent(&database).await;
    let sids_stored = |messages: &Value| {
        counted(
            messages
                .as_array()
                .expect("a bare array")
                .iter()
                .map(|message| {
                    message["raw_payload"]["provider_message_id"]
                        .as_str()
                        .expect("a provider message id")
                }),
        )
    };

    // Twilio holds each message and posts it to the webhook.
    let mut webhooks = Vec::new();
    for n in 0..DELIVERED_BEFORE {
        let (sid, body) = (
            format!("SMbefore{n}"),
            format!("Your code is {}", 100_000 + n),
        );
        api.receive(&sid, FROM, &number, &body);
        webhooks.push(twilio_params(&sid, FROM, &number, &body));
    }
    for params in &webhooks {
        let delivered = twilio_webhook(&server, TOKEN, params).await;
        assert_eq!(delivered.status().as_u16(), 200);
    }
    let (sync, status, before) = history(&server, &key).await;
    assert_eq!((sync.as_deref(), status), (Some("synced"), 200), "{before}");
    assert_eq!(sids_stored(&before).len(), DELIVERED_BEFORE);

    api.go_down();
    let (sync, status, stale) = history(&server, &key).await;
    assert_eq!((sync.as_deref(), status), (Some("stale"), 200), "{stale}");
    assert_eq!(
        sids_stored(&stale),
        sids_stored(&before),
        "the stored state"
    );
    // A wait is woken by the webhook, which needs nothing of Twilio's API. It asks for Google's
    // code: the earlier messages, never seen, are no one's in particular.
    let waiting = spawn_wait(
        &server,
        "/v1/sms/wait-for-code",
        &key,
        json!({"timeout": 20, "service_name": "google"}),
    );
    waiting_for(&server, 1).await;
    let (sid, body) = ("SMduring", "Your Google verification code is 640213");
    api.receive(sid, FROM, &number, body);
    let during = twilio_params(sid, FROM, &number, body);
    let delivered = twilio_webhook(&server, TOKEN, &during).await;
    assert_eq!(delivered.status().as_u16(), 200);
    let (status, code) = waiting.await.expect("wait");
    assert_eq!(
        (status, code["code"].clone()),
        (200, json!("640213")),
        "{code}"
    );
    webhooks.push(during);
    // These reach Twilio, but their webhooks never reach the service.
    for n in 0..ONLY_AT_THE_PROVIDER {
        let sid = format!("SMunposted{n}");
        api.receive(
            &sid,
            FROM,
            &number,
            &format!("Your code is {}", 200_000 + n),
        );
    }
    // Twilio retries webhooks it is unsure of: each redelivery is answered and stored no more.
    for params in &webhooks {
        let redelivered = twilio_webhook(&server, TOKEN, params).await;
        assert_eq!(redelivered.status().as_u16(), 200);
    }
    let (sync, status, stale) = history(&server, &key).await;
    assert_eq!((sync.as_deref(), status), (Some("stale"), 200), "{stale}");
    let stored_while_down = sids_stored(&stale);
    assert_eq!(stored_while_down.len(), DELIVERED_BEFORE + 1, "{stale}");
    let refused_while_down = api.refused_while_down();
    assert!(
        refused_while_down >= 3,
        "every read and the wait met the outage"
    );

    api.come_back();
    let reads = join_all((0..4).map(|_| history(&server, &key))).await;
    for (sync, status, synced) in &reads {
        assert_eq!(
            (sync.as_deref(), *status),
            (Some("synced"), 200),
            "{synced}"
        );
        assert_eq!(sids_stored(synced), sids_stored(&reads[0].2));
    }
    let redelivered = twilio_webhook(&server, TOKEN, &webhooks[DELIVERED_BEFORE]).await;
    assert_eq!(redelivered.status().as_u16(), 200);
    let (sync, _, after) = history(&server, &key).await;
    assert_eq!(sync.as_deref(), Some("synced"));
    let at_the_provider = api.sids_to(&number);
    let stored_after = sids_stored(&after);
    let (lost, duplicated) = lost_and_duplicated(&at_the_provider, &stored_after);
    println!(
        "SMS provider outage: {} messages reached the provider while down (1 by webhook, which \
         woke a wait, and {ONLY_AT_THE_PROVIDER} whose webhooks never came), history read 200 \
         stale with the {} stored ({refused_while_down} provider calls refused with 503), {} \
         webhook redeliveries; after: {} stored of {} at the provider, {lost} lost, {duplicated} \
         duplicated",
        1 + ONLY_AT_THE_PROVIDER,
        stored_while_down.len(),
        webhooks.len() + 1,
        stored_after.len(),
        at_the_provider.len(),
    );
    assert_eq!((lost, duplicated), (0, 0), "{after}");
    assert_eq!(stored_after.len(), at_the_provider.len(), "{after}");
    let brought_in_by_sync = after
        .as_array()
        .expect("a bare array")
        .iter()
        .filter(|message| message["raw_payload"]["source"] == "sync")
        .count();
    assert_eq!(brought_in_by_sync, ONLY_AT_THE_PROVIDER, "{after}");
}
