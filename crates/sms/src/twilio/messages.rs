//! `SmsProvider` over Twilio's Message list resource, filtered to the messages sent to a number.
//! Twilio lists them newest first, a page at a time; the pages are followed until enough are
//! read.

use async_trait::async_trait;
use domain::PhoneNumber;
use ports::{ProviderError, ProviderSms, SmsFlow, SmsProvider};
use serde::Deserialize;
use time::format_description::well_known::{Rfc2822, Rfc3339};
use time::OffsetDateTime;

use super::{unreadable, TwilioClient, TWILIO_PROVIDER};

/// The most messages Twilio lists in one page.
const MAX_PAGE_SIZE: usize = 1000;

#[derive(Deserialize)]
struct MessagePage {
    messages: Vec<Message>,
    next_page_uri: Option<String>,
}

/// A message as Twilio's JSON has it; what Twilio may leave null is optional.
#[derive(Deserialize)]
struct Message {
    sid: String,
    direction: String,
    from: Option<String>,
    to: Option<String>,
    body: Option<String>,
    date_created: Option<String>,
}

impl Message {
    fn into_sms(self) -> Result<ProviderSms, ProviderError> {
        Ok(ProviderSms {
            flow: flow(&self.direction)?,
            received_at: self.date_created.as_deref().map(rfc3339).transpose()?,
            provider_message_id: self.sid,
            from: self.from.unwrap_or_default(),
            to: self.to.unwrap_or_default(),
            body: self.body.unwrap_or_default(),
        })
    }
}

/// `inbound`, or one of the ways Twilio sends: `outbound-api`, `outbound-call`,
/// `outbound-reply`.
fn flow(direction: &str) -> Result<SmsFlow, ProviderError> {
    match direction {
        "inbound" => Ok(SmsFlow::Inbound),
        outbound if outbound.starts_with("outbound") => Ok(SmsFlow::Outbound),
        other => Err(unreadable(format!("a message's direction {other:?}"))),
    }
}

/// Twilio's RFC 2822 date (`Sat, 21 Nov 2026 10:00:00 +0000`) in RFC 3339, as the port keeps it.
fn rfc3339(rfc2822: &str) -> Result<String, ProviderError> {
    let unreadable_date = |error: &dyn std::fmt::Display| {
        unreadable(format!("a message's date {rfc2822:?}: {error}"))
    };
    OffsetDateTime::parse(rfc2822, &Rfc2822)
        .map_err(|error| unreadable_date(&error))?
        .format(&Rfc3339)
        .map_err(|error| unreadable_date(&error))
}

#[async_trait]
impl SmsProvider for TwilioClient {
    fn name(&self) -> &'static str {
        TWILIO_PROVIDER
    }

    async fn recent_messages(
        &self,
        number: &PhoneNumber,
        limit: usize,
    ) -> Result<Vec<ProviderSms>, ProviderError> {
        let mut messages = Vec::new();
        let page_size = limit.min(MAX_PAGE_SIZE).to_string();
        let query = [("To", number.as_str()), ("PageSize", page_size.as_str())];
        let mut next = (limit > 0).then(|| self.account_resource("Messages.json", &query));
        while let Some(url) = next {
            let page: MessagePage = self.fetch(self.client.get(url)).await?;
            let listed = page.messages.len();
            for message in page.messages.into_iter().take(limit - messages.len()) {
                messages.push(message.into_sms()?);
            }
            // An empty page ends the walk even when it points further: following it gains
            // nothing and might never end.
            next = match page.next_page_uri {
                Some(uri) if listed > 0 && messages.len() < limit => Some(self.next_page(&uri)?),
                _ => None,
            };
        }
        Ok(messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_are_read_as_flows() {
        assert_eq!(flow("inbound"), Ok(SmsFlow::Inbound));
        for outbound in ["outbound-api", "outbound-call", "outbound-reply"] {
            assert_eq!(flow(outbound), Ok(SmsFlow::Outbound), "{outbound}");
        }
        assert!(matches!(
            flow("sideways"),
            Err(ProviderError::Unavailable(_))
        ));
    }

    #[test]
    fn dates_are_converted_to_rfc3339() {
        assert_eq!(
            rfc3339("Sat, 21 Nov 2026 10:00:00 +0000").as_deref(),
            Ok("2026-11-21T10:00:00Z")
        );
        assert_eq!(
            rfc3339("Fri, 13 Aug 2010 01:16:24 +0200").as_deref(),
            Ok("2010-08-13T01:16:24+02:00")
        );
        assert!(matches!(
            rfc3339("2026-11-21T10:00:00Z"),
            Err(ProviderError::Unavailable(_))
        ));
    }
}
