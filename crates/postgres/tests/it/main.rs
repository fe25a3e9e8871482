//! Store tests against real PostgreSQL: each test has a database of its own.

mod agents;
mod email;
mod events;
mod intents;
mod migrations;
mod operators;
mod sandbox_chain;
mod sms;
mod tls;
mod wallet_keys;

/// The operator the tests act as, on the control plane's host.
pub fn actor() -> domain::Actor {
    domain::Actor::local(domain::Operator::Cli { user: None })
}
