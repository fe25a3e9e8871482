//! The sandbox provider's numbers: fictional ones, bought from no one.

use async_trait::async_trait;
use domain::PhoneNumber;
use ports::{NumberProvisioner, NumberReleaser, ProviderError, ProvisionedNumber};
use rand::Rng;

pub const SANDBOX_PROVIDER: &str = "sandbox";

/// Draws numbers from the North American 555 exchange, which is reserved for fiction and tests.
/// A drawn number may already belong to another agent; the store's uniqueness rule catches that
/// and the caller draws again.
#[derive(Default)]
pub struct SandboxNumberProvisioner;

#[async_trait]
impl NumberProvisioner for SandboxNumberProvisioner {
    async fn provision_number(&self) -> Result<ProvisionedNumber, ProviderError> {
        let subscriber: u32 = rand::thread_rng().gen_range(0..10_000_000);
        let candidate = format!("+1555{subscriber:07}");
        let number = PhoneNumber::parse(&candidate)
            .map_err(|error| ProviderError::Refused(format!("{candidate}: {error}")))?;
        Ok(ProvisionedNumber {
            number,
            country_iso2: Some("US".to_owned()),
            provider: SANDBOX_PROVIDER.to_owned(),
        })
    }
}

/// Sandbox numbers are bought from no one, so there is nothing to give back.
#[async_trait]
impl NumberReleaser for SandboxNumberProvisioner {
    async fn release_number(&self, _number: &PhoneNumber) -> Result<(), ProviderError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sandbox_numbers_are_us_555_numbers_in_e164() {
        let provisioned = SandboxNumberProvisioner
            .provision_number()
            .await
            .expect("provisioned");
        let number = provisioned.number.as_str();
        assert!(
            number.starts_with("+1555") && number.len() == 12,
            "{number}"
        );
        assert_eq!(provisioned.country_iso2.as_deref(), Some("US"));
        assert_eq!(provisioned.provider, "sandbox");
    }
}
