//! `/v1/email`: send and reply through the outbox, the inbox, single messages and their
//! attachments.

pub(crate) mod attachments;
pub(crate) mod read;
pub(crate) mod send;
pub(crate) mod sender_rules;
