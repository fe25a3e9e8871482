//! The challenge of a 402: version 2's `PAYMENT-REQUIRED` header (base64 of JSON) or its decoded
//! object, or version 1's JSON body; and the choice of the offer this service pays.

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, Engine};
use serde_json::{Map, Value};

use crate::json_bounds::json_items_within;
use crate::{AtomicAmount, EvmAddress};

/// The most bytes a challenge's JSON text may hold: a challenge is a few hundred bytes.
pub const MAX_CHALLENGE_BYTES: usize = 64 * 1024;
/// The most values and keys a challenge's JSON may hold.
const MAX_CHALLENGE_ITEMS: usize = 2_000;
/// The most `accepts` entries read; a challenge with more is refused.
pub const MAX_OFFERS: usize = 32;
/// The longest text of a field this service reads from an offer (a URL, a name).
const MAX_FIELD_CHARS: usize = 2_048;

/// Standard base64, its padding optional: what x402 writes, however a client copied it.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum X402Version {
    V1,
    V2,
}

impl X402Version {
    /// The request header a payment of this version travels in.
    pub fn payment_header(self) -> &'static str {
        match self {
            Self::V1 => "X-PAYMENT",
            Self::V2 => "PAYMENT-SIGNATURE",
        }
    }

    pub fn number(self) -> u8 {
        match self {
            Self::V1 => 1,
            Self::V2 => 2,
        }
    }
}

/// A challenge as the server wrote it: its version, version 2's `resource` object, and the
/// `accepts` entries, each kept whole so that the chosen one is echoed unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentChallenge {
    pub version: X402Version,
    pub resource: Option<Value>,
    pub offers: Vec<Map<String, Value>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChallengeError {
    #[error("payment_required is larger than {MAX_CHALLENGE_BYTES} bytes")]
    TooLarge,
    #[error("payment_required is neither a JSON object nor base64 of one")]
    NotBase64,
    #[error("payment_required is not a JSON object")]
    NotAnObject,
    #[error("payment_required holds more than {MAX_CHALLENGE_ITEMS} values")]
    TooManyItems,
    #[error("payment_required.x402Version must be 1 or 2")]
    UnknownVersion,
    #[error("payment_required.accepts must be a non-empty array of objects")]
    NoOffers,
    #[error("payment_required.accepts holds more than {MAX_OFFERS} entries")]
    TooManyOffers,
}

impl PaymentChallenge {
    /// A `PAYMENT-REQUIRED` header's value: base64 of the challenge's JSON.
    pub fn from_header(value: &str) -> Result<Self, ChallengeError> {
        let value = value.trim();
        // Base64 grows by a third: a longer text decodes to more than the bound.
        if value.len() > MAX_CHALLENGE_BYTES / 3 * 4 + 4 {
            return Err(ChallengeError::TooLarge);
        }
        let json = BASE64
            .decode(value)
            .map_err(|_| ChallengeError::NotBase64)?;
        Self::from_json(&json)
    }

    /// A challenge's JSON text: a decoded header, or version 1's body.
    pub fn from_json(text: &[u8]) -> Result<Self, ChallengeError> {
        if text.len() > MAX_CHALLENGE_BYTES {
            return Err(ChallengeError::TooLarge);
        }
        if !json_items_within(text, MAX_CHALLENGE_ITEMS) {
            return Err(ChallengeError::TooManyItems);
        }
        let value: Value = serde_json::from_slice(text).map_err(|_| ChallengeError::NotAnObject)?;
        Self::from_value(value)
    }

    /// What an agent handed over as `payment_required`: the header's value as a string, or the
    /// decoded object (version 2's, or version 1's body).
    pub fn from_value(value: Value) -> Result<Self, ChallengeError> {
        let Value::Object(mut challenge) = value else {
            return match value {
                Value::String(header) => Self::from_header(&header),
                _ => Err(ChallengeError::NotAnObject),
            };
        };
        let version = match challenge.get("x402Version").and_then(Value::as_u64) {
            Some(1) => X402Version::V1,
            Some(2) => X402Version::V2,
            _ => return Err(ChallengeError::UnknownVersion),
        };
        let Some(Value::Array(accepts)) = challenge.remove("accepts") else {
            return Err(ChallengeError::NoOffers);
        };
        if accepts.len() > MAX_OFFERS {
            return Err(ChallengeError::TooManyOffers);
        }
        let offers = accepts
            .into_iter()
            .map(|offer| match offer {
                Value::Object(offer) => Ok(offer),
                _ => Err(ChallengeError::NoOffers),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if offers.is_empty() {
            return Err(ChallengeError::NoOffers);
        }
        let resource = match version {
            X402Version::V2 => challenge.remove("resource").filter(Value::is_object),
            X402Version::V1 => None,
        };
        Ok(Self {
            version,
            resource,
            offers,
        })
    }

    /// The first offer this service can pay, or why none can.
    pub fn choose(&self, payable: &PayableBy) -> Result<ChosenOffer, NothingPayable> {
        let mut skipped = Vec::new();
        for (index, offer) in self.offers.iter().enumerate() {
            match self.read_offer(offer, payable) {
                Ok(chosen) => return Ok(chosen),
                Err(reason) => skipped.push(SkippedOffer { index, reason }),
            }
        }
        Err(NothingPayable(skipped))
    }

    /// The offer's terms, when this service can pay it; else the first reason it cannot.
    fn read_offer(
        &self,
        offer: &Map<String, Value>,
        payable: &PayableBy,
    ) -> Result<ChosenOffer, String> {
        let text = |field: &str| -> Result<&str, String> {
            match offer.get(field) {
                Some(Value::String(text)) if text.len() <= MAX_FIELD_CHARS => Ok(text),
                Some(Value::String(_)) => Err(format!("{field} is too long")),
                Some(_) => Err(format!("{field} is not a string")),
                None => Err(format!("{field} is missing")),
            }
        };
        let scheme = text("scheme")?;
        if scheme != "exact" {
            return Err(format!("scheme {scheme:?} is not \"exact\""));
        }
        let network = text("network")?;
        let expected = payable.network(self.version);
        if expected.as_deref() != Some(network) {
            return Err(match expected {
                Some(expected) => format!("network {network:?} is not {expected:?}"),
                None => format!(
                    "network {network:?}: a version 1 challenge names no network this service pays on"
                ),
            });
        }
        let asset = address(text("asset")?)
            .filter(|asset| *asset == payable.usdc)
            .ok_or_else(|| format!("asset is not the USDC contract {}", payable.usdc))?;
        let amount_field = match self.version {
            X402Version::V1 => "maxAmountRequired",
            X402Version::V2 => "amount",
        };
        let amount = AtomicAmount::parse(text(amount_field)?)
            .map_err(|error| format!("{amount_field}: {error}"))?;
        let pay_to =
            EvmAddress::parse(text("payTo")?).map_err(|error| format!("payTo: {error}"))?;
        let max_timeout_secs = offer
            .get("maxTimeoutSeconds")
            .and_then(Value::as_u64)
            .filter(|secs| *secs > 0)
            .ok_or("maxTimeoutSeconds is not a whole number of seconds above zero")?;
        let extra = offer.get("extra").and_then(Value::as_object);
        let extra_text = |field: &str| {
            extra
                .and_then(|extra| extra.get(field))
                .and_then(Value::as_str)
                .filter(|text| !text.is_empty() && text.len() <= MAX_FIELD_CHARS)
        };
        if let Some(method) = extra.and_then(|extra| extra.get("assetTransferMethod")) {
            if method.as_str() != Some("eip3009") {
                return Err(format!(
                    "extra.assetTransferMethod {method} is not \"eip3009\", the only one this service signs"
                ));
            }
        }
        let (Some(domain_name), Some(domain_version)) = (extra_text("name"), extra_text("version"))
        else {
            return Err(
                "extra.name and extra.version, the token's EIP-712 domain, are missing".to_owned(),
            );
        };
        let resource_url = match self.version {
            X402Version::V2 => self
                .resource
                .as_ref()
                .and_then(|resource| resource.get("url"))
                .and_then(Value::as_str),
            X402Version::V1 => offer.get("resource").and_then(Value::as_str),
        }
        .filter(|url| url.len() <= MAX_FIELD_CHARS)
        .map(str::to_owned);
        Ok(ChosenOffer {
            version: self.version,
            accepted: offer.clone(),
            resource: self.resource.clone(),
            resource_url,
            network: network.to_owned(),
            pay_to,
            asset,
            amount,
            max_timeout_secs,
            domain_name: domain_name.to_owned(),
            domain_version: domain_version.to_owned(),
        })
    }
}

/// An address whatever its case: servers write them checksummed, lower-case or upper-case.
fn address(text: &str) -> Option<EvmAddress> {
    EvmAddress::parse(&text.to_ascii_lowercase()).ok()
}

/// What this service pays with: USDC at `usdc`, on the chain `chain_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayableBy {
    pub chain_id: u64,
    pub usdc: EvmAddress,
}

impl PayableBy {
    /// The network's name in a challenge of `version`: CAIP-2 in version 2, the legacy name in
    /// version 1 (Base and Base Sepolia only have one here).
    pub fn network(&self, version: X402Version) -> Option<String> {
        match version {
            X402Version::V2 => Some(format!("eip155:{}", self.chain_id)),
            X402Version::V1 => match self.chain_id {
                8453 => Some("base".to_owned()),
                84532 => Some("base-sepolia".to_owned()),
                _ => None,
            },
        }
    }
}

/// The offer this service pays, as read, with the entry itself to echo in the payment.
#[derive(Debug, Clone, PartialEq)]
pub struct ChosenOffer {
    pub version: X402Version,
    pub accepted: Map<String, Value>,
    pub resource: Option<Value>,
    /// Version 2's `resource.url`, or version 1's entry's `resource`.
    pub resource_url: Option<String>,
    pub network: String,
    pub pay_to: EvmAddress,
    pub asset: EvmAddress,
    pub amount: AtomicAmount,
    pub max_timeout_secs: u64,
    pub domain_name: String,
    pub domain_version: String,
}

impl ChosenOffer {
    /// What a retry under the same idempotency key must ask again to be answered the same.
    pub fn terms(&self) -> X402Terms {
        X402Terms {
            pay_to: self.pay_to,
            asset: self.asset,
            amount: self.amount,
            network: self.network.clone(),
            resource_url: self.resource_url.clone(),
        }
    }
}

/// The payment terms an idempotency key is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct X402Terms {
    pub pay_to: EvmAddress,
    pub asset: EvmAddress,
    pub amount: AtomicAmount,
    pub network: String,
    pub resource_url: Option<String>,
}

/// An `accepts` entry not paid, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedOffer {
    pub index: usize,
    pub reason: String,
}

/// No entry of `accepts` can be paid here; each with why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no entry of accepts can be paid: {}", skipped_reasons(.0))]
pub struct NothingPayable(pub Vec<SkippedOffer>);

fn skipped_reasons(skipped: &[SkippedOffer]) -> String {
    skipped
        .iter()
        .map(|skipped| format!("accepts[{}]: {}", skipped.index, skipped.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    const PAY_TO: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";

    fn payable() -> PayableBy {
        PayableBy {
            chain_id: 84532,
            usdc: EvmAddress::parse(USDC).expect("valid"),
        }
    }

    fn offer() -> Value {
        json!({
            "scheme": "exact", "network": "eip155:84532", "amount": "10000", "asset": USDC,
            "payTo": PAY_TO, "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        })
    }

    fn challenge(accepts: Vec<Value>) -> Value {
        json!({
            "x402Version": 2,
            "error": "PAYMENT-SIGNATURE header is required",
            "resource": {"url": "https://api.example.com/premium-data", "mimeType": "application/json"},
            "accepts": accepts,
        })
    }

    fn with(field: &str, value: Value) -> Value {
        let mut offer = offer();
        offer[field] = value;
        offer
    }

    #[test]
    fn a_version_two_header_and_its_decoded_object_read_the_same() {
        let object = challenge(vec![offer()]);
        let header = BASE64.encode(object.to_string());
        let from_header = PaymentChallenge::from_header(&header).expect("read");
        let from_string = PaymentChallenge::from_value(Value::String(header)).expect("read");
        let from_object = PaymentChallenge::from_value(object).expect("read");
        assert_eq!(from_header, from_object);
        assert_eq!(from_string, from_object);
        let chosen = from_object.choose(&payable()).expect("payable");
        assert_eq!(chosen.version, X402Version::V2);
        assert_eq!(chosen.amount, AtomicAmount::parse("10000").expect("valid"));
        assert_eq!(chosen.pay_to, EvmAddress::parse(PAY_TO).expect("valid"));
        assert_eq!(
            chosen.resource_url.as_deref(),
            Some("https://api.example.com/premium-data")
        );
        assert_eq!(Value::Object(chosen.accepted), offer(), "echoed unchanged");
        assert_eq!(
            (chosen.domain_name.as_str(), chosen.domain_version.as_str()),
            ("USDC", "2")
        );
    }

    #[test]
    fn a_version_one_body_reads_its_amount_resource_and_legacy_network() {
        let body = json!({
            "x402Version": 1,
            "error": "X-PAYMENT header is required",
            "accepts": [{
                "scheme": "exact", "network": "base-sepolia", "maxAmountRequired": "2500",
                "resource": "https://api.example.com/v1-data", "description": "", "mimeType": "",
                "payTo": PAY_TO, "maxTimeoutSeconds": 60, "asset": USDC.to_lowercase(),
                "extra": {"name": "USDC", "version": "2"}
            }]
        });
        let chosen = PaymentChallenge::from_json(body.to_string().as_bytes())
            .expect("read")
            .choose(&payable())
            .expect("payable");
        assert_eq!(chosen.version, X402Version::V1);
        assert_eq!(chosen.version.payment_header(), "X-PAYMENT");
        assert_eq!(chosen.amount, AtomicAmount::parse("2500").expect("valid"));
        assert_eq!(
            chosen.resource_url.as_deref(),
            Some("https://api.example.com/v1-data")
        );
        assert_eq!(chosen.network, "base-sepolia");
    }

    #[test]
    fn each_offer_not_paid_is_named_with_why_and_the_first_payable_is_chosen() {
        let cases = [
            (
                with("scheme", json!("upto")),
                "scheme \"upto\" is not \"exact\"",
            ),
            (
                with("network", json!("eip155:1")),
                "network \"eip155:1\" is not \"eip155:84532\"",
            ),
            (
                with("asset", json!("0x0000000000000000000000000000000000000001")),
                "asset is not the USDC contract",
            ),
            (
                with("amount", json!("0")),
                "amount: amount must be greater than zero",
            ),
            (with("amount", json!(10000)), "amount is not a string"),
            (with("payTo", json!("nobody")), "payTo: address must be"),
            (with("maxTimeoutSeconds", json!(0)), "maxTimeoutSeconds"),
            (
                with(
                    "extra",
                    json!({"name": "USDC", "version": "2", "assetTransferMethod": "permit2"}),
                ),
                "extra.assetTransferMethod \"permit2\"",
            ),
            (with("extra", json!({})), "extra.name and extra.version"),
        ];
        let offers: Vec<Value> = cases.iter().map(|(offer, _)| offer.clone()).collect();
        let refused = PaymentChallenge::from_value(challenge(offers.clone()))
            .expect("read")
            .choose(&payable())
            .expect_err("none payable");
        assert_eq!(refused.0.len(), cases.len());
        for ((_, why), skipped) in cases.iter().zip(&refused.0) {
            assert!(
                skipped.reason.starts_with(why),
                "{} for {why}",
                skipped.reason
            );
        }
        assert!(refused
            .to_string()
            .starts_with("no entry of accepts can be paid: accepts[0]: scheme"));

        let mut with_a_payable = offers;
        with_a_payable.push(with("amount", json!("7")));
        with_a_payable.push(offer());
        let chosen = PaymentChallenge::from_value(challenge(with_a_payable))
            .expect("read")
            .choose(&payable())
            .expect("payable");
        assert_eq!(
            chosen.amount,
            AtomicAmount::parse("7").expect("valid"),
            "the first payable"
        );
    }

    #[test]
    fn what_is_not_a_challenge_is_refused_before_it_is_held() {
        let refused = |value: Value| PaymentChallenge::from_value(value).expect_err("refused");
        assert_eq!(refused(json!("not base64!")), ChallengeError::NotBase64);
        assert_eq!(
            refused(json!(BASE64.encode("[1]"))),
            ChallengeError::NotAnObject
        );
        assert_eq!(refused(json!(7)), ChallengeError::NotAnObject);
        assert_eq!(
            refused(json!({"x402Version": 3, "accepts": [offer()]})),
            ChallengeError::UnknownVersion
        );
        assert_eq!(
            refused(json!({"x402Version": 2, "accepts": []})),
            ChallengeError::NoOffers
        );
        assert_eq!(
            refused(json!({"x402Version": 2, "accepts": [1]})),
            ChallengeError::NoOffers
        );
        let many = vec![offer(); MAX_OFFERS + 1];
        assert_eq!(refused(challenge(many)), ChallengeError::TooManyOffers);
        let huge = "A".repeat(MAX_CHALLENGE_BYTES * 2);
        assert_eq!(refused(json!(huge)), ChallengeError::TooLarge);
        let deep = format!("{}{}", "[".repeat(3_000), "]".repeat(3_000));
        assert_eq!(
            PaymentChallenge::from_json(deep.as_bytes()).expect_err("refused"),
            ChallengeError::TooManyItems
        );
    }

    #[test]
    fn padding_is_optional_in_the_header() {
        let header = BASE64.encode(challenge(vec![offer()]).to_string());
        let unpadded = header.trim_end_matches('=');
        assert!(PaymentChallenge::from_header(unpadded).is_ok());
    }

    #[test]
    fn the_terms_a_retry_must_repeat_include_the_resource() {
        let read = PaymentChallenge::from_value(challenge(vec![offer()])).expect("read");
        let first = read.choose(&payable()).expect("payable").terms();
        let mut elsewhere = challenge(vec![offer()]);
        elsewhere["resource"]["url"] = json!("https://api.example.com/other");
        let other = PaymentChallenge::from_value(elsewhere)
            .expect("read")
            .choose(&payable())
            .expect("payable")
            .terms();
        assert_ne!(first, other);
        assert_eq!(first, read.choose(&payable()).expect("payable").terms());
    }
}
