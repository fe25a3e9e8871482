//! Mail: the rules of sending it (`email`), what is kept of what outside senders write
//! (`inbound`), attachments, what an inbox search asks (`search`) and which senders an inbox
//! takes (`sender_rules`).

pub mod attachments;
pub mod email;
pub mod inbound;
pub mod search;
pub mod sender_rules;
