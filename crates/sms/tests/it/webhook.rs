//! `TwilioWebhook` through the `InboundSmsWebhook` port, and `sign`, against the examples Twilio
//! publishes and against webhooks altered after signing.

use ports::{
    InboundSmsWebhook, ProviderSms, ProviderWebhookHeaders, ProviderWebhookRefusal,
    ProviderWebhookRequest, SmsFlow,
};
use secrecy::SecretString;
use sms::{sign, TwilioWebhook};

use crate::SMS_WEBHOOK_URL;

const TOKEN: &str = "auth-token";
/// `SMS_WEBHOOK_URL`, as the public base URL and the path Twilio posts to.
const PUBLIC: &str = "https://agents.example.com";
const PATH: &str = "/webhooks/sms/twilio";

fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

fn webhook(token: &str) -> TwilioWebhook {
    webhook_at(token, PUBLIC)
}

fn webhook_at(token: &str, public_base_url: &str) -> TwilioWebhook {
    TwilioWebhook::new(SecretString::from(token), public_base_url.to_owned()).expect("a token")
}

/// `params` posted as a form to `path_and_query`, with `signature`.
fn posted(
    path_and_query: &str,
    params: &[(String, String)],
    signature: &str,
) -> ProviderWebhookRequest {
    ProviderWebhookRequest {
        path_and_query: path_and_query.to_owned(),
        headers: ProviderWebhookHeaders::new([(
            "x-twilio-signature".to_owned(),
            signature.to_owned(),
        )]),
        body: serde_urlencoded::to_string(params)
            .expect("a form")
            .into_bytes(),
    }
}

/// Whether the webhook takes `signature` as Twilio's (whatever it then makes of the form).
fn verifies(
    webhook: &TwilioWebhook,
    path_and_query: &str,
    params: &[(String, String)],
    signature: &str,
) -> bool {
    !matches!(
        webhook.receive(posted(path_and_query, params, signature)),
        Err(ProviderWebhookRefusal::Signature(_))
    )
}

/// What the webhook makes of `form` signed as Twilio signs it.
fn received(form: &[(String, String)]) -> Result<ProviderSms, ProviderWebhookRefusal> {
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, form);
    webhook(TOKEN).receive(posted(PATH, form, &signature))
}

/// An inbound SMS as Twilio posts it.
fn inbound_sms() -> Vec<(String, String)> {
    params(&[
        ("ToCountry", "US"),
        ("SmsMessageSid", "SM00000000000000000000000000000003"),
        ("NumMedia", "0"),
        ("SmsSid", "SM00000000000000000000000000000003"),
        ("SmsStatus", "received"),
        ("Body", "Your code is 481516 — café"),
        ("To", "+15550100123"),
        ("NumSegments", "1"),
        ("MessageSid", "SM00000000000000000000000000000003"),
        ("AccountSid", "AC0123456789abcdef0123456789abcdef"),
        ("From", "+15017122661"),
        ("ApiVersion", "2010-04-01"),
    ])
}

#[test]
fn twilios_documented_example_verifies() {
    // The worked example of Twilio's webhook security page.
    let url = "https://mycompany.com/myapp.php?foo=1&bar=2";
    let posted = params(&[
        ("CallSid", "CA1234567890ABCDE"),
        ("Caller", "+12349013030"),
        ("Digits", "1234"),
        ("From", "+12349013030"),
        ("To", "+18005551212"),
    ]);
    let documented = "0/KCTR6DLpKmkAf8muzZqo1nDgQ=";

    assert_eq!(sign("12345", url, &posted), documented);
    let webhook = webhook_at("12345", "https://mycompany.com");
    assert!(verifies(
        &webhook,
        "/myapp.php?foo=1&bar=2",
        &posted,
        documented
    ));
}

#[test]
fn an_sms_webhook_from_twilios_own_tests_verifies() {
    // The SMS request in the request-validator tests of Twilio's Ruby library.
    let posted = params(&[
        ("ToState", "CA"),
        ("FromState", "CA"),
        ("AccountSid", "ACba8bc05eacf94afdae398e642c9cc32d"),
        ("SmsMessageSid", "SM2003cbd5e6a3701999aa3e5f20ff2787"),
        ("Body", "Orly"),
        ("From", "+14159354345"),
        ("FromCity", "SAN FRANCISCO"),
        ("SmsStatus", "received"),
        ("FromZip", "94107"),
        ("FromCountry", "US"),
        ("To", "+14158141819"),
        ("ToCity", "SAN FRANCISCO"),
        ("ToZip", "94105"),
        ("ToCountry", "US"),
        ("ApiVersion", "2010-04-01"),
        ("SmsSid", "SM2003cbd5e6a3701999aa3e5f20ff2787"),
    ]);

    let webhook = webhook_at(
        "2bd9e9638872de601313dc77410d3b23",
        "http://twiliotests.heroku.com",
    );
    assert!(verifies(
        &webhook,
        "/validate/sms",
        &posted,
        "mxeiv65lEe0b8L6LdVw2jgJi8yw="
    ));
}

#[test]
fn a_webhook_signed_with_the_token_verifies() {
    let posted = inbound_sms();
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &posted);

    assert!(verifies(&webhook(TOKEN), PATH, &posted, &signature));
}

#[test]
fn a_webhook_without_parameters_signs_its_url_alone() {
    // Computed by hand: base64(HMAC-SHA1("auth-token", url)).
    assert_eq!(
        sign(TOKEN, SMS_WEBHOOK_URL, &[]),
        "S6LS22jIveUskomnFmEYmnNQggM="
    );
}

#[test]
fn a_tampered_parameter_fails() {
    let posted = inbound_sms();
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &posted);
    let webhook = webhook(TOKEN);

    let mut changed = posted.clone();
    for (name, value) in &mut changed {
        if name == "Body" {
            *value = "Your code is 000000 — café".to_owned();
        }
    }
    assert!(!verifies(&webhook, PATH, &changed, &signature));

    let mut added = posted.clone();
    added.push((
        "MediaUrl0".to_owned(),
        "https://evil.example/x.png".to_owned(),
    ));
    assert!(!verifies(&webhook, PATH, &added, &signature));

    let removed: Vec<_> = posted
        .iter()
        .filter(|(name, _)| name != "From")
        .cloned()
        .collect();
    assert!(!verifies(&webhook, PATH, &removed, &signature));
}

#[test]
fn a_tampered_url_fails() {
    let posted = inbound_sms();
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &posted);

    for (public, path) in [
        ("http://agents.example.com", PATH),
        (PUBLIC, "/webhooks/sms/twilio/"),
        (PUBLIC, "/webhooks/sms/twilio?agent=7"),
        ("https://evil.example", PATH),
    ] {
        let webhook = webhook_at(TOKEN, public);
        assert!(
            !verifies(&webhook, path, &posted, &signature),
            "{public}{path}"
        );
    }
}

#[test]
fn another_token_fails() {
    let posted = inbound_sms();
    let signature = sign("another-token", SMS_WEBHOOK_URL, &posted);

    assert!(!verifies(&webhook(TOKEN), PATH, &posted, &signature));
}

#[test]
fn a_mangled_signature_fails() {
    let posted = inbound_sms();
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &posted);
    let webhook = webhook(TOKEN);

    let truncated = &signature[..signature.len() - 2];
    let mut flipped = signature.clone().into_bytes();
    flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).expect("ASCII");
    for bad in [truncated, flipped.as_str(), "", "not base64!"] {
        assert!(!verifies(&webhook, PATH, &posted, bad), "{bad:?}");
    }
}

#[test]
fn the_order_parameters_arrive_in_does_not_matter() {
    let posted = inbound_sms();
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &posted);
    let mut reversed = posted.clone();
    reversed.reverse();
    let mut sorted = posted;
    sorted.sort();

    let webhook = webhook(TOKEN);
    assert!(verifies(&webhook, PATH, &reversed, &signature));
    assert!(verifies(&webhook, PATH, &sorted, &signature));
}

#[test]
fn repeated_parameters_each_count_in_value_order() {
    let posted = params(&[("To", "+15550100123"), ("Body", "b"), ("Body", "a")]);
    // Computed by hand: base64(HMAC-SHA1("auth-token", url + "BodyaBodybTo+15550100123")).
    let expected = "LJO9DkCP9GR/DXRHz3dnZT5GkBc=";

    assert_eq!(sign(TOKEN, SMS_WEBHOOK_URL, &posted), expected);
    let webhook = webhook(TOKEN);
    let swapped = params(&[("Body", "a"), ("To", "+15550100123"), ("Body", "b")]);
    assert!(verifies(&webhook, PATH, &swapped, expected));
    // Each repetition signs its name: one parameter holding both values is another request.
    let merged = params(&[("Body", "ab"), ("To", "+15550100123")]);
    assert!(!verifies(&webhook, PATH, &merged, expected));
    let once = params(&[("Body", "a"), ("To", "+15550100123")]);
    assert!(!verifies(&webhook, PATH, &once, expected));
}

#[test]
fn forms_twilio_never_posts_are_refused_whatever_their_signature() {
    assert_eq!(received(&inbound_sms()).map(drop), Ok(()));
    let with_media = [
        inbound_sms(),
        params(&[
            ("MediaUrl0", "https://api.twilio.com/media/1"),
            ("MediaContentType0", "image/png"),
        ]),
    ]
    .concat();
    assert_eq!(received(&with_media).map(drop), Ok(()));
    let merged: Vec<(String, String)> = inbound_sms()
        .into_iter()
        .filter(|(name, _)| name != "NumMedia")
        .map(|(name, value)| match name.as_str() {
            "MessageSid" => (name, format!("{value}NumMedia0")),
            _ => (name, value),
        })
        .collect();
    let unknown = [inbound_sms(), params(&[("Injected", "1")])].concat();
    let twice = [inbound_sms(), params(&[("Body", "again")])].concat();
    let alias: Vec<(String, String)> = inbound_sms()
        .into_iter()
        .map(|(name, value)| match name.as_str() {
            "SmsSid" => (name, "SM00000000000000000000000000000009".to_owned()),
            _ => (name, value),
        })
        .collect();
    let account: Vec<(String, String)> = inbound_sms()
        .into_iter()
        .map(|(name, value)| match name.as_str() {
            "AccountSid" => (name, "AC123".to_owned()),
            _ => (name, value),
        })
        .collect();
    for (what, form) in [
        ("merged", merged),
        ("unknown", unknown),
        ("twice", twice),
        ("alias", alias),
        ("account", account),
    ] {
        assert!(
            matches!(received(&form), Err(ProviderWebhookRefusal::Malformed(_))),
            "{what}"
        );
    }
}

#[test]
fn only_a_base64_sha1_could_be_a_signature() {
    let webhook = webhook(TOKEN);
    let signed = |signature: &str| {
        ProviderWebhookHeaders::new([("X-Twilio-Signature".to_owned(), signature.to_owned())])
    };
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &inbound_sms());
    assert_eq!(webhook.could_verify(&signed(&signature)), Ok(()));
    let refused = Err(ProviderWebhookRefusal::Signature(
        "Invalid X-Twilio-Signature".to_owned(),
    ));
    for bad in ["", "nope", "AAAA", "0/KCTR6DLpKmkAf8muzZqo1nDgQ=0"] {
        assert_eq!(webhook.could_verify(&signed(bad)), refused, "{bad:?}");
    }
    assert_eq!(
        webhook.could_verify(&ProviderWebhookHeaders::default()),
        refused
    );
}

#[test]
fn the_message_is_read_from_the_form() {
    assert_eq!(
        received(&inbound_sms()),
        Ok(ProviderSms {
            provider_message_id: "SM00000000000000000000000000000003".to_owned(),
            flow: SmsFlow::Inbound,
            from: "+15017122661".to_owned(),
            to: "+15550100123".to_owned(),
            body: "Your code is 481516 — café".to_owned(),
            received_at: None,
        })
    );
    let without_sender: Vec<(String, String)> = inbound_sms()
        .into_iter()
        .filter(|(name, _)| name != "From")
        .collect();
    assert_eq!(
        received(&without_sender),
        Err(ProviderWebhookRefusal::Malformed(
            "the webhook lacks From".to_owned()
        ))
    );
}
