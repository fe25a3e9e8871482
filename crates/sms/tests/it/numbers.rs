//! `NumberProvisioner` and `NumberReleaser` of `TwilioClient` against Twilio's phone-number
//! resources as wiremock plays them: the search, the purchase with its form, and the release.

use std::time::Duration;

use ports::{NumberProvisioner, NumberReleaser, ProviderError, ProvisionedNumber};
use serde_json::{json, Value};
use sms::TwilioClient;
use url::form_urlencoded;
use wiremock::matchers::{basic_auth, header, method, path, query_param};
use wiremock::{Match, Mock, MockBuilder, MockServer, Request, ResponseTemplate};

use crate::{
    account_path, client, number, settings, twilio_error, ACCOUNT_SID, AUTH_TOKEN, SMS_WEBHOOK_URL,
};

const OFFERED: &str = "+15005550006";
const NUMBER_SID: &str = "PN0123456789abcdef0123456789abcdef";

/// Matches a form body holding exactly `fields`, in any order.
struct FormBody(Vec<(&'static str, &'static str)>);

impl Match for FormBody {
    fn matches(&self, request: &Request) -> bool {
        let mut sent: Vec<(String, String)> =
            form_urlencoded::parse(&request.body).into_owned().collect();
        let mut wanted: Vec<(String, String)> = self
            .0
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        sent.sort();
        wanted.sort();
        sent == wanted
    }
}

/// Twilio's answer to a search of local numbers.
fn offer(numbers: &[&str], country: &str) -> Value {
    let available: Vec<Value> = numbers
        .iter()
        .map(|number| {
            json!({
                "friendly_name": "(500) 555-0006",
                "phone_number": number,
                "lata": "834",
                "locality": "Spring Valley",
                "rate_center": "SPRINGVLY",
                "latitude": "41.081400",
                "longitude": "-73.958500",
                "region": "NY",
                "postal_code": "10977",
                "iso_country": country,
                "address_requirements": "none",
                "beta": false,
                "capabilities": {"voice": true, "SMS": true, "MMS": true, "fax": false},
            })
        })
        .collect();
    json!({
        "available_phone_numbers": available,
        "uri": account_path(&format!("AvailablePhoneNumbers/{country}/Local.json?SmsEnabled=true&PageSize=1")),
    })
}

/// An IncomingPhoneNumber as Twilio shows it, the fields read and some around them.
fn incoming(sid: &str, phone_number: &str) -> Value {
    json!({
        "account_sid": ACCOUNT_SID,
        "sid": sid,
        "phone_number": phone_number,
        "friendly_name": "(500) 555-0006",
        "capabilities": {"voice": true, "sms": true, "mms": true, "fax": false},
        "sms_url": SMS_WEBHOOK_URL,
        "sms_method": "POST",
        "status": "in-use",
        "date_created": "Sat, 21 Nov 2026 10:00:00 +0000",
        "uri": account_path(&format!("IncomingPhoneNumbers/{sid}.json")),
    })
}

fn incoming_list(numbers: Vec<Value>) -> Value {
    json!({
        "end": numbers.len().saturating_sub(1),
        "first_page_uri": account_path("IncomingPhoneNumbers.json?PageSize=50&Page=0"),
        "incoming_phone_numbers": numbers,
        "next_page_uri": null,
        "page": 0,
        "page_size": 50,
        "previous_page_uri": null,
        "start": 0,
        "uri": account_path("IncomingPhoneNumbers.json?PageSize=50&Page=0"),
    })
}

async fn offering(server: &MockServer, country: &str, numbers: &[&str]) {
    Mock::given(method("GET"))
        .and(path(account_path(&format!(
            "AvailablePhoneNumbers/{country}/Local.json"
        ))))
        .and(basic_auth(ACCOUNT_SID, AUTH_TOKEN))
        .and(query_param("SmsEnabled", "true"))
        .and(query_param("PageSize", "1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(offer(numbers, country)))
        .expect(1)
        .mount(server)
        .await;
}

fn purchase() -> MockBuilder {
    Mock::given(method("POST")).and(path(account_path("IncomingPhoneNumbers.json")))
}

async fn holding(server: &MockServer, numbers: Vec<Value>) {
    Mock::given(method("GET"))
        .and(path(account_path("IncomingPhoneNumbers.json")))
        .and(basic_auth(ACCOUNT_SID, AUTH_TOKEN))
        .and(query_param("PhoneNumber", OFFERED))
        .respond_with(ResponseTemplate::new(200).set_body_json(incoming_list(numbers)))
        .expect(1)
        .mount(server)
        .await;
}

fn deletion() -> MockBuilder {
    Mock::given(method("DELETE")).and(path(account_path(&format!(
        "IncomingPhoneNumbers/{NUMBER_SID}.json"
    ))))
}

#[tokio::test]
async fn the_first_number_on_offer_is_bought_with_the_sms_webhook() {
    let server = MockServer::start().await;
    offering(&server, "US", &[OFFERED]).await;
    purchase()
        .and(basic_auth(ACCOUNT_SID, AUTH_TOKEN))
        .and(header("content-type", "application/x-www-form-urlencoded"))
        .and(FormBody(vec![
            ("PhoneNumber", OFFERED),
            ("SmsUrl", SMS_WEBHOOK_URL),
            ("SmsMethod", "POST"),
        ]))
        .respond_with(ResponseTemplate::new(201).set_body_json(incoming(NUMBER_SID, OFFERED)))
        .expect(1)
        .mount(&server)
        .await;

    let provisioned = client(&server).provision_number().await.expect("bought");

    assert_eq!(
        provisioned,
        ProvisionedNumber {
            number: number(OFFERED),
            country_iso2: Some("US".to_owned()),
            provider: "twilio".to_owned(),
        }
    );
}

#[tokio::test]
async fn numbers_are_searched_in_the_configured_country() {
    let server = MockServer::start().await;
    offering(&server, "GB", &["+447700900123"]).await;
    purchase()
        .and(FormBody(vec![
            ("PhoneNumber", "+447700900123"),
            ("SmsUrl", SMS_WEBHOOK_URL),
            ("SmsMethod", "POST"),
        ]))
        .respond_with(
            ResponseTemplate::new(201).set_body_json(incoming(NUMBER_SID, "+447700900123")),
        )
        .expect(1)
        .mount(&server)
        .await;
    let settings = settings(&server.uri(), Duration::from_secs(5))
        .with_country("gb")
        .expect("ISO2");

    let provisioned = TwilioClient::new(settings)
        .expect("client")
        .provision_number()
        .await
        .expect("bought");

    assert_eq!(provisioned.number, number("+447700900123"));
    assert_eq!(provisioned.country_iso2.as_deref(), Some("GB"));
}

#[tokio::test]
async fn no_number_on_offer_is_refused_and_nothing_bought() {
    let server = MockServer::start().await;
    offering(&server, "US", &[]).await;
    purchase()
        .respond_with(ResponseTemplate::new(201))
        .expect(0)
        .mount(&server)
        .await;

    let error = client(&server).provision_number().await.expect_err("none");

    assert_eq!(
        error,
        ProviderError::Refused("no number available in US".to_owned())
    );
}

#[tokio::test]
async fn a_refused_purchase_carries_twilios_reason() {
    let server = MockServer::start().await;
    offering(&server, "US", &[OFFERED]).await;
    purchase()
        .respond_with(ResponseTemplate::new(400).set_body_json(twilio_error(
            400,
            21422,
            "PhoneNumber is not available",
        )))
        .expect(1)
        .mount(&server)
        .await;

    let error = client(&server)
        .provision_number()
        .await
        .expect_err("refused");

    match error {
        ProviderError::Refused(reason) => {
            assert!(reason.contains("21422"), "{reason}");
            assert!(reason.contains("PhoneNumber is not available"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_number_is_released_by_deleting_the_one_that_matches_exactly() {
    let server = MockServer::start().await;
    // Twilio's filter matches parts of numbers too: the longer one must be left alone.
    holding(
        &server,
        vec![
            incoming("PNffffffffffffffffffffffffffffffff", "+150055500061"),
            incoming(NUMBER_SID, OFFERED),
        ],
    )
    .await;
    deletion()
        .and(basic_auth(ACCOUNT_SID, AUTH_TOKEN))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .mount(&server)
        .await;

    client(&server)
        .release_number(&number(OFFERED))
        .await
        .expect("released");
}

#[tokio::test]
async fn a_number_already_released_is_left_as_it_is() {
    let server = MockServer::start().await;
    holding(&server, vec![]).await;
    Mock::given(method("DELETE"))
        .respond_with(ResponseTemplate::new(204))
        .expect(0)
        .mount(&server)
        .await;

    client(&server)
        .release_number(&number(OFFERED))
        .await
        .expect("nothing to release");
}

#[tokio::test]
async fn a_number_released_meanwhile_counts_as_released() {
    let server = MockServer::start().await;
    holding(&server, vec![incoming(NUMBER_SID, OFFERED)]).await;
    deletion()
        .respond_with(ResponseTemplate::new(404).set_body_json(twilio_error(
            404,
            20404,
            "The requested resource was not found",
        )))
        .expect(1)
        .mount(&server)
        .await;

    client(&server)
        .release_number(&number(OFFERED))
        .await
        .expect("released meanwhile");
}

#[tokio::test]
async fn trouble_while_releasing_may_pass() {
    let server = MockServer::start().await;
    holding(&server, vec![incoming(NUMBER_SID, OFFERED)]).await;
    deletion()
        .respond_with(ResponseTemplate::new(503).set_body_json(twilio_error(
            503,
            20503,
            "Unavailable",
        )))
        .expect(1)
        .mount(&server)
        .await;

    let error = client(&server)
        .release_number(&number(OFFERED))
        .await
        .expect_err("not released");

    assert!(matches!(error, ProviderError::Unavailable(_)), "{error:?}");
}
