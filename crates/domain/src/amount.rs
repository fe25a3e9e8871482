//! Token amounts in atomic units (the smallest unit of the asset, e.g. 10^-6 USDC).

use std::fmt;

use alloy_primitives::U256;

/// An amount greater than zero that fits in 256 bits, written as plain decimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AtomicAmount(U256);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AtomicAmountError {
    #[error("amount must be a string of decimal digits (no sign, point, exponent or hex)")]
    NotDecimalDigits,
    #[error("amount must be greater than zero")]
    Zero,
    #[error("amount does not fit in 256 bits")]
    TooLarge,
    #[error(
        "amount must be decimal digits with at most one point (no sign, exponent or separator)"
    )]
    NotDecimal,
    #[error("amount has more than {0} digits after the point")]
    TooPrecise(u8),
}

impl AtomicAmount {
    pub fn parse(candidate: &str) -> Result<Self, AtomicAmountError> {
        if candidate.is_empty() || !candidate.bytes().all(|b| b.is_ascii_digit()) {
            return Err(AtomicAmountError::NotDecimalDigits);
        }
        let value = U256::from_str_radix(candidate, 10).map_err(|_| AtomicAmountError::TooLarge)?;
        Self::new(value)
    }

    pub fn new(value: U256) -> Result<Self, AtomicAmountError> {
        if value.is_zero() {
            Err(AtomicAmountError::Zero)
        } else {
            Ok(Self(value))
        }
    }

    pub fn value(&self) -> U256 {
        self.0
    }

    /// The amount a person writes in whole units of an asset with `decimals` (`"1.5"` USDC,
    /// `"0.000001"`, `"12"`), as atomic units: the inverse of `format_units`, exact, and refused
    /// rather than rounded when it is finer than the asset's smallest unit.
    pub fn parse_units(candidate: &str, decimals: u8) -> Result<Self, AtomicAmountError> {
        let (whole, fraction) = candidate.split_once('.').unwrap_or((candidate, ""));
        let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
        let point_without_fraction = candidate.contains('.') && fraction.is_empty();
        if whole.is_empty() || point_without_fraction || !digits(whole) || !digits(fraction) {
            return Err(AtomicAmountError::NotDecimal);
        }
        if fraction.len() > usize::from(decimals) {
            return Err(AtomicAmountError::TooPrecise(decimals));
        }
        let scale = usize::from(decimals);
        Self::parse(&format!("{whole}{fraction:0<scale$}"))
    }
}

impl fmt::Display for AtomicAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// `value` atomic units as an exact decimal string with `decimals` fraction digits, trailing
/// zeros trimmed: 1500000 with 6 decimals is "1.5", 0 is "0".
pub fn format_units(value: U256, decimals: u8) -> String {
    let digits = value.to_string();
    let decimals = usize::from(decimals);
    if decimals == 0 {
        return digits;
    }
    let padded = format!("{digits:0>width$}", width = decimals + 1);
    let (whole, fraction) = padded.split_at(padded.len() - decimals);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        whole.to_owned()
    } else {
        format!("{whole}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_positive_integers_and_prints_them_canonically() {
        assert_eq!(
            AtomicAmount::parse("1").map(|a| a.to_string()),
            Ok("1".into())
        );
        assert_eq!(
            AtomicAmount::parse("000250").map(|a| a.to_string()),
            Ok("250".into())
        );
    }

    #[test]
    fn accepts_the_largest_256_bit_value_and_refuses_one_more() {
        let max = U256::MAX.to_string();
        assert_eq!(AtomicAmount::parse(&max).map(|a| a.value()), Ok(U256::MAX));
        let one_more =
            "115792089237316195423570985008687907853269984665640564039457584007913129639936";
        assert_eq!(
            AtomicAmount::parse(one_more),
            Err(AtomicAmountError::TooLarge)
        );
        assert_eq!(
            AtomicAmount::parse(&"9".repeat(200)),
            Err(AtomicAmountError::TooLarge)
        );
    }

    #[test]
    fn formatting_is_exact_at_every_scale() {
        assert_eq!(format_units(U256::ZERO, 6), "0");
        assert_eq!(format_units(U256::from(1), 6), "0.000001");
        assert_eq!(format_units(U256::from(1_500_000), 6), "1.5");
        assert_eq!(format_units(U256::from(12_000_000), 6), "12");
        assert_eq!(format_units(U256::from(123), 0), "123");
        assert_eq!(format_units(U256::from(10).pow(U256::from(18)), 18), "1");
        assert_eq!(
            format_units(U256::MAX, 18),
            "115792089237316195423570985008687907853269984665640564039457.584007913129639935"
        );
    }

    #[test]
    fn units_written_by_a_person_read_back_as_format_units_writes_them() {
        for (text, atomic) in [
            ("1.5", 1_500_000u64),
            ("12", 12_000_000),
            ("0.000001", 1),
            ("007.250", 7_250_000),
        ] {
            let amount = AtomicAmount::parse_units(text, 6).expect(text);
            assert_eq!(amount.value(), U256::from(atomic), "{text}");
            let written = format_units(amount.value(), 6);
            assert_eq!(AtomicAmount::parse_units(&written, 6), Ok(amount), "{text}");
        }
        assert_eq!(
            AtomicAmount::parse_units("0.0000001", 6),
            Err(AtomicAmountError::TooPrecise(6))
        );
        assert_eq!(
            AtomicAmount::parse_units("0.000", 6),
            Err(AtomicAmountError::Zero)
        );
        for bad in ["", ".5", "5.", "1.2.3", "-1", "1e6", "1,5", " 1", "0x10"] {
            assert_eq!(
                AtomicAmount::parse_units(bad, 6),
                Err(AtomicAmountError::NotDecimal),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn refuses_zero_and_anything_that_is_not_bare_digits() {
        assert_eq!(AtomicAmount::parse("0"), Err(AtomicAmountError::Zero));
        assert_eq!(AtomicAmount::parse("000"), Err(AtomicAmountError::Zero));
        for bad in ["", "-1", "+1", "1.0", "1e6", "0x10", " 1", "1 ", "１"] {
            assert_eq!(
                AtomicAmount::parse(bad),
                Err(AtomicAmountError::NotDecimalDigits),
                "{bad:?}"
            );
        }
    }
}
