//! Typed identifiers: one newtype over a UUID per entity, so an intent's id cannot be passed where
//! a wallet's is expected. New ids are made by the callers (UUIDv7 from the clock), which keeps
//! this crate free of clocks and randomness.

use std::fmt;
use std::str::FromStr;

use uuid::Uuid;

macro_rules! id_types {
    ($($(#[$meta:meta])* $name:ident),* $(,)?) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub Uuid);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(text).map(Self)
            }
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                Self(id)
            }
        }

        impl From<$name> for Uuid {
            fn from(id: $name) -> Self {
                id.0
            }
        }
    )*};
}

id_types! {
    /// An agent.
    AgentId,
    /// The account that owns agents.
    SponsorId,
    /// A phone number assigned to an agent.
    PhoneNumberId,
    /// An agent's email inbox.
    EmailInboxId,
    /// A message of an email inbox, inbound or outbound.
    EmailMessageId,
    /// An SMS message of a phone number.
    SmsMessageId,
    /// An agent's wallet.
    WalletId,
    /// The spend policy of a wallet.
    SpendPolicyId,
    /// A transfer intent.
    IntentId,
    /// One executor's claim on a confirmed intent.
    LeaseId,
    /// An agent's webhook endpoint.
    WebhookEndpointId,
    /// One event's delivery to one endpoint.
    WebhookDeliveryId,
    /// An operator of the console.
    OperatorId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_and_parse_as_their_uuid() {
        let uuid = Uuid::from_u128(0x0192_0000_0000_7000_8000_0000_0000_0001);
        let id = IntentId(uuid);
        assert_eq!(id.to_string(), uuid.to_string());
        assert_eq!(id.to_string().parse::<IntentId>(), Ok(id));
        assert!("not-a-uuid".parse::<WalletId>().is_err());
        assert_eq!(Uuid::from(WalletId::from(uuid)), uuid);
    }
}
