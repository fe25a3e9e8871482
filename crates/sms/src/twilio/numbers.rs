//! `NumberProvisioner` and `NumberReleaser` over Twilio's phone numbers. A number is bought in
//! Twilio's two steps: the first SMS-capable local number on offer in the configured country,
//! then its purchase with this service's inbound-SMS webhook set. It is given back by deleting
//! it from the account.

use async_trait::async_trait;
use domain::PhoneNumber;
use ports::{NumberProvisioner, NumberReleaser, ProviderError, ProvisionedNumber};
use reqwest::header::CONTENT_TYPE;
use reqwest::StatusCode;
use serde::Deserialize;
use url::form_urlencoded;

use super::{unreadable, TwilioClient, TWILIO_PROVIDER};

#[derive(Deserialize)]
struct AvailableNumbers {
    available_phone_numbers: Vec<AvailableNumber>,
}

#[derive(Deserialize)]
struct AvailableNumber {
    phone_number: String,
}

#[derive(Deserialize)]
struct IncomingNumbers {
    incoming_phone_numbers: Vec<IncomingNumber>,
}

#[derive(Deserialize)]
struct IncomingNumber {
    sid: String,
    phone_number: String,
}

#[async_trait]
impl NumberProvisioner for TwilioClient {
    async fn provision_number(&self) -> Result<ProvisionedNumber, ProviderError> {
        let number = self.available_number().await?;
        self.buy(&number).await?;
        Ok(ProvisionedNumber {
            number,
            country_iso2: Some(self.country.clone()),
            provider: TWILIO_PROVIDER.to_owned(),
        })
    }
}

#[async_trait]
impl NumberReleaser for TwilioClient {
    /// A number the account no longer holds counts as released, so a release may be repeated.
    async fn release_number(&self, number: &PhoneNumber) -> Result<(), ProviderError> {
        let Some(sid) = self.owned_number_sid(number).await? else {
            return Ok(());
        };
        let url = self.account_resource(&format!("IncomingPhoneNumbers/{sid}.json"), &[]);
        let answer = self.exchange(self.client.delete(url)).await?;
        // Released by someone else between the lookup and the deletion.
        if answer.status == StatusCode::NOT_FOUND {
            return Ok(());
        }
        answer.accepted()?;
        Ok(())
    }
}

impl TwilioClient {
    /// The first SMS-capable local number on offer, checked before it is bought: a number
    /// bought that cannot be recorded would be paid for and never used.
    async fn available_number(&self) -> Result<PhoneNumber, ProviderError> {
        let url = self.account_resource(
            &format!("AvailablePhoneNumbers/{}/Local.json", self.country),
            &[("SmsEnabled", "true"), ("PageSize", "1")],
        );
        let offer: AvailableNumbers = self.fetch(self.client.get(url)).await?;
        let candidate = offer
            .available_phone_numbers
            .into_iter()
            .next()
            .ok_or_else(|| {
                ProviderError::Refused(format!("no number available in {}", self.country))
            })?;
        PhoneNumber::parse(&candidate.phone_number).map_err(|error| {
            ProviderError::Refused(format!(
                "Twilio offered {:?}: {error}",
                candidate.phone_number
            ))
        })
    }

    /// Buys `number` with Twilio posting its texts to this service's webhook. Only the status is
    /// read: once Twilio says the number is bought, it is, whatever else its answer holds.
    async fn buy(&self, number: &PhoneNumber) -> Result<(), ProviderError> {
        let form = form_urlencoded::Serializer::new(String::new())
            .append_pair("PhoneNumber", number.as_str())
            .append_pair("SmsUrl", self.sms_webhook_url.as_str())
            .append_pair("SmsMethod", "POST")
            .finish();
        let request = self
            .client
            .post(self.account_resource("IncomingPhoneNumbers.json", &[]))
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form);
        self.exchange(request).await?.accepted()?;
        Ok(())
    }

    /// The SID (`PN...`) the account holds `number` under, if it still does. Twilio's
    /// `PhoneNumber` filter also matches parts of numbers, so only an exact match counts.
    async fn owned_number_sid(
        &self,
        number: &PhoneNumber,
    ) -> Result<Option<String>, ProviderError> {
        let url = self.account_resource(
            "IncomingPhoneNumbers.json",
            &[("PhoneNumber", number.as_str())],
        );
        let owned: IncomingNumbers = self.fetch(self.client.get(url)).await?;
        owned
            .incoming_phone_numbers
            .into_iter()
            .find(|owned| owned.phone_number == number.as_str())
            .map(|owned| path_safe(owned.sid))
            .transpose()
    }
}

/// The SID goes into a URL path: anything but letters and digits could lead elsewhere.
fn path_safe(sid: String) -> Result<String, ProviderError> {
    if !sid.is_empty() && sid.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(sid)
    } else {
        Err(unreadable(format!("a phone number's SID {sid:?}")))
    }
}
