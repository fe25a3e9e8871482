//! `TwilioSignatureVerifier` and `sign` against the examples Twilio publishes and against
//! webhooks altered after signing.

use ports::SmsWebhookVerifier;
use secrecy::SecretString;
use sms::{sign, TwilioSignatureVerifier};

use crate::SMS_WEBHOOK_URL;

const TOKEN: &str = "auth-token";

fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

fn verifier(token: &str) -> TwilioSignatureVerifier {
    TwilioSignatureVerifier::new(SecretString::from(token)).expect("a token")
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
    assert!(verifier("12345").verify(url, &posted, documented));
}

#[test]
fn an_sms_webhook_from_twilios_own_tests_verifies() {
    // The SMS request in the request-validator tests of Twilio's Ruby library.
    let url = "http://twiliotests.heroku.com/validate/sms";
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

    assert!(verifier("2bd9e9638872de601313dc77410d3b23").verify(
        url,
        &posted,
        "mxeiv65lEe0b8L6LdVw2jgJi8yw="
    ));
}

#[test]
fn a_webhook_signed_with_the_token_verifies() {
    let posted = inbound_sms();
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &posted);

    assert!(verifier(TOKEN).verify(SMS_WEBHOOK_URL, &posted, &signature));
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
    let verifier = verifier(TOKEN);

    let mut changed = posted.clone();
    for (name, value) in &mut changed {
        if name == "Body" {
            *value = "Your code is 000000 — café".to_owned();
        }
    }
    assert!(!verifier.verify(SMS_WEBHOOK_URL, &changed, &signature));

    let mut added = posted.clone();
    added.push((
        "MediaUrl0".to_owned(),
        "https://evil.example/x.png".to_owned(),
    ));
    assert!(!verifier.verify(SMS_WEBHOOK_URL, &added, &signature));

    let removed: Vec<_> = posted
        .iter()
        .filter(|(name, _)| name != "From")
        .cloned()
        .collect();
    assert!(!verifier.verify(SMS_WEBHOOK_URL, &removed, &signature));
}

#[test]
fn a_tampered_url_fails() {
    let posted = inbound_sms();
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &posted);
    let verifier = verifier(TOKEN);

    for url in [
        "http://agents.example.com/webhooks/sms/twilio",
        "https://agents.example.com/webhooks/sms/twilio/",
        "https://agents.example.com/webhooks/sms/twilio?agent=7",
        "https://evil.example/webhooks/sms/twilio",
    ] {
        assert!(!verifier.verify(url, &posted, &signature), "{url}");
    }
}

#[test]
fn another_token_fails() {
    let posted = inbound_sms();
    let signature = sign("another-token", SMS_WEBHOOK_URL, &posted);

    assert!(!verifier(TOKEN).verify(SMS_WEBHOOK_URL, &posted, &signature));
}

#[test]
fn a_mangled_signature_fails() {
    let posted = inbound_sms();
    let signature = sign(TOKEN, SMS_WEBHOOK_URL, &posted);
    let verifier = verifier(TOKEN);

    let truncated = &signature[..signature.len() - 2];
    let mut flipped = signature.clone().into_bytes();
    flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).expect("ASCII");
    for bad in [truncated, flipped.as_str(), "", "not base64!"] {
        assert!(!verifier.verify(SMS_WEBHOOK_URL, &posted, bad), "{bad:?}");
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

    let verifier = verifier(TOKEN);
    assert!(verifier.verify(SMS_WEBHOOK_URL, &reversed, &signature));
    assert!(verifier.verify(SMS_WEBHOOK_URL, &sorted, &signature));
}

#[test]
fn repeated_parameters_each_count_in_value_order() {
    let posted = params(&[("To", "+15550100123"), ("Body", "b"), ("Body", "a")]);
    // Computed by hand: base64(HMAC-SHA1("auth-token", url + "BodyaBodybTo+15550100123")).
    let expected = "LJO9DkCP9GR/DXRHz3dnZT5GkBc=";

    assert_eq!(sign(TOKEN, SMS_WEBHOOK_URL, &posted), expected);
    let verifier = verifier(TOKEN);
    let swapped = params(&[("Body", "a"), ("To", "+15550100123"), ("Body", "b")]);
    assert!(verifier.verify(SMS_WEBHOOK_URL, &swapped, expected));
    // Each repetition signs its name: one parameter holding both values is another request.
    let merged = params(&[("Body", "ab"), ("To", "+15550100123")]);
    assert!(!verifier.verify(SMS_WEBHOOK_URL, &merged, expected));
    let once = params(&[("Body", "a"), ("To", "+15550100123")]);
    assert!(!verifier.verify(SMS_WEBHOOK_URL, &once, expected));
}

#[test]
fn forms_twilio_never_posts_are_refused_whatever_their_signature() {
    let verifier = verifier(TOKEN);
    assert_eq!(verifier.refused_params(&inbound_sms()), None);
    let with_media = [
        inbound_sms(),
        params(&[
            ("MediaUrl0", "https://api.twilio.com/media/1"),
            ("MediaContentType0", "image/png"),
        ]),
    ]
    .concat();
    assert_eq!(verifier.refused_params(&with_media), None);
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
        assert!(verifier.refused_params(&form).is_some(), "{what}");
    }
}

#[test]
fn only_a_base64_sha1_could_be_a_signature() {
    let verifier = verifier(TOKEN);
    assert!(verifier.well_formed(&sign(TOKEN, SMS_WEBHOOK_URL, &inbound_sms())));
    for bad in ["", "nope", "AAAA", "0/KCTR6DLpKmkAf8muzZqo1nDgQ=0"] {
        assert!(!verifier.well_formed(bad), "{bad:?}");
    }
}
