//! A passkey in software, for the console's ceremonies over plain HTTP: the authenticator's side
//! of WebAuthn (a P-256 key, `none` attestation, user presence and verification) as a browser
//! hands it to the page, so a test enrolls and signs in without a browser.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// User present, user verified.
const PRESENT_AND_VERIFIED: u8 = 0x01 | 0x04;
/// ... and attested credential data follows.
const WITH_CREDENTIAL: u8 = PRESENT_AND_VERIFIED | 0x40;

/// One discoverable credential of one authenticator.
pub struct SoftPasskey {
    key: SigningKey,
    credential_id: Vec<u8>,
    /// The user handle the relying party gave at registration, returned at every sign-in.
    user_handle: Option<String>,
    counter: u32,
    /// Whether the counter moves on at each signature; synced passkeys keep it at zero.
    counts: bool,
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A few CBOR items, enough for an attestation object and a COSE key.
fn cbor_head(major: u8, length: usize, out: &mut Vec<u8>) {
    let major = major << 5;
    match length {
        0..=23 => out.push(major | u8::try_from(length).expect("small")),
        24..=0xff => out.extend([major | 24, u8::try_from(length).expect("one byte")]),
        _ => {
            out.push(major | 25);
            out.extend(u16::try_from(length).expect("two bytes").to_be_bytes());
        }
    }
}

fn cbor_int(value: i64, out: &mut Vec<u8>) {
    if value >= 0 {
        cbor_head(0, usize::try_from(value).expect("small"), out);
    } else {
        cbor_head(1, usize::try_from(-1 - value).expect("small"), out);
    }
}

fn cbor_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    cbor_head(2, bytes.len(), out);
    out.extend_from_slice(bytes);
}

fn cbor_text(text: &str, out: &mut Vec<u8>) {
    cbor_head(3, text.len(), out);
    out.extend_from_slice(text.as_bytes());
}

impl SoftPasskey {
    pub fn new() -> Self {
        let secret: [u8; 32] = rand::random();
        Self {
            key: SigningKey::from_slice(&secret).expect("a scalar of P-256"),
            credential_id: rand::random::<[u8; 16]>().to_vec(),
            user_handle: None,
            counter: 0,
            counts: true,
        }
    }

    /// A passkey as the platforms that sync them make it: its counter always zero, so nothing
    /// but the relying party's own record tells one of its signatures used before.
    pub fn synced() -> Self {
        Self {
            counts: false,
            ..Self::new()
        }
    }

    /// The same credential's id and user handle, signed with another key: what someone who
    /// learned the id could send.
    pub fn impostor_of(other: &SoftPasskey) -> Self {
        Self {
            credential_id: other.credential_id.clone(),
            user_handle: other.user_handle.clone(),
            ..Self::new()
        }
    }

    fn cose_key(&self) -> Vec<u8> {
        let point = self.key.verifying_key().to_sec1_point(false);
        let (x, y) = (point.x().expect("x"), point.y().expect("y"));
        let mut out = Vec::new();
        cbor_head(5, 5, &mut out);
        for (label, value) in [(1, 2), (3, -7), (-1, 1)] {
            cbor_int(label, &mut out);
            cbor_int(value, &mut out);
        }
        cbor_int(-2, &mut out);
        cbor_bytes(x, &mut out);
        cbor_int(-3, &mut out);
        cbor_bytes(y, &mut out);
        out
    }

    fn client_data(kind: &str, challenge: &str, origin: &str) -> Vec<u8> {
        json!({"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": false})
            .to_string()
            .into_bytes()
    }

    /// The browser's answer to registration `options` (their `publicKey`), made at `origin`.
    pub fn register(&mut self, options: &Value, origin: &str) -> Value {
        let options = &options["publicKey"];
        let rp_id = options["rp"]["id"].as_str().expect("rp id");
        self.user_handle = options["user"]["id"].as_str().map(str::to_owned);
        let mut data = Sha256::digest(rp_id.as_bytes()).to_vec();
        data.push(WITH_CREDENTIAL);
        data.extend(self.counter.to_be_bytes());
        data.extend([0u8; 16]);
        data.extend(
            u16::try_from(self.credential_id.len())
                .expect("short")
                .to_be_bytes(),
        );
        data.extend(&self.credential_id);
        data.extend(self.cose_key());
        let mut attestation = Vec::new();
        cbor_head(5, 3, &mut attestation);
        cbor_text("fmt", &mut attestation);
        cbor_text("none", &mut attestation);
        cbor_text("attStmt", &mut attestation);
        cbor_head(5, 0, &mut attestation);
        cbor_text("authData", &mut attestation);
        cbor_bytes(&data, &mut attestation);
        let challenge = options["challenge"].as_str().expect("challenge");
        json!({
            "id": b64(&self.credential_id),
            "rawId": b64(&self.credential_id),
            "type": "public-key",
            "response": {
                "attestationObject": b64(&attestation),
                "clientDataJSON": b64(&Self::client_data("webauthn.create", challenge, origin)),
                "transports": ["internal"],
            },
            "extensions": {},
        })
    }

    /// The browser's answer to sign-in `options` at `origin`, the counter moved on.
    pub fn sign_in(&mut self, options: &Value, origin: &str) -> Value {
        let options = &options["publicKey"];
        let rp_id = options["rpId"].as_str().expect("rp id");
        if self.counts {
            self.counter += 1;
        }
        let mut data = Sha256::digest(rp_id.as_bytes()).to_vec();
        data.push(PRESENT_AND_VERIFIED);
        data.extend(self.counter.to_be_bytes());
        let challenge = options["challenge"].as_str().expect("challenge");
        let client_data = Self::client_data("webauthn.get", challenge, origin);
        let mut signed = data.clone();
        signed.extend(Sha256::digest(&client_data));
        let signature: Signature = self.key.sign(&signed);
        json!({
            "id": b64(&self.credential_id),
            "rawId": b64(&self.credential_id),
            "type": "public-key",
            "response": {
                "authenticatorData": b64(&data),
                "clientDataJSON": b64(&client_data),
                "signature": b64(signature.to_der().as_bytes()),
                "userHandle": self.user_handle,
            },
            "extensions": {},
        })
    }
}
