//! EVM account addresses: `0x` + 40 hex digits; mixed case must carry a valid EIP-55 checksum.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use alloy_primitives::Address;

/// A valid EVM address. Equality ignores how the caller cased it; it always prints checksummed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EvmAddress(Address);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvmAddressError {
    #[error("address must be 0x followed by 40 hexadecimal characters")]
    Malformed,
    #[error("address has mixed case but fails the EIP-55 checksum")]
    BadChecksum,
}

impl EvmAddress {
    pub fn parse(candidate: &str) -> Result<Self, EvmAddressError> {
        let digits = candidate
            .strip_prefix("0x")
            .filter(|d| d.len() == 40 && d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or(EvmAddressError::Malformed)?;
        let address = Address::from_str(digits).map_err(|_| EvmAddressError::Malformed)?;
        let has_lower = digits.bytes().any(|b| b.is_ascii_lowercase());
        let has_upper = digits.bytes().any(|b| b.is_ascii_uppercase());
        if has_lower && has_upper && checksummed(&address)[2..] != *digits {
            return Err(EvmAddressError::BadChecksum);
        }
        Ok(Self(address))
    }

    pub fn from_bytes(bytes: [u8; 20]) -> Self {
        Self(Address::from(bytes))
    }

    pub fn as_bytes(&self) -> &[u8; 20] {
        self.0.as_ref()
    }
}

impl fmt::Display for EvmAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&checksummed(&self.0))
    }
}

/// How many checksummed addresses each thread remembers; past it, it starts afresh.
const REMEMBERED_CHECKSUMS: usize = 1024;

thread_local! {
    /// The EIP-55 text of addresses this thread printed lately. A checksum is a Keccak-256 hash,
    /// about 450 ns, and a page of intents prints its token and recipients again and again: it
    /// was a seventh of the server's time on one (decision 0040).
    static CHECKSUMMED: RefCell<HashMap<Address, String>> = RefCell::default();
}

/// `0x` and the address's 40 hex digits in EIP-55 case.
fn checksummed(address: &Address) -> String {
    CHECKSUMMED.with_borrow_mut(|remembered| {
        if let Some(text) = remembered.get(address) {
            return text.clone();
        }
        let text = address.to_checksum(None);
        if remembered.len() >= REMEMBERED_CHECKSUMS {
            remembered.clear();
        }
        remembered.insert(*address, text.clone());
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

    #[test]
    fn checksummed_lowercase_and_uppercase_forms_are_the_same_address() {
        let checksummed = EvmAddress::parse(USDC).expect("valid");
        let lower = EvmAddress::parse(&USDC.to_lowercase()).expect("valid");
        let upper = EvmAddress::parse(&format!("0x{}", USDC[2..].to_uppercase())).expect("valid");
        assert_eq!(checksummed, lower);
        assert_eq!(checksummed, upper);
        assert_eq!(lower.to_string(), USDC);
    }

    #[test]
    fn mixed_case_with_a_wrong_checksum_is_refused() {
        let broken = USDC.replacen("fCD6", "fcD6", 1);
        assert_eq!(
            EvmAddress::parse(&broken),
            Err(EvmAddressError::BadChecksum)
        );
    }

    #[test]
    fn malformed_addresses_are_refused() {
        for bad in [
            "",
            "0x",
            "833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "0X833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291",
            "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA029134",
            "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291g",
            " 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        ] {
            assert_eq!(
                EvmAddress::parse(bad),
                Err(EvmAddressError::Malformed),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn remembered_checksums_are_the_checksums_past_the_memory_bound() {
        let addresses: Vec<Address> = (0..3 * REMEMBERED_CHECKSUMS as u32)
            .map(|n| {
                let mut bytes = [0x5a; 20];
                bytes[..4].copy_from_slice(&n.to_be_bytes());
                Address::from(bytes)
            })
            .collect();
        for _ in 0..2 {
            for address in &addresses {
                assert_eq!(
                    EvmAddress(*address).to_string(),
                    address.to_checksum(None),
                    "{address:?}"
                );
            }
        }
        CHECKSUMMED.with_borrow(|remembered| assert!(remembered.len() <= REMEMBERED_CHECKSUMS));
    }

    #[test]
    fn bytes_round_trip() {
        let address = EvmAddress::parse(USDC).expect("valid");
        assert_eq!(EvmAddress::from_bytes(*address.as_bytes()), address);
    }
}
