//! `agentctl wallets`: maintenance of wallet keys.

use clap::Subcommand;
use runtime::wiring;
use serde_json::{json, Value};

use crate::Context;

#[derive(Subcommand)]
pub enum WalletsCommand {
    /// Seal every wallet key under WALLET_MASTER_KEY that is still sealed under
    /// WALLET_MASTER_KEY_PREVIOUS (the last step of a master key rotation; safe to repeat).
    Reseal,
}

pub async fn run(context: &Context, command: WalletsCommand) -> anyhow::Result<Value> {
    let WalletsCommand::Reseal = command;
    let provisioning = context.provisioning()?;
    if provisioning.previous_wallet_master_key.is_none() {
        anyhow::bail!(
            "set WALLET_MASTER_KEY_PREVIOUS to the master key being replaced \
             (and WALLET_MASTER_KEY to the new one)"
        );
    }
    let rotation = wiring::wallet_key_rotation(&context.database().await?, &provisioning);
    let report = rotation.reseal_all().await?;
    let counts = json!({
        "resealed": report.resealed,
        "already_current": report.already_current,
        "changed_meanwhile": report.changed_meanwhile,
    });
    if !report.unopenable.is_empty() {
        let addresses: Vec<_> = report.unopenable.iter().map(ToString::to_string).collect();
        anyhow::bail!(
            "{counts}; {} wallet keys open under neither WALLET_MASTER_KEY nor \
             WALLET_MASTER_KEY_PREVIOUS: {}",
            addresses.len(),
            addresses.join(", ")
        );
    }
    Ok(counts)
}
