//! SMS provider adapters of agent-runtime: Twilio's messages and numbers over its REST API, the
//! check of Twilio's webhook signatures, and the sandbox provider's number provisioning.

mod sandbox_numbers;
mod signature;
mod twilio;

pub use sandbox_numbers::{SandboxNumberProvisioner, SANDBOX_PROVIDER};
pub use signature::{sign, InvalidTwilioAuthToken, TwilioSignatureVerifier};
pub use twilio::{
    InvalidTwilioSettings, TwilioClient, TwilioSettings, TWILIO_BASE_URL, TWILIO_PROVIDER,
};
