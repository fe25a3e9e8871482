//! Pure business rules of agent-runtime. Nothing here performs IO or needs an async runtime:
//! every type can only be built valid ("parse, don't validate").

pub mod agent;
pub mod amount;
pub mod contact;
pub mod cursor;
pub mod evm_address;
pub mod intent;
pub mod policy;

/// 256-bit unsigned integers, the type of every on-chain amount.
pub use alloy_primitives::U256;

pub use agent::{AgentId, AgentKey, AgentKeyError, AgentKeyHash, Label, LabelError};
pub use amount::{format_units, AtomicAmount, AtomicAmountError};
pub use contact::{EmailAddress, EmailAddressError, PhoneNumber, PhoneNumberError};
pub use cursor::{CursorCodec, CursorPosition, InvalidCursor};
pub use evm_address::{EvmAddress, EvmAddressError};
pub use intent::{IntentEvent, IntentStatus, TransitionRefused};
pub use policy::{
    evaluate_transfer, Allowlist, AllowlistChange, PolicyChange, PolicyViolation, SpendLimits,
};
