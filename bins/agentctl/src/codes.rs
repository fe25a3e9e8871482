//! `agentctl codes`: the verification-code extraction inbound mail and SMS go through.

use std::io::Read;

use anyhow::Context as _;
use clap::Subcommand;
use serde_json::Value;

#[derive(Subcommand)]
pub enum CodesCommand {
    /// Read text on stdin and print the codes found in it, most likely first, as a JSON array.
    Extract,
}

pub fn run(command: CodesCommand) -> anyhow::Result<Value> {
    let CodesCommand::Extract = command;
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("reading stdin as UTF-8 text")?;
    Ok(Value::from(text_mining::extract_verification_codes(&text)))
}
