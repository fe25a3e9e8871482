//! `SmsProvider` of `TwilioClient` against Twilio's Message list resource as wiremock plays it:
//! the request Twilio documents, its pages followed, and each kind of answer read as Twilio's
//! error reference means it.

use std::time::Duration;

use ports::{ProviderError, ProviderSms, SmsFlow, SmsProvider};
use serde_json::{json, Value};
use sms::TwilioClient;
use wiremock::matchers::{basic_auth, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::{
    account_path, client, number, settings, twilio_error, unreachable_client, ACCOUNT_SID,
    AUTH_TOKEN,
};

const NUMBER: &str = "+15550100123";

/// A message as Twilio lists it, with every documented field.
fn message(sid: &str, direction: &str, from: &str, body: &str, date: &str) -> Value {
    json!({
        "account_sid": ACCOUNT_SID,
        "api_version": "2010-04-01",
        "body": body,
        "date_created": date,
        "date_sent": date,
        "date_updated": date,
        "direction": direction,
        "error_code": null,
        "error_message": null,
        "from": from,
        "messaging_service_sid": null,
        "num_media": "0",
        "num_segments": "1",
        "price": null,
        "price_unit": "USD",
        "sid": sid,
        "status": if direction == "inbound" { "received" } else { "delivered" },
        "subresource_uris": {
            "media": account_path(&format!("Messages/{sid}/Media.json")),
        },
        "to": NUMBER,
        "uri": account_path(&format!("Messages/{sid}.json")),
    })
}

/// A page of Twilio's list, pointing to `next_page_uri` when there is more.
fn page(messages: Vec<Value>, page_size: usize, next_page_uri: Option<&str>) -> Value {
    let first = format!(
        "{}?To=%2B15550100123&PageSize={page_size}&Page=0",
        account_path("Messages.json")
    );
    json!({
        "end": messages.len().saturating_sub(1),
        "first_page_uri": first,
        "messages": messages,
        "next_page_uri": next_page_uri,
        "page": 0,
        "page_size": page_size,
        "previous_page_uri": null,
        "start": 0,
        "uri": first,
    })
}

fn second_page_uri() -> String {
    format!(
        "{}?To=%2B15550100123&PageSize=3&Page=1&PageToken=PASM0002",
        account_path("Messages.json")
    )
}

/// Answers every list request with `response`.
async fn answering(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(account_path("Messages.json")))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

async fn recent(client: &TwilioClient, limit: usize) -> Result<Vec<ProviderSms>, ProviderError> {
    client.recent_messages(&number(NUMBER), limit).await
}

#[tokio::test]
async fn messages_to_the_number_are_read_across_pages_newest_first() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(account_path("Messages.json")))
        .and(basic_auth(ACCOUNT_SID, AUTH_TOKEN))
        .and(query_param("To", NUMBER))
        .and(query_param("PageSize", "3"))
        .and(query_param_is_missing("PageToken"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(
            vec![
                message(
                    "SM00000000000000000000000000000003",
                    "inbound",
                    "+15017122661",
                    "Your code is 481516",
                    "Sat, 21 Nov 2026 10:00:00 +0000",
                ),
                message(
                    "SM00000000000000000000000000000002",
                    "outbound-api",
                    "+15550100999",
                    "Grüße — 日本語",
                    "Fri, 20 Nov 2026 23:59:59 +0000",
                ),
            ],
            3,
            Some(&second_page_uri()),
        )))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(account_path("Messages.json")))
        .and(basic_auth(ACCOUNT_SID, AUTH_TOKEN))
        .and(query_param("To", NUMBER))
        .and(query_param("Page", "1"))
        .and(query_param("PageToken", "PASM0002"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(
            vec![message(
                "SM00000000000000000000000000000001",
                "outbound-reply",
                "+15550100998",
                "",
                "Thu, 19 Nov 2026 08:30:00 +0000",
            )],
            3,
            None,
        )))
        .expect(1)
        .mount(&server)
        .await;

    let messages = recent(&client(&server), 3).await.expect("read");

    assert_eq!(
        messages,
        vec![
            ProviderSms {
                provider_message_id: "SM00000000000000000000000000000003".to_owned(),
                flow: SmsFlow::Inbound,
                from: "+15017122661".to_owned(),
                to: NUMBER.to_owned(),
                body: "Your code is 481516".to_owned(),
                received_at: Some("2026-11-21T10:00:00Z".to_owned()),
            },
            ProviderSms {
                provider_message_id: "SM00000000000000000000000000000002".to_owned(),
                flow: SmsFlow::Outbound,
                from: "+15550100999".to_owned(),
                to: NUMBER.to_owned(),
                body: "Grüße — 日本語".to_owned(),
                received_at: Some("2026-11-20T23:59:59Z".to_owned()),
            },
            ProviderSms {
                provider_message_id: "SM00000000000000000000000000000001".to_owned(),
                flow: SmsFlow::Outbound,
                from: "+15550100998".to_owned(),
                to: NUMBER.to_owned(),
                body: String::new(),
                received_at: Some("2026-11-19T08:30:00Z".to_owned()),
            },
        ]
    );
}

#[tokio::test]
async fn reading_stops_at_the_limit_without_the_next_page() {
    let server = MockServer::start().await;
    let listed = (1..=3)
        .rev()
        .map(|n| {
            message(
                &format!("SM0000000000000000000000000000000{n}"),
                "inbound",
                "+15017122661",
                "hi",
                "Sat, 21 Nov 2026 10:00:00 +0000",
            )
        })
        .collect();
    Mock::given(method("GET"))
        .and(path(account_path("Messages.json")))
        .and(query_param("PageSize", "2"))
        .and(query_param_is_missing("PageToken"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(
            listed,
            2,
            Some(&second_page_uri()),
        )))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(query_param("PageToken", "PASM0002"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec![], 2, None)))
        .expect(0)
        .mount(&server)
        .await;

    let messages = recent(&client(&server), 2).await.expect("read");

    let ids: Vec<_> = messages
        .iter()
        .map(|m| m.provider_message_id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "SM00000000000000000000000000000003",
            "SM00000000000000000000000000000002"
        ]
    );
}

#[tokio::test]
async fn a_page_is_at_most_the_thousand_twilio_allows() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(account_path("Messages.json")))
        .and(query_param("PageSize", "1000"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec![], 1000, None)))
        .expect(1)
        .mount(&server)
        .await;

    let messages = recent(&client(&server), 5000).await.expect("read");

    assert!(messages.is_empty());
}

#[tokio::test]
async fn a_limit_of_zero_asks_nothing() {
    let server = MockServer::start().await;

    let messages = recent(&client(&server), 0).await.expect("read");

    assert!(messages.is_empty());
    let requests = server.received_requests().await.expect("recorded");
    assert!(requests.is_empty(), "{requests:?}");
}

#[tokio::test]
async fn fields_twilio_leaves_null_are_empty() {
    let mut redacted = message(
        "SM00000000000000000000000000000009",
        "inbound",
        "+15017122661",
        "",
        "",
    );
    redacted["body"] = Value::Null;
    redacted["date_created"] = Value::Null;
    let server =
        answering(ResponseTemplate::new(200).set_body_json(page(vec![redacted], 1, None))).await;

    let messages = recent(&client(&server), 1).await.expect("read");

    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].body, "");
    assert_eq!(messages[0].received_at, None);
}

#[tokio::test]
async fn refusals_carry_twilios_code_and_message() {
    let cases = [
        (401, 20003, "Authenticate"),
        (403, 20403, "Forbidden"),
        (404, 20404, "The requested resource was not found"),
        (400, 21211, "Invalid 'To' Phone Number"),
    ];
    for (status, code, text) in cases {
        let server = answering(
            ResponseTemplate::new(status).set_body_json(twilio_error(status, code, text)),
        )
        .await;
        let error = recent(&client(&server), 10).await.expect_err("refused");
        match error {
            ProviderError::Refused(reason) => {
                assert!(reason.contains(&code.to_string()), "{reason}");
                assert!(reason.contains(text), "{reason}");
            }
            other => panic!("{status}: expected a refusal, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn rate_limits_and_server_trouble_may_pass() {
    let answers = [
        ResponseTemplate::new(429).set_body_json(twilio_error(429, 20429, "Too Many Requests")),
        ResponseTemplate::new(503).set_body_json(twilio_error(503, 20503, "Service Unavailable")),
        ResponseTemplate::new(502).set_body_string("<html>Bad gateway</html>"),
        ResponseTemplate::new(200).set_body_string("not json"),
    ];
    for answer in answers {
        let server = answering(answer).await;
        let error = recent(&client(&server), 10).await.expect_err("not read");
        assert!(matches!(error, ProviderError::Unavailable(_)), "{error:?}");
    }
}

#[tokio::test]
async fn trouble_on_a_later_page_fails_the_read() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(query_param_is_missing("PageToken"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(
            vec![message(
                "SM00000000000000000000000000000003",
                "inbound",
                "+15017122661",
                "hi",
                "Sat, 21 Nov 2026 10:00:00 +0000",
            )],
            3,
            Some(&second_page_uri()),
        )))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(query_param("PageToken", "PASM0002"))
        .respond_with(ResponseTemplate::new(503).set_body_json(twilio_error(
            503,
            20503,
            "Unavailable",
        )))
        .mount(&server)
        .await;

    let error = recent(&client(&server), 3).await.expect_err("not read");

    assert!(matches!(error, ProviderError::Unavailable(_)), "{error:?}");
}

#[tokio::test]
async fn an_answer_later_than_the_timeout_may_pass() {
    let server = answering(
        ResponseTemplate::new(200)
            .set_body_json(page(vec![], 10, None))
            .set_delay(Duration::from_secs(3)),
    )
    .await;
    let client =
        TwilioClient::new(settings(&server.uri(), Duration::from_millis(200))).expect("client");

    let error = recent(&client, 10).await.expect_err("timed out");

    assert!(matches!(error, ProviderError::Unavailable(_)), "{error:?}");
}

#[tokio::test]
async fn an_api_that_is_not_there_may_pass() {
    let error = recent(&unreachable_client(), 10)
        .await
        .expect_err("unreachable");

    assert!(matches!(error, ProviderError::Unavailable(_)), "{error:?}");
}
