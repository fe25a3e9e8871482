//! Route handlers, one module per resource.

pub mod agents;
pub mod email;
pub mod fallback;
pub mod ops;
pub mod sms;
pub mod wallet;
pub mod webhooks;
