//! The sandbox provider's inbox provisioning: addresses on a domain it serves, no round trip.

use async_trait::async_trait;
use domain::{AgentId, EmailAddress};
use ports::{InboxProvisioner, ProviderError, ProvisionedInbox};

/// Hands out one address per agent on a domain the sandbox provider serves.
pub struct SandboxInboxProvisioner {
    domain: String,
}

pub const SANDBOX_PROVIDER: &str = "sandbox";

impl SandboxInboxProvisioner {
    pub fn new(domain: impl Into<String>) -> Self {
        Self {
            domain: domain.into(),
        }
    }
}

#[async_trait]
impl InboxProvisioner for SandboxInboxProvisioner {
    async fn provision_inbox(&self, agent: AgentId) -> Result<ProvisionedInbox, ProviderError> {
        // The agent id is unique, so the address is too, without a round trip to check.
        let candidate = format!("agent-{}@{}", agent.0.simple(), self.domain);
        let address = EmailAddress::parse(&candidate)
            .map_err(|error| ProviderError::Refused(format!("{candidate}: {error}")))?;
        Ok(ProvisionedInbox {
            address,
            provider: SANDBOX_PROVIDER.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[tokio::test]
    async fn each_agent_gets_its_own_address_on_the_sandbox_domain() {
        let provisioner = SandboxInboxProvisioner::new("inbox.agent-runtime.test");
        let one = provisioner
            .provision_inbox(AgentId(Uuid::now_v7()))
            .await
            .expect("provisioned");
        let two = provisioner
            .provision_inbox(AgentId(Uuid::now_v7()))
            .await
            .expect("provisioned");
        assert!(one.address.as_str().ends_with("@inbox.agent-runtime.test"));
        assert_ne!(one.address, two.address);
        assert_eq!(one.provider, "sandbox");
    }

    #[tokio::test]
    async fn an_invalid_domain_is_reported_not_stored() {
        let provisioner = SandboxInboxProvisioner::new("no_dots");
        let error = provisioner
            .provision_inbox(AgentId(Uuid::now_v7()))
            .await
            .expect_err("refused");
        assert!(matches!(error, ProviderError::Refused(_)));
    }
}
