//! Pure business rules of agent-runtime. Nothing here performs IO or needs an async runtime:
//! every type can only be built valid ("parse, don't validate").

pub mod agent;
pub mod amount;
pub mod contact;
pub mod evm_address;
pub mod policy;

pub use agent::{AgentId, AgentKey, AgentKeyError, AgentKeyHash, Label, LabelError};
pub use amount::{AtomicAmount, AtomicAmountError};
pub use contact::{EmailAddress, EmailAddressError, PhoneNumber, PhoneNumberError};
pub use evm_address::{EvmAddress, EvmAddressError};
pub use policy::{Allowlist, AllowlistChange, PolicyChange, SpendLimits};
