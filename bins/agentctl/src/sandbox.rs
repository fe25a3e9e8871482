//! `agentctl sandbox`: act on the sandbox providers of `make run`.

use anyhow::Context as _;
use clap::Subcommand;
use domain::{Asset, AtomicAmount, EvmAddress};
use runtime::config::ChainConfig;
use runtime::wiring;
use serde_json::{json, Value};

use crate::{Context, ATOMIC_UNITS};

#[derive(Subcommand)]
pub enum SandboxCommand {
    /// Credit USDC (or, with --native, ETH) to an address on the sandbox chain.
    #[command(after_help = ATOMIC_UNITS)]
    Fund {
        address: String,
        /// Amount in atomic units: 100 USDC is 100000000 (wei with --native).
        amount: String,
        #[arg(long)]
        native: bool,
    },
}

pub async fn run(context: &Context, command: SandboxCommand) -> anyhow::Result<Value> {
    let SandboxCommand::Fund {
        address,
        amount,
        native,
    } = command;
    let holder = EvmAddress::parse(&address).with_context(|| format!("address {address:?}"))?;
    let amount = AtomicAmount::parse(&amount).with_context(|| format!("amount {amount:?}"))?;
    if !ChainConfig::from_env(&context.env)
        .context("configuration")?
        .is_sandbox()
    {
        anyhow::bail!(
            "sandbox fund credits the sandbox chain only; EVM_RPC_URL names a real chain"
        );
    }
    let provisioning = context.provisioning()?;
    let (asset, token) = match native {
        true => (Asset::Eth, None),
        false => (Asset::Usdc, Some(provisioning.usdc_token_address)),
    };
    let chain = wiring::sandbox_chain(&context.database().await?);
    let balance = chain.fund(&holder, token.as_ref(), amount).await?;
    Ok(json!({
        "address": holder.to_string(),
        "asset": asset.symbol(),
        "token_address": token.map(|t| t.to_string()),
        "balance_atomic": balance.to_string(),
    }))
}
