//! What moves and where: the chain wallets live on, the assets they hold, and the one asset a
//! spend policy governs. The names here are the API's (`"base"`, `"USDC"`, `"ETH"`).

use std::fmt;

use alloy_primitives::U256;

use crate::EvmAddress;

/// A chain wallets live on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Chain {
    Base,
}

impl Chain {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Base => "base",
        }
    }

    /// The chain named `name`, in any letter case.
    pub fn parse(name: &str) -> Option<Self> {
        name.eq_ignore_ascii_case("base").then_some(Self::Base)
    }

    /// The asset the chain pays its fees in.
    pub fn native_asset(self) -> Asset {
        match self {
            Self::Base => Asset::Eth,
        }
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An asset a wallet holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Asset {
    Usdc,
    Eth,
}

impl Asset {
    pub const ALL: [Asset; 2] = [Self::Usdc, Self::Eth];

    /// The ticker the API shows, e.g. `USDC`.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Usdc => "USDC",
            Self::Eth => "ETH",
        }
    }

    /// The asset with this ticker, in any letter case.
    pub fn parse(symbol: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|asset| asset.symbol().eq_ignore_ascii_case(symbol))
    }

    /// Decimals of the asset's atomic unit: 1 USDC is 10^6 units, 1 ETH is 10^18 wei.
    pub fn decimals(self) -> u8 {
        match self {
            Self::Usdc => 6,
            Self::Eth => 18,
        }
    }
}

impl fmt::Display for Asset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// The asset a spend policy governs and transfers move: one asset on one chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyAsset {
    pub asset: Asset,
    pub chain: Chain,
    pub decimals: u8,
    /// The token contract; `None` for the chain's native asset.
    pub token_address: Option<EvmAddress>,
}

impl PolicyAsset {
    /// USDC on Base, at the token contract `token_address` (configurable, so a test chain's token
    /// can stand in for it).
    pub fn usdc_on_base(token_address: EvmAddress) -> Self {
        Self {
            asset: Asset::Usdc,
            chain: Chain::Base,
            decimals: Asset::Usdc.decimals(),
            token_address: Some(token_address),
        }
    }
}

/// One asset's balance as read from the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetBalance {
    pub asset: Asset,
    pub chain: Chain,
    pub decimals: u8,
    pub amount: U256,
    /// `None` for the native asset.
    pub token_address: Option<EvmAddress>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_in_any_case_and_print_as_the_api_writes_them() {
        assert_eq!(Chain::parse("Base"), Some(Chain::Base));
        assert_eq!(Chain::parse("ethereum"), None);
        assert_eq!(Chain::Base.to_string(), "base");
        assert_eq!(Asset::parse("usdc"), Some(Asset::Usdc));
        assert_eq!(Asset::parse("ETH"), Some(Asset::Eth));
        assert_eq!(Asset::parse("DOGE"), None);
        assert_eq!(Asset::Usdc.to_string(), "USDC");
        assert_eq!(Chain::Base.native_asset(), Asset::Eth);
    }

    #[test]
    fn usdc_on_base_has_six_decimals() {
        let token = EvmAddress::from_bytes([7; 20]);
        let usdc = PolicyAsset::usdc_on_base(token);
        assert_eq!(
            (usdc.asset, usdc.chain, usdc.decimals, usdc.token_address),
            (Asset::Usdc, Chain::Base, 6, Some(token))
        );
    }
}
