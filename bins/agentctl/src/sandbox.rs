//! `agentctl sandbox`: act on the sandbox providers of `make run`.

use anyhow::Context as _;
use api_types::{AttachmentOut, EmailMessageOut};
use app::{Delivered, ReadMailError, Services};
use clap::Subcommand;
use domain::{
    Asset, AtomicAmount, EmailAddress, EmailMessageId, EvmAddress, PhoneNumber, SmsSource,
};
use runtime::config::{ChainConfig, SmsConfig, SmsProviderConfig};
use runtime::wiring;
use serde_json::{json, Value};
use uuid::Uuid;

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
    /// Deliver an inbound mail through the same ingestion a provider's webhook goes through.
    Email {
        /// The inbox address it is for.
        #[arg(long)]
        to: String,
        #[arg(long)]
        from: String,
        #[arg(long)]
        subject: String,
        /// The plain-text body.
        #[arg(long)]
        text: String,
        /// The mail it answers, to land in that mail's thread: its `id` as the API gives it (a
        /// message of the inbox at --to), or its Message-ID (`internet_message_id`, e.g.
        /// <abc@example.org>).
        #[arg(long)]
        in_reply_to: Option<String>,
    },
    /// Deliver an SMS to a number at the sandbox provider, through the same inbound path as the
    /// provider's webhook; waits for a code on any server wake up.
    Sms {
        /// The agent's number (E.164).
        #[arg(long)]
        to: String,
        #[arg(long)]
        from: String,
        #[arg(long)]
        body: String,
    },
    /// Show the mail the sandbox email provider was handed, newest first.
    Outbox {
        /// Only mail to this address (To, Cc or Bcc).
        #[arg(long)]
        to: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
}

pub async fn run(context: &Context, command: SandboxCommand) -> anyhow::Result<Value> {
    match command {
        SandboxCommand::Fund {
            address,
            amount,
            native,
        } => fund(context, &address, &amount, native).await,
        SandboxCommand::Email {
            to,
            from,
            subject,
            text,
            in_reply_to,
        } => {
            let mail = InboundMail {
                to: &to,
                from: &from,
                subject: &subject,
                text: &text,
                in_reply_to: in_reply_to.as_deref(),
            };
            email(context, mail).await
        }
        SandboxCommand::Outbox { to, limit } => outbox(context, to.as_deref(), limit).await,
        SandboxCommand::Sms { to, from, body } => sms(context, &to, &from, &body).await,
    }
}

async fn fund(
    context: &Context,
    address: &str,
    amount: &str,
    native: bool,
) -> anyhow::Result<Value> {
    let holder = EvmAddress::parse(address).with_context(|| format!("address {address:?}"))?;
    let amount = AtomicAmount::parse(amount).with_context(|| format!("amount {amount:?}"))?;
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

/// An inbound mail as typed on the command line.
struct InboundMail<'a> {
    to: &'a str,
    from: &'a str,
    subject: &'a str,
    text: &'a str,
    in_reply_to: Option<&'a str>,
}

impl InboundMail<'_> {
    /// The mail as a provider would deliver it: RFC 5322 with UTF-8 headers (RFC 6532).
    fn to_rfc5322(&self, message_id: &str) -> anyhow::Result<String> {
        for (name, value) in [
            ("--to", self.to),
            ("--from", self.from),
            ("--subject", self.subject),
        ] {
            anyhow::ensure!(
                !value.contains(['\r', '\n']),
                "{name} must be a single line"
            );
        }
        let date = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc2822)
            .context("formatting the date")?;
        // As a receiving provider writes them: the mailbox it delivers to, above its trace.
        let mut raw = format!(
            "Delivered-To: {to}\r\nReceived: by sandbox.agent-runtime.test; {date}\r\n\
             From: {}\r\nTo: {to}\r\nSubject: {}\r\nDate: {date}\r\nMessage-ID: {message_id}\r\n",
            self.from,
            self.subject,
            to = self.to
        );
        if let Some(parent) = self.in_reply_to {
            anyhow::ensure!(
                !parent.contains(['\r', '\n']),
                "--in-reply-to must be a single line"
            );
            raw.push_str(&format!(
                "In-Reply-To: {parent}\r\nReferences: {parent}\r\n"
            ));
        }
        raw.push_str(
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Content-Transfer-Encoding: 8bit\r\n\r\n",
        );
        raw.push_str(&self.text.replace("\r\n", "\n").replace('\n', "\r\n"));
        Ok(raw)
    }
}

/// What `--in-reply-to` names: the mail answered, by the Message-ID it carries or by its id in
/// the API.
#[derive(Debug, PartialEq, Eq)]
enum Answered {
    /// An RFC 5322 Message-ID, in its angle brackets.
    MessageId(String),
    /// A message's `id` in the API, whose Message-ID the inbox keeps.
    Message(EmailMessageId),
}

impl Answered {
    /// A message's `id` (a UUID), or its Message-ID with or without its angle brackets (one
    /// `@` between two non-empty parts, no space, control or bracket); anything else is refused,
    /// naming the two it may be.
    fn parse(given: &str) -> anyhow::Result<Self> {
        if let Ok(id) = given.parse::<EmailMessageId>() {
            return Ok(Self::Message(id));
        }
        let bare = given
            .strip_prefix('<')
            .and_then(|rest| rest.strip_suffix('>'))
            .unwrap_or(given);
        let one_at = bare.split_once('@').is_some_and(|(left, right)| {
            !left.is_empty() && !right.is_empty() && !right.contains('@')
        });
        let plain = !bare
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '<' || c == '>');
        anyhow::ensure!(
            one_at && plain,
            "--in-reply-to {given:?} is neither a message's `id` (a UUID, as the API lists it) nor \
             its `internet_message_id` (a Message-ID such as <abc@example.org>)"
        );
        Ok(Self::MessageId(format!("<{bare}>")))
    }
}

/// The Message-ID of message `id` of the inbox at `to`: what a mail answering it carries.
async fn message_id_of(
    services: &Services,
    to: &EmailAddress,
    id: EmailMessageId,
) -> anyhow::Result<String> {
    let agent = services
        .mail
        .intake
        .agent_at(to)
        .await?
        .with_context(|| format!("no inbox of this service has the address {to}"))?;
    let profile = services.operator.agents.show(agent).await?;
    let message = match services
        .mail
        .mailbox
        .message(&profile, &id.to_string())
        .await
    {
        Err(ReadMailError::NotFound) => {
            anyhow::bail!("--in-reply-to: the inbox at {to} has no message {id}")
        }
        read => read?,
    };
    message
        .internet_message_id
        .with_context(|| format!("--in-reply-to: message {id} has no Message-ID to answer"))
}

async fn email(context: &Context, mail: InboundMail<'_>) -> anyhow::Result<Value> {
    let to = EmailAddress::parse(mail.to).with_context(|| format!("--to {:?}", mail.to))?;
    EmailAddress::parse(mail.from).with_context(|| format!("--from {:?}", mail.from))?;
    let answered = mail.in_reply_to.map(Answered::parse).transpose()?;
    let services = context.services().await?;
    let in_reply_to = match answered {
        None => None,
        Some(Answered::MessageId(message_id)) => Some(message_id),
        Some(Answered::Message(id)) => Some(message_id_of(&services, &to, id).await?),
    };
    let mail = InboundMail {
        in_reply_to: in_reply_to.as_deref(),
        ..mail
    };
    let delivery = Uuid::now_v7();
    let raw = mail.to_rfc5322(&format!("<{delivery}@sandbox.agent-runtime.test>"))?;
    let report = services
        .mail
        .intake
        .receive_raw(raw.into_bytes(), &format!("sandbox-{delivery}"))
        .await?;
    if report.stored.is_empty() {
        anyhow::bail!("no inbox of this service has the address {}", mail.to);
    }
    Ok(json!({
        "delivered": report.stored.into_iter().map(EmailMessageOut::from).collect::<Vec<_>>(),
    }))
}

async fn outbox(context: &Context, to: Option<&str>, limit: usize) -> anyhow::Result<Value> {
    let mailer = wiring::sandbox_mailer(&context.database().await?);
    let mail = mailer.outbox(to, limit.clamp(1, 1000)).await?;
    Ok(Value::Array(
        mail.iter()
            .map(|mail| {
                json!({
                    "provider_message_id": mail.provider_message_id,
                    "message_id": mail.message_id,
                    "internet_message_id": mail.internet_message_id,
                    "from": mail.from,
                    "to": mail.to,
                    "cc": mail.cc,
                    "bcc": mail.bcc,
                    "subject": mail.subject,
                    "text": mail.text,
                    "in_reply_to": mail.in_reply_to,
                    "references": mail.references,
                    "headers": mail.headers,
                    "attachments": mail
                        .attachments
                        .iter()
                        .cloned()
                        .map(AttachmentOut::from)
                        .collect::<Vec<_>>(),
                    "received_at": mail
                        .received_at
                        .format(&time::format_description::well_known::Rfc3339)
                        .unwrap_or_default(),
                })
            })
            .collect(),
    ))
}

async fn sms(context: &Context, to: &str, from: &str, body: &str) -> anyhow::Result<Value> {
    let to = PhoneNumber::parse(to).with_context(|| format!("--to {to:?}"))?;
    let from = PhoneNumber::parse(from).with_context(|| format!("--from {from:?}"))?;
    let config = SmsConfig::from_env(&context.env).context("configuration")?;
    if !matches!(config.provider, SmsProviderConfig::Sandbox) {
        anyhow::bail!(
            "sandbox sms delivers to the sandbox provider only; SMS_PROVIDER names another"
        );
    }
    let database = context.database().await?;
    let message = wiring::sandbox_sms(&database)
        .receive(&from, &to, body)
        .await?;
    let provider_message_id = message.provider_message_id.clone();
    let services = context.services().await?;
    let delivered = match services.sms.receive(message, SmsSource::Sandbox).await? {
        Delivered::Stored => "stored",
        Delivered::Duplicate => "duplicate",
        Delivered::Unrouted => anyhow::bail!("no agent of this service has the number {to}"),
    };
    Ok(json!({
        "delivered": delivered,
        "provider_message_id": provider_message_id,
        "to": to.as_str(),
        "from": from.as_str(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_reply_to_takes_a_messages_id_or_its_message_id_and_says_so_otherwise() {
        let id = "0192f0a1-0000-7000-8000-000000000001";
        assert_eq!(
            Answered::parse(id).expect("an id"),
            Answered::Message(id.parse().expect("a UUID"))
        );
        for given in ["<plans-1@example.org>", "plans-1@example.org"] {
            assert_eq!(
                Answered::parse(given).expect("a Message-ID"),
                Answered::MessageId("<plans-1@example.org>".into()),
                "{given:?}"
            );
        }
        for wrong in [
            "",
            "<>",
            "plans-1",
            "<plans-1>",
            "@example.org",
            "plans@",
            "a@b@c",
            "<a@b> <c@d>",
            "a@b\r\nBcc: x@y",
            "<<a@b>>",
            "0192f0a1-0000-7000-8000",
        ] {
            let refused = Answered::parse(wrong).expect_err(wrong).to_string();
            assert!(
                refused.contains("`id`") && refused.contains("`internet_message_id`"),
                "{wrong:?}: {refused}"
            );
        }
    }
}
