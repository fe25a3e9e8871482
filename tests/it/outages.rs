//! Provider outages, black-box: the email provider, the SMS provider and the chain node each go
//! down for a while and come back. Whatever arrived or was asked for meanwhile is carried through
//! once: nothing lost, nothing twice. Each test prints what was injected and what it came to.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use alloy_primitives::U256;
use futures_util::future::join_all;
use serde_json::{json, Value};
use test_support::TestDatabase;

use crate::email::{
    email_agent, email_server, get, message_reaching, now, plain, raw_mail, send, webhook_signed,
    DEADLINE, SECRET,
};
use crate::exactly_once::{all_settled, attempts, confirm_all, listed, SETTLE_DEADLINE};
use crate::onchain::{OnChain, Payer, RECIPIENT};
use crate::sms::{
    history, message_sid, phone_agent, spawn_wait, twilio_params, twilio_server, twilio_webhook,
    waiting_for, TOKEN,
};
use crate::support::fake_mail_api::FakeMailApi;
use crate::support::fake_twilio_api::FakeTwilioApi;
use crate::support::harness::{amount_of, Server};

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
        ("EMAIL_AGENT_SEND_BURST", "100"),
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
            message_sid(n as u64),
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
    let (sid, body) = (
        message_sid(1_000),
        "Your Google verification code is 640213",
    );
    api.receive(&sid, FROM, &number, body);
    let during = twilio_params(&sid, FROM, &number, body);
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
        let sid = message_sid(2_000 + n as u64);
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

/// The amount of the `round`th transfer of the `wallet`th payer: each different, so a transfer
/// paid twice or another's amount shows in the balances.
fn amount(wallet: usize, round: usize) -> u64 {
    u64::try_from(100 * (round + 1) + wallet).expect("a small amount")
}

/// Confirming an intent reads only the store (its state, its agent, the spend policy), never the
/// chain, so intents are confirmed while the node is down. Transfers sent just before the outage
/// are mined during it, where the service cannot read their receipts: they stay submitted until
/// the node is back.
#[tokio::test]
async fn a_chain_node_outage_holds_confirmed_transfers_then_executes_each_once() {
    const WALLETS: usize = 4;
    const CONFIRMED_WHILE_DOWN_PER_WALLET: usize = 4;
    const FUNDS: u64 = 1_000_000;
    let chain = OnChain::start().await;
    let servers = [chain.server(&[]).await, chain.server(&[]).await];
    // One at a time: anvil's funding account sends the minting transactions.
    let mut payers: Vec<Payer> = Vec::new();
    for _ in 0..WALLETS {
        payers.push(chain.payer(FUNDS).await);
    }
    let mut intents_of: Vec<Vec<String>> = vec![Vec::new(); WALLETS];

    chain.anvil.hold_mining().await;
    let mut sent_before = Vec::new();
    for (wallet, payer) in payers.iter().enumerate() {
        let id = chain
            .send(
                &servers[wallet % 2],
                payer,
                RECIPIENT,
                &amount(wallet, 0).to_string(),
            )
            .await;
        intents_of[wallet].push(id.clone());
        sent_before.push(id);
    }
    confirm_all(&chain, &sent_before).await;
    let mut hashes_before = Vec::new();
    for id in &sent_before {
        let submitted = chain.reaching(id, &["submitted"], SETTLE_DEADLINE).await;
        let hash = submitted["tx_hash"].as_str().expect("tx_hash").to_owned();
        chain.anvil.wait_for_pool(&hash).await;
        hashes_before.push(hash);
    }

    chain.node.go_down();
    chain.anvil.resume_mining().await;
    let mut confirmed_while_down = Vec::new();
    for round in 1..=CONFIRMED_WHILE_DOWN_PER_WALLET {
        for (wallet, payer) in payers.iter().enumerate() {
            let id = chain
                .send(
                    &servers[(wallet + round) % 2],
                    payer,
                    RECIPIENT,
                    &amount(wallet, round).to_string(),
                )
                .await;
            intents_of[wallet].push(id.clone());
            confirmed_while_down.push(id);
        }
    }
    confirm_all(&chain, &confirmed_while_down).await;
    // Both executors kept at it after the last confirmation, and met the outage each time.
    let cut_at_confirmation = chain.node.cut_requests();
    chain
        .node
        .wait_for_cut_requests(cut_at_confirmation + 20)
        .await;
    let cut_requests = chain.node.cut_requests();
    let executed_while_down = listed(&chain, "executed").await.len();
    let failed_while_down = listed(&chain, "failed").await.len();
    assert_eq!(
        (executed_while_down, failed_while_down),
        (0, 0),
        "a node that is down decides nothing"
    );
    assert_eq!(listed(&chain, "submitted").await.len(), sent_before.len());
    assert_eq!(
        listed(&chain, "confirmed").await.len(),
        confirmed_while_down.len()
    );
    for hash in &hashes_before {
        assert_eq!(
            chain.anvil.receipt(hash).await["status"],
            "0x1",
            "mined while the service could not see it"
        );
    }

    chain.node.come_back();
    let all = all_settled(&chain, SETTLE_DEADLINE).await;
    let confirmed = sent_before.len() + confirmed_while_down.len();
    assert_eq!(all.len(), confirmed);
    let executed: Vec<&Value> = all
        .iter()
        .filter(|intent| intent["status"] == "executed")
        .collect();
    let hashes = counted(
        executed
            .iter()
            .map(|intent| intent["tx_hash"].as_str().expect("tx_hash")),
    );
    let mut mined = 0;
    for payer in &payers {
        mined += chain.anvil.mined_nonce(&payer.address).await;
    }
    let mined = usize::try_from(mined).expect("a count");
    let executed_sum: u64 = executed.iter().map(|intent| amount_of(intent)).sum();
    let moved = chain.anvil.token_balance(&chain.token, RECIPIENT).await;
    let lost = confirmed - executed.len();
    // A transaction beyond one per intent, mined or merely recorded as executed twice.
    let duplicated = mined.saturating_sub(executed.len()) + (executed.len() - hashes.len());
    println!(
        "chain node outage: {} transfers sent before the node went down and mined while it was, \
         {} intents confirmed while down, {cut_requests} node requests cut; during it \
         {executed_while_down} executed and {failed_while_down} failed; after: {} of {confirmed} \
         executed, {lost} lost, {duplicated} duplicated ({mined} transactions mined, {moved} \
         tokens moved for an executed sum of {executed_sum})",
        sent_before.len(),
        confirmed_while_down.len(),
        executed.len(),
    );
    assert_eq!((lost, duplicated), (0, 0), "{all:?}");
    assert_eq!(
        hashes.len(),
        confirmed,
        "every transfer has its own transaction"
    );
    assert_eq!(mined, confirmed, "one transaction mined per transfer");
    assert_eq!(
        moved,
        U256::from(executed_sum),
        "the chain moved what was executed"
    );
    for (wallet, payer) in payers.iter().enumerate() {
        let mut nonces = Vec::new();
        for id in &intents_of[wallet] {
            let shown = chain.show(id).await;
            assert_eq!(attempts(&shown).len(), 1, "never replaced: {shown}");
            nonces.push(attempts(&shown)[0]["nonce"].as_u64().expect("a nonce"));
        }
        nonces.sort_unstable();
        let expected: Vec<u64> = (0..=CONFIRMED_WHILE_DOWN_PER_WALLET as u64).collect();
        assert_eq!(nonces, expected, "the wallet's nonces, each once");
        let paid: u64 = (0..=CONFIRMED_WHILE_DOWN_PER_WALLET)
            .map(|round| amount(wallet, round))
            .sum();
        assert_eq!(
            chain
                .anvil
                .token_balance(&chain.token, &payer.address)
                .await,
            U256::from(FUNDS - paid)
        );
    }
}
