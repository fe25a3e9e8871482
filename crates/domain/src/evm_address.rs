//! EVM account addresses: `0x` + 40 hex digits; mixed case must carry a valid EIP-55 checksum.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use alloy_primitives::Address;

/// A valid EVM address. Equality ignores how the caller cased it; it always prints checksummed.
///
/// The EIP-55 text is computed once, when the address is made, and kept beside its bytes: a
/// checksum is a Keccak-256 hash, about 450 ns, and a page of intents prints its token and
/// recipients again and again (decisions 0040, 0049). Both are arrays, so the value stays `Copy`.
#[derive(Clone, Copy)]
pub struct EvmAddress {
    address: Address,
    checksummed: [u8; 42],
}

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
        let address = Self::checksummed_once(
            Address::from_str(digits).map_err(|_| EvmAddressError::Malformed)?,
        );
        let has_lower = digits.bytes().any(|b| b.is_ascii_lowercase());
        let has_upper = digits.bytes().any(|b| b.is_ascii_uppercase());
        if has_lower && has_upper && address.checksummed[2..] != *digits.as_bytes() {
            return Err(EvmAddressError::BadChecksum);
        }
        Ok(address)
    }

    pub fn from_bytes(bytes: [u8; 20]) -> Self {
        Self::checksummed_once(Address::from(bytes))
    }

    pub fn as_bytes(&self) -> &[u8; 20] {
        self.address.as_ref()
    }

    /// The address with its EIP-55 text, the one Keccak-256 it is printed with.
    fn checksummed_once(address: Address) -> Self {
        Self {
            address,
            checksummed: address.to_checksum_buffer(None).into_inner(),
        }
    }
}

impl PartialEq for EvmAddress {
    fn eq(&self, other: &Self) -> bool {
        self.address == other.address
    }
}

impl Eq for EvmAddress {}

impl Hash for EvmAddress {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.address.hash(state);
    }
}

impl fmt::Debug for EvmAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("EvmAddress").field(&self.address).finish()
    }
}

impl fmt::Display for EvmAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The checksummed text is ASCII by construction, so this never fails.
        f.write_str(std::str::from_utf8(&self.checksummed).map_err(|_| fmt::Error)?)
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
    fn every_address_prints_the_checksum_alloy_computes() {
        for n in 0..3_000u32 {
            let mut bytes = [0x5a; 20];
            bytes[..4].copy_from_slice(&n.to_be_bytes());
            let address = EvmAddress::from_bytes(bytes);
            let expected = Address::from(bytes).to_checksum(None);
            assert_eq!(address.to_string(), expected);
            assert_eq!(EvmAddress::parse(&expected), Ok(address));
        }
    }

    #[test]
    fn bytes_round_trip() {
        let address = EvmAddress::parse(USDC).expect("valid");
        assert_eq!(EvmAddress::from_bytes(*address.as_bytes()), address);
    }
}
