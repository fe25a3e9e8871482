//! Builds the adapters and hands them to the use cases.

use std::sync::Arc;

use app::{AgentService, ControlPlane};
use email::SandboxInboxProvisioner;
use evm::LocalKeyVault;
use ports::{AgentStore, PolicyAsset};
use postgres_store::{Database, PgAgentStore};
use sms::SandboxNumberProvisioner;

use crate::config::{DatabaseConfig, ProvisioningConfig};

/// Applies every pending migration and returns the versions applied.
pub async fn migrate(config: &DatabaseConfig) -> anyhow::Result<Vec<String>> {
    let applied = postgres_store::run_migrations(config.url()).await?;
    if !applied.is_empty() {
        tracing::info!(?applied, "applied migrations");
    }
    Ok(applied)
}

/// Applies pending migrations when configured to, then opens the pool.
pub async fn open_database(config: &DatabaseConfig) -> anyhow::Result<Database> {
    if config.migrate_on_start {
        migrate(config).await?;
    }
    Database::connect(config.url(), config.pool)
}

pub fn agent_service(database: &Database) -> AgentService {
    AgentService::new(agent_store(database))
}

pub fn control_plane(database: &Database, config: ProvisioningConfig) -> ControlPlane {
    ControlPlane::new(
        agent_store(database),
        Arc::new(SandboxInboxProvisioner::new(config.email_domain)),
        Arc::new(SandboxNumberProvisioner),
        Arc::new(LocalKeyVault::new(config.wallet_master_key)),
        PolicyAsset {
            asset: "USDC".to_owned(),
            chain: "base".to_owned(),
            decimals: 6,
            token_address: Some(config.usdc_token_address),
        },
    )
}

fn agent_store(database: &Database) -> Arc<dyn AgentStore> {
    Arc::new(PgAgentStore::new(database.clone()))
}
