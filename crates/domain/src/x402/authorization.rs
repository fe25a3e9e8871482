//! The EIP-3009 `TransferWithAuthorization` that pays an offer: its window, its EIP-712 signing
//! hash (alloy's encoding), the payment header that carries it with its signature, and the
//! settlement a server answers with.

use alloy_primitives::{Address, B256, U256};
use alloy_sol_types::{sol, Eip712Domain, SolStruct};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};
use time::OffsetDateTime;

use super::challenge::{ChosenOffer, X402Version};
use crate::{AtomicAmount, EvmAddress};

sol! {
    /// EIP-3009's message, as USDC (FiatToken v2) and the x402 `exact` scheme sign it.
    struct TransferWithAuthorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }
}

/// How far before signing an authorization becomes valid: the clocks of the chain and of this
/// service may disagree by this much.
pub const VALID_AFTER_SKEW_SECS: u64 = 600;
/// The longest an authorization stays valid, whatever the offer allows.
pub const MAX_AUTHORIZATION_SECS: u64 = 3_600;

/// The token's EIP-712 domain: the offer's `extra` name and version, the chain and the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenDomain {
    pub name: String,
    pub version: String,
    pub chain_id: u64,
    pub verifying_contract: EvmAddress,
}

impl TokenDomain {
    pub fn of_offer(offer: &ChosenOffer, chain_id: u64) -> Self {
        Self {
            name: offer.domain_name.clone(),
            version: offer.domain_version.clone(),
            chain_id,
            verifying_contract: offer.asset,
        }
    }

    /// The domain's EIP-712 separator: what the token's `DOMAIN_SEPARATOR()` answers when the
    /// domain is the token's own.
    pub fn separator(&self) -> [u8; 32] {
        self.eip712().separator().0
    }

    fn eip712(&self) -> Eip712Domain {
        Eip712Domain::new(
            Some(self.name.clone().into()),
            Some(self.version.clone().into()),
            Some(U256::from(self.chain_id)),
            Some(Address::from(*self.verifying_contract.as_bytes())),
            None,
        )
    }
}

/// When an authorization signed now may be used: from ten minutes ago (clock skew) until the
/// offer's `maxTimeoutSeconds` from now, at most an hour. Unix seconds, as the token reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthorizationWindow {
    pub valid_after: u64,
    pub valid_before: u64,
}

impl AuthorizationWindow {
    pub fn signed_at(now: OffsetDateTime, max_timeout_secs: u64) -> Self {
        let now = u64::try_from(now.unix_timestamp()).unwrap_or(0);
        Self {
            valid_after: now.saturating_sub(VALID_AFTER_SKEW_SECS),
            valid_before: now.saturating_add(max_timeout_secs.min(MAX_AUTHORIZATION_SECS)),
        }
    }

    /// `valid_before` as a time, for the API's answers and the intent's expiry.
    pub fn valid_before_time(&self) -> OffsetDateTime {
        i64::try_from(self.valid_before)
            .ok()
            .and_then(|secs| OffsetDateTime::from_unix_timestamp(secs).ok())
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }
}

/// One authorization to move `value` of the token from `from` to `to`, once (`nonce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferAuthorization {
    pub from: EvmAddress,
    pub to: EvmAddress,
    pub value: AtomicAmount,
    pub window: AuthorizationWindow,
    pub nonce: [u8; 32],
}

impl TransferAuthorization {
    /// The EIP-712 hash the wallet's key signs.
    pub fn signing_hash(&self, domain: &TokenDomain) -> [u8; 32] {
        let message = TransferWithAuthorization {
            from: Address::from(*self.from.as_bytes()),
            to: Address::from(*self.to.as_bytes()),
            value: self.value.value(),
            validAfter: U256::from(self.window.valid_after),
            validBefore: U256::from(self.window.valid_before),
            nonce: B256::from(self.nonce),
        };
        message.eip712_signing_hash(&domain.eip712()).0
    }

    /// The authorization as x402 writes it: every field a string, the nonce in hex.
    fn as_json(&self) -> Value {
        json!({
            "from": self.from.to_string(),
            "to": self.to.to_string(),
            "value": self.value.to_string(),
            "validAfter": self.window.valid_after.to_string(),
            "validBefore": self.window.valid_before.to_string(),
            "nonce": format!("0x{}", hex::encode(self.nonce)),
        })
    }
}

/// The value of the payment header (`offer.version.payment_header()`): base64 of the payment's
/// JSON, which echoes the chosen entry unchanged in version 2, as servers match it exactly.
pub fn payment_header_value(
    offer: &ChosenOffer,
    authorization: &TransferAuthorization,
    signature: &[u8; 65],
) -> String {
    let payload = json!({
        "signature": format!("0x{}", hex::encode(signature)),
        "authorization": authorization.as_json(),
    });
    let mut payment = Map::new();
    payment.insert("x402Version".into(), json!(offer.version.number()));
    match offer.version {
        X402Version::V2 => {
            if let Some(resource) = &offer.resource {
                payment.insert("resource".into(), resource.clone());
            }
            payment.insert("accepted".into(), Value::Object(offer.accepted.clone()));
        }
        X402Version::V1 => {
            payment.insert("scheme".into(), json!("exact"));
            payment.insert("network".into(), json!(offer.network));
        }
    }
    payment.insert("payload".into(), payload);
    STANDARD.encode(Value::Object(payment).to_string())
}

/// The most bytes of a settlement header read.
const MAX_SETTLEMENT_BYTES: usize = 16 * 1024;

/// What a server said of the payment's settlement (`PAYMENT-RESPONSE`, or version 1's
/// `X-PAYMENT-RESPONSE`): kept as the decoded object, for the agent, with what this service reads.
#[derive(Debug, Clone, PartialEq)]
pub struct SettlementResponse {
    pub object: Map<String, Value>,
    pub success: bool,
    /// The settling transaction's hash, `0x` and 64 hex digits, when the server gave one.
    pub transaction: Option<String>,
}

impl SettlementResponse {
    /// The header's value, or `None` when it is not base64 of a JSON object within bounds.
    pub fn from_header(value: &str) -> Option<Self> {
        if value.len() > MAX_SETTLEMENT_BYTES {
            return None;
        }
        let text = STANDARD
            .decode(value.trim())
            .or_else(|_| {
                base64::engine::general_purpose::STANDARD_NO_PAD
                    .decode(value.trim().trim_end_matches('='))
            })
            .ok()?;
        if !crate::json_items_within(&text, 200) {
            return None;
        }
        let Value::Object(object) = serde_json::from_slice(&text).ok()? else {
            return None;
        };
        let success = object.get("success").and_then(Value::as_bool) == Some(true);
        let transaction = object
            .get("transaction")
            .and_then(Value::as_str)
            .map(|hash| hash.strip_prefix("0x").unwrap_or(hash))
            .filter(|digits| digits.len() == 64 && digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(|digits| format!("0x{}", digits.to_ascii_lowercase()));
        Some(Self {
            object,
            success,
            transaction,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::x402::{PayableBy, PaymentChallenge};

    fn address(text: &str) -> EvmAddress {
        EvmAddress::parse(text).expect("valid")
    }

    fn nonce(text: &str) -> [u8; 32] {
        let bytes = hex::decode(text.trim_start_matches("0x")).expect("hex");
        bytes.try_into().expect("32 bytes")
    }

    fn digest_of(
        domain: (&str, &str, u64, &str),
        from: &str,
        to: &str,
        value: &str,
        window: (u64, u64),
        nonce_hex: &str,
    ) -> String {
        let (name, version, chain_id, contract) = domain;
        let authorization = TransferAuthorization {
            from: address(from),
            to: address(to),
            value: AtomicAmount::parse(value).expect("valid"),
            window: AuthorizationWindow {
                valid_after: window.0,
                valid_before: window.1,
            },
            nonce: nonce(nonce_hex),
        };
        let domain = TokenDomain {
            name: name.into(),
            version: version.into(),
            chain_id,
            verifying_contract: address(contract),
        };
        format!("0x{}", hex::encode(authorization.signing_hash(&domain)))
    }

    const BASE_SEPOLIA_USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

    /// The x402 specification's own example payment (version 2, `exact` on Base Sepolia), whose
    /// signature recovers to its `from`; the hash computed independently with eth_account.
    #[test]
    fn the_signing_hash_of_the_x402_specifications_example() {
        assert_eq!(
            digest_of(
                ("USDC", "2", 84532, BASE_SEPOLIA_USDC),
                "0x857b06519E91e3A54538791bDbb0E22373e36b66",
                "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
                "10000",
                (1_740_672_089, 1_740_672_154),
                "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480",
            ),
            "0xf256992871671abcb27ff92885a7afa46218724e5fc0bac35d050115aa1d22e6"
        );
    }

    /// Hashes computed with the official x402 package's `hash_eip3009_authorization` and with
    /// eth_account, which agree: another domain name, chain, contract and window.
    #[test]
    fn the_signing_hashes_the_official_package_computes() {
        assert_eq!(
            digest_of(
                ("USDC", "2", 84532, BASE_SEPOLIA_USDC),
                "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
                "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
                "10000",
                (0, 1_740_672_154),
                "0x0000000000000000000000000000000000000000000000000000000000000001",
            ),
            "0x76fea1af1012b27d195531797a40677dc8cafc9f6cd99a40c026aaed3e457fab"
        );
        assert_eq!(
            digest_of(
                (
                    "USD Coin",
                    "2",
                    31337,
                    "0x5FbDB2315678afecb367f032d93F642f64180aa3"
                ),
                "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
                "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
                "1000000",
                (1_740_671_554, 1_740_675_754),
                "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480",
            ),
            "0x7d7b91492aa0b81f21e6e5a0503d67de5668ee89689ca1fe31e641b95d24db91"
        );
    }

    #[test]
    fn the_window_opens_ten_minutes_back_and_closes_within_the_offer_and_an_hour() {
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("valid");
        let short = AuthorizationWindow::signed_at(now, 60);
        assert_eq!(short.valid_after, 1_800_000_000 - 600);
        assert_eq!(short.valid_before, 1_800_000_060);
        assert_eq!(short.valid_before_time().unix_timestamp(), 1_800_000_060);
        let long = AuthorizationWindow::signed_at(now, 86_400);
        assert_eq!(long.valid_before, 1_800_003_600);
    }

    fn chosen(version: u8) -> ChosenOffer {
        let offer = serde_json::json!({
            "scheme": "exact", "network": if version == 2 { "eip155:84532" } else { "base-sepolia" },
            "amount": "10000", "maxAmountRequired": "10000", "asset": BASE_SEPOLIA_USDC,
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "maxTimeoutSeconds": 60,
            "extra": {"name": "USDC", "version": "2"}, "resource": "https://api.example.com/v1"
        });
        let challenge = serde_json::json!({
            "x402Version": version,
            "resource": {"url": "https://api.example.com/premium-data"},
            "accepts": [offer],
        });
        PaymentChallenge::from_value(challenge)
            .expect("read")
            .choose(&PayableBy {
                chain_id: 84532,
                usdc: address(BASE_SEPOLIA_USDC),
            })
            .expect("payable")
    }

    /// What anvil's first account authorizes to pay `offer`, in `window`, once (`nonce`).
    fn paying(
        offer: &ChosenOffer,
        window: AuthorizationWindow,
        nonce: [u8; 32],
    ) -> TransferAuthorization {
        TransferAuthorization {
            from: address("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"),
            to: offer.pay_to,
            value: offer.amount,
            window,
            nonce,
        }
    }

    fn decoded(header: &str) -> Value {
        serde_json::from_slice(&STANDARD.decode(header).expect("base64")).expect("json")
    }

    #[test]
    fn a_version_two_payment_echoes_the_offer_and_resource_with_every_field_a_string() {
        let offer = chosen(2);
        let window = AuthorizationWindow {
            valid_after: 1,
            valid_before: 2,
        };
        let authorization = paying(&offer, window, [0xab; 32]);
        let payment = decoded(&payment_header_value(&offer, &authorization, &[7; 65]));
        assert_eq!(payment["x402Version"], 2);
        assert_eq!(payment["accepted"], Value::Object(offer.accepted.clone()));
        assert_eq!(
            payment["resource"]["url"],
            "https://api.example.com/premium-data"
        );
        let signed = &payment["payload"]["authorization"];
        assert_eq!(signed["value"], "10000");
        assert_eq!(signed["validAfter"], "1");
        assert_eq!(signed["validBefore"], "2");
        assert_eq!(signed["nonce"], format!("0x{}", "ab".repeat(32)));
        assert_eq!(signed["to"], "0x209693Bc6afc0C5328bA36FaF03C514EF312287C");
        assert_eq!(
            payment["payload"]["signature"],
            format!("0x{}", "07".repeat(65))
        );
    }

    #[test]
    fn a_version_one_payment_names_its_scheme_and_network_instead() {
        let offer = chosen(1);
        let window = AuthorizationWindow::signed_at(OffsetDateTime::now_utc(), 60);
        let authorization = paying(&offer, window, [1; 32]);
        let payment = decoded(&payment_header_value(&offer, &authorization, &[7; 65]));
        assert_eq!(payment["x402Version"], 1);
        assert_eq!(payment["scheme"], "exact");
        assert_eq!(payment["network"], "base-sepolia");
        assert!(payment.get("accepted").is_none());
    }

    #[test]
    fn a_settlement_is_read_with_its_hash_with_or_without_its_prefix() {
        let hash = "79aa".repeat(16);
        for written in [format!("0x{hash}"), hash.clone()] {
            let header = STANDARD.encode(
                serde_json::json!({"success": true, "transaction": written, "network": "eip155:8453"})
                    .to_string(),
            );
            let settlement = SettlementResponse::from_header(&header).expect("read");
            assert!(settlement.success);
            assert_eq!(settlement.transaction, Some(format!("0x{hash}")));
        }
        let failed = STANDARD.encode(r#"{"success":false,"transaction":"","errorReason":"x"}"#);
        let settlement = SettlementResponse::from_header(&failed).expect("read");
        assert!(!settlement.success && settlement.transaction.is_none());
        assert!(SettlementResponse::from_header("not base64!").is_none());
        assert!(SettlementResponse::from_header(&STANDARD.encode("[1]")).is_none());
    }
}
