//! PostgreSQL adapters of agent-runtime: the stores behind the ports, on diesel-async with a
//! deadpool connection pool, and the embedded migrations.

mod agents;
mod audit;
mod clock;
mod connector;
mod database;
mod email;
mod errors;
mod events;
mod idempotency;
mod idempotent_requests;
mod intents;
mod keys;
mod keyset;
mod limits;
mod listings;
mod migrate;
mod notifications;
mod operators;
mod prepared;
mod rows;
mod sandbox_chain;
mod schema;
mod sms;
mod tls;
mod wallet_keys;
mod watches;
mod webhooks;

pub use agents::PgAgentStore;
pub use connector::{Connector, InvalidDatabaseUrl};
pub use database::{Database, PoolSettings};
pub use email::{
    fill_inbound_mail_facts, InboundMailText, PgEmailStore, PgSandboxMailer, SandboxMail,
};
pub use events::PgEventLog;
pub use intents::PgIntentStore;
pub use keys::PgKeyStore;
pub use migrate::{run_migrations, MIGRATIONS_FINGERPRINT};
pub use notifications::{PgNotificationHub, CHANNEL as NOTIFICATION_CHANNEL};
pub use operators::PgOperatorStore;
pub use sandbox_chain::{PgSandboxChain, SANDBOX_CHAIN_ID, SANDBOX_TOKEN_DECIMALS};
pub use sms::{PgSandboxSms, PgSmsStore};
pub use wallet_keys::PgWalletKeyStore;
pub use webhooks::PgWebhookStore;
