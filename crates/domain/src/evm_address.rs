//! EVM account addresses: `0x` + 40 hex digits; mixed case must carry a valid EIP-55 checksum.

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
        if has_lower && has_upper && address.to_checksum(None)[2..] != *digits {
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
        f.write_str(&self.0.to_checksum(None))
    }
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
    fn bytes_round_trip() {
        let address = EvmAddress::parse(USDC).expect("valid");
        assert_eq!(EvmAddress::from_bytes(*address.as_bytes()), address);
    }
}
