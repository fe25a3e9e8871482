//! Builds the adapters and hands them to the use cases: the only place where they meet.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use app::{
    AgentAdmin, AgentAdminPorts, AgentService, AttachmentSweep, AuthCache, AuthorizationWatcher,
    ChainResolution, ChainResolutionPorts, CodePorts, CodeService, ConsoleAccess, ConsoleStores,
    DecisionPorts, DecisionStores, DecisionWaits, EventAdmin, EventPorts, EventService, Executor,
    IntentDecisions, IntentExpiry, KeyService, LeasedWorker, LongLived, MailIntakePorts,
    MailIntakeService, MailServices, MailboxPorts, MailboxService, ObjectStorage, OperatorServices,
    OutboundMailPorts, OutboundMailService, OutboxWorker, PolicyAdmin, QueueSettings, Services,
    SmsPorts, SmsService, WalletKeyRotation, WalletService, WalletStores, WebhookAttempt,
    WebhookService, X402Ports,
};
use domain::{CursorCodec, PolicyAsset, RetryRule};
use email::{MailParserInbound, MailWebhook, ResendSender, SandboxInboxProvisioner, SmtpSender};
use evm::{LocalKeyVault, LocalReceiptSigner, RpcChain};
use passkeys::{NoPasskeys, WebauthnPasskeys};
use ports::{
    AgentStore, AttachmentContent, ChainClient, ChainWriter, EmailSender, EventLog,
    InboundMailWebhook, InboundSmsWebhook, KeyStore, Notifications, NumberProvisioner,
    NumberReleaser, Passkeys, SmsProvider, WebhookDelivery,
};
pub use postgres_store::Database;
use postgres_store::{
    PgAgentStore, PgEmailStore, PgEventLog, PgIntentStore, PgKeyStore, PgNotificationHub,
    PgOperatorStore, PgSandboxChain, PgSandboxMailer, PgSandboxSms, PgSmsStore, PgWalletKeyStore,
    PgWebhookStore,
};
use sms::{SandboxNumberProvisioner, TwilioClient, TwilioWebhook};
use webhook_delivery::{FetchSettings, HttpResourceFetcher, HttpWebhookPoster, PosterSettings};

use crate::config::{
    AttachmentStore, ChainConfig, DatabaseConfig, EmailConfig, EmailProvider, IntentConfig,
    ProvisioningConfig, ServicesConfig, SmsConfig, SmsProviderConfig, WebhookConfig,
};
use crate::timer::TokioTimer;

/// Applies every pending migration, fills what a migration left for Rust to fill, and returns
/// the versions applied.
pub async fn migrate(config: &DatabaseConfig) -> anyhow::Result<Vec<String>> {
    let applied = postgres_store::run_migrations(&config.connector).await?;
    if !applied.is_empty() {
        tracing::info!(?applied, "applied migrations");
    }
    let filled = postgres_store::fill_inbound_mail_facts(&config.connector, |mail| {
        let text = text_mining::mail_text(mail.subject, mail.text);
        (
            email::sender_authentication(mail.headers, mail.from),
            text_mining::recognise_service(&text),
        )
    })
    .await?;
    if filled > 0 {
        tracing::info!(filled, "read the sender and service of older inbound mail");
    }
    Ok(applied)
}

/// Applies pending migrations when configured to, then opens the pool.
pub async fn open_database(config: &DatabaseConfig) -> anyhow::Result<Database> {
    if config.migrate_on_start {
        migrate(config).await?;
    }
    Database::connect(&config.connector, config.pool)
}

/// Every use case, built once for every way in (the server, `agentctl`), with the future that
/// keeps the authentication cache true: spawn it where the services live long.
pub fn services(
    database: &Database,
    hub: Arc<PgNotificationHub>,
    chain: &Chain,
    config: &ServicesConfig,
) -> anyhow::Result<(Services, impl Future<Output = ()> + Send)> {
    let notifications: Arc<dyn Notifications> = hub.clone();
    let (agents, auth_cache_follower) = agent_service(database, notifications.clone());
    let sms = sms_service(database, &config.sms)?;
    let long_lived = LongLived::new(config.long_lived);
    let codes = code_service(database, notifications.clone(), long_lived.clone(), &sms);
    let decisions = DecisionWaits::new(
        DecisionPorts {
            agents: agent_store(database),
            records: intent_store(database),
            notifications: notifications.clone(),
            timer: Arc::new(TokioTimer),
        },
        long_lived.clone(),
    );
    let events = EventService::new(
        EventPorts {
            log: Arc::new(PgEventLog::new(database.clone())),
            agents: agent_store(database),
            notifications: notifications.clone(),
            timer: Arc::new(TokioTimer),
        },
        long_lived.clone(),
    );
    let webhook_store = Arc::new(PgWebhookStore::new(database.clone()));
    let webhooks = WebhookService::new(
        webhook_store.clone(),
        webhook_store,
        config.events.webhooks.targets,
        config.cursors.codec(),
    );
    let services = Services {
        agents,
        keys: KeyService::new(key_store(database), hub.clone()),
        wallets: wallet_service(
            database,
            chain,
            &config.provisioning,
            &config.intents,
            config.cursors.codec(),
        )?,
        mail: mail_services(
            database,
            &config.email,
            config.cursors.codec(),
            long_lived.clone(),
        )?,
        sms,
        codes,
        decisions,
        events,
        webhooks,
        long_lived,
        operator: operator_services(database, config, chain, hub)?,
    };
    Ok((services, auth_cache_follower))
}

/// Keys that authenticated are kept in memory, emptied on every profile change (decision 0030).
const AUTH_CACHE_CAPACITY: usize = 100_000;
/// The longest an authenticated key is trusted without reading it again, should the hub's
/// connection die unnoticed.
const AUTH_CACHE_MAX_AGE: Duration = Duration::from_secs(60);

/// Agents' authentication with its cache, and the future that keeps the cache true: spawn it.
fn agent_service(
    database: &Database,
    notifications: Arc<dyn Notifications>,
) -> (AgentService, impl Future<Output = ()> + Send) {
    let (cache, follower) =
        AuthCache::start(notifications, AUTH_CACHE_CAPACITY, AUTH_CACHE_MAX_AGE);
    (
        AgentService::new(agent_store(database), key_store(database)).with_cache(cache),
        follower,
    )
}

/// USDC on Base, at the configured token contract: the asset wallets send and policies govern.
fn usdc(config: &ProvisioningConfig) -> PolicyAsset {
    PolicyAsset::usdc_on_base(config.usdc_token_address)
}

/// The chain wallets live on, for reading and for sending.
pub struct Chain {
    pub reader: Arc<dyn ChainClient>,
    pub writer: Arc<dyn ChainWriter>,
}

/// A node's JSON-RPC when one is configured, else the sandbox chain in PostgreSQL.
pub fn chain(database: &Database, config: &ChainConfig) -> anyhow::Result<Chain> {
    Ok(match &config.rpc_url {
        Some(url) => {
            let rpc = Arc::new(RpcChain::connect(url, config.rpc_timeout)?);
            Chain {
                reader: rpc.clone(),
                writer: rpc,
            }
        }
        None => {
            let sandbox = Arc::new(PgSandboxChain::new(database.clone()));
            Chain {
                reader: sandbox.clone(),
                writer: sandbox,
            }
        }
    })
}

fn wallet_service(
    database: &Database,
    chain: &Chain,
    config: &ProvisioningConfig,
    intents: &IntentConfig,
    cursors: CursorCodec,
) -> anyhow::Result<WalletService> {
    let store = intent_store(database);
    let fetcher = Arc::new(HttpResourceFetcher::new(FetchSettings {
        targets: intents.fetch_targets,
        ..FetchSettings::default()
    })?);
    Ok(WalletService::new(
        WalletStores {
            agents: agent_store(database),
            admission: store.clone(),
            records: store.clone(),
            usage: store.clone(),
        },
        X402Ports::new(
            store,
            key_vault(config),
            chain.writer.clone(),
            fetcher,
            intents.fetch_targets,
        ),
        Arc::new(LocalReceiptSigner::new(
            config.receipt_signing_key,
            &config.previous_receipt_signing_keys,
        )),
        chain.reader.clone(),
        cursors,
        usdc(config),
        intents.send_limits,
    ))
}

/// The executor of confirmed intents.
pub fn executor(
    database: &Database,
    chain: &Chain,
    config: &ProvisioningConfig,
    intents: &IntentConfig,
) -> Executor {
    let store = intent_store(database);
    Executor::new(
        store.clone(),
        store,
        chain.writer.clone(),
        key_vault(config),
        intents.execution,
    )
}

/// Re-sealing of every wallet key under the current master key, after a rotation.
pub fn wallet_key_rotation(database: &Database, config: &ProvisioningConfig) -> WalletKeyRotation {
    WalletKeyRotation::new(
        Arc::new(PgWalletKeyStore::new(database.clone())),
        key_vault(config),
    )
}

/// The settlement watch of x402 authorizations handed out.
pub fn authorization_watcher(
    database: &Database,
    chain: &Chain,
    config: &IntentConfig,
) -> AuthorizationWatcher {
    AuthorizationWatcher::new(
        intent_store(database),
        chain.reader.clone(),
        chain.writer.clone(),
        config.authorization_watch,
    )
}

pub fn intent_expiry(database: &Database, config: &IntentConfig) -> IntentExpiry {
    IntentExpiry::new(intent_store(database), config.pending_ttl)
}

/// Email for agents: the outbox, the inbox, and inbound mail through the provider's webhook.
fn mail_services(
    database: &Database,
    config: &EmailConfig,
    cursors: CursorCodec,
    long_lived: Arc<LongLived>,
) -> anyhow::Result<MailServices> {
    let store =
        Arc::new(PgEmailStore::new(database.clone()).with_search_timeout(config.search_timeout));
    let (attachments, objects) = attachment_bytes(&store, &config.attachment_store);
    let webhook: Option<Arc<dyn InboundMailWebhook>> = match config.webhook_secrets.is_empty() {
        true => None,
        false => Some(Arc::new(MailWebhook::new(
            config.webhook_secrets.iter().cloned(),
        )?)),
    };
    Ok(MailServices {
        outbound: OutboundMailService::new(
            OutboundMailPorts {
                mailbox: store.clone(),
                outbox: store.clone(),
                attachments: attachments.clone(),
                objects: objects.clone(),
            },
            config.send_rates,
        ),
        mailbox: MailboxService::new(
            MailboxPorts {
                mailbox: store.clone(),
                attachments,
                rules: store.clone(),
            },
            cursors,
            long_lived,
        ),
        intake: MailIntakeService::new(MailIntakePorts {
            inbound: store.clone(),
            parser: Arc::new(MailParserInbound),
            webhook,
            rules: store,
            objects,
        })
        .with_attachment_max_bytes(config.attachment_max_bytes),
    })
}

/// The worker that hands queued mail to the configured provider.
pub fn outbox_worker(database: &Database, config: &EmailConfig) -> anyhow::Result<OutboxWorker> {
    let sender: Arc<dyn EmailSender> = match &config.provider {
        EmailProvider::Sandbox => Arc::new(sandbox_mailer(database)),
        EmailProvider::Smtp(settings) => Arc::new(SmtpSender::new(settings.clone())?),
        EmailProvider::Resend(settings) => Arc::new(ResendSender::new(settings.clone())?),
    };
    let store = Arc::new(PgEmailStore::new(database.clone()));
    let (attachments, _) = attachment_bytes(&store, &config.attachment_store);
    Ok(OutboxWorker::outbox(
        store,
        sender,
        attachments,
        config.outbox,
    ))
}

/// Where attachment bytes are read from, and the object store they are put in when they are
/// not kept in the database.
fn attachment_bytes(
    store: &Arc<PgEmailStore>,
    config: &AttachmentStore,
) -> (Arc<dyn AttachmentContent>, Option<ObjectStorage>) {
    match config {
        AttachmentStore::Database => (store.clone(), None),
        AttachmentStore::S3 { store: objects, .. } => (
            objects.clone(),
            Some(ObjectStorage {
                objects: objects.clone(),
                uploads: store.clone(),
            }),
        ),
    }
}

/// The sweep of attachment bytes no stored message owns, when they live in an object store; with
/// how often it runs.
pub fn attachment_sweep(
    database: &Database,
    config: &EmailConfig,
) -> Option<(AttachmentSweep, Duration)> {
    let AttachmentStore::S3 {
        sweep_after,
        sweep_interval,
        ..
    } = &config.attachment_store
    else {
        return None;
    };
    let store = Arc::new(PgEmailStore::new(database.clone()));
    let (_, objects) = attachment_bytes(&store, &config.attachment_store);
    objects.map(|storage| (AttachmentSweep::new(storage, *sweep_after), *sweep_interval))
}

/// The worker that posts queued webhook deliveries, each attempt within the configured timeout
/// to addresses checked at that attempt.
pub fn webhook_worker(
    database: &Database,
    config: &WebhookConfig,
) -> anyhow::Result<LeasedWorker<WebhookDelivery>> {
    let poster = HttpWebhookPoster::new(PosterSettings {
        timeout: config.timeout,
        targets: config.targets,
        ..PosterSettings::default()
    })?;
    let store = Arc::new(PgWebhookStore::new(database.clone()));
    Ok(LeasedWorker::new(
        store.clone(),
        Arc::new(WebhookAttempt::new(store, Arc::new(poster))),
        QueueSettings {
            // Past any attempt's end, so an attempt in progress is never started twice.
            lease: config.timeout + WEBHOOK_LEASE_MARGIN,
            retry: RetryRule::AtOffsets(config.schedule),
            places_per_owner: Some(config.places_per_agent),
        },
    ))
}

/// How much longer than an attempt's timeout a delivery's lease lasts.
const WEBHOOK_LEASE_MARGIN: Duration = Duration::from_secs(30);

/// The event log, for the job that prunes it.
pub fn event_log(database: &Database) -> Arc<dyn EventLog> {
    Arc::new(PgEventLog::new(database.clone()))
}

/// The sandbox email provider, for operators reading what it was handed.
pub fn sandbox_mailer(database: &Database) -> PgSandboxMailer {
    PgSandboxMailer::new(database.clone())
}

/// The instance's notification hub: one listening connection, started here.
pub fn notification_hub(config: &DatabaseConfig) -> Arc<PgNotificationHub> {
    Arc::new(PgNotificationHub::start(config.connector.clone()))
}

/// SMS for agents: the number's history synced from the provider and inbound messages from its
/// webhook.
fn sms_service(database: &Database, config: &SmsConfig) -> anyhow::Result<SmsService> {
    type Webhook = Option<Arc<dyn InboundSmsWebhook>>;
    let (provider, webhook): (Arc<dyn SmsProvider>, Webhook) = match &config.provider {
        SmsProviderConfig::Sandbox => (Arc::new(sandbox_sms(database)), None),
        SmsProviderConfig::Twilio {
            settings,
            auth_token,
        } => {
            let webhook = config.public_base_url.clone().map(|public_base_url| {
                anyhow::Ok(
                    Arc::new(TwilioWebhook::new(auth_token.clone(), public_base_url)?)
                        as Arc<dyn InboundSmsWebhook>,
                )
            });
            (
                Arc::new(TwilioClient::new(settings.as_ref().clone())?),
                webhook.transpose()?,
            )
        }
    };
    Ok(SmsService::new(
        SmsPorts {
            store: Arc::new(PgSmsStore::new(database.clone())),
            provider,
            webhook,
        },
        config.sync_fresh_for,
    ))
}

/// Waits for a code over SMS, mail or both, woken through `notifications`, each holding a place
/// in `long_lived`; a wait on SMS syncs the number through `sms`'s provider syncs.
fn code_service(
    database: &Database,
    notifications: Arc<dyn Notifications>,
    long_lived: Arc<LongLived>,
    sms: &SmsService,
) -> CodeService {
    CodeService::new(
        CodePorts {
            agents: agent_store(database),
            sms: Arc::new(PgSmsStore::new(database.clone())),
            email: Arc::new(PgEmailStore::new(database.clone())),
            notifications,
            timer: Arc::new(TokioTimer),
        },
        long_lived,
        sms.provider_sync(),
    )
}

/// The sandbox SMS provider, for operators delivering sandbox messages.
pub fn sandbox_sms(database: &Database) -> PgSandboxSms {
    PgSandboxSms::new(database.clone())
}

/// The sandbox chain, for operators crediting sandbox balances.
pub fn sandbox_chain(database: &Database) -> PgSandboxChain {
    PgSandboxChain::new(database.clone())
}

fn operator_services(
    database: &Database,
    services: &ServicesConfig,
    chain: &Chain,
    hub: Arc<PgNotificationHub>,
) -> anyhow::Result<OperatorServices> {
    let (config, sms) = (&services.provisioning, &services.sms);
    let (numbers, releaser): (Arc<dyn NumberProvisioner>, Arc<dyn NumberReleaser>) =
        match &sms.provider {
            SmsProviderConfig::Sandbox => (
                Arc::new(SandboxNumberProvisioner),
                Arc::new(SandboxNumberProvisioner),
            ),
            SmsProviderConfig::Twilio { settings, .. } => {
                let twilio = Arc::new(TwilioClient::new(settings.as_ref().clone())?);
                (twilio.clone(), twilio)
            }
        };
    let agents = agent_store(database);
    let intents = intent_store(database);
    let webhooks = Arc::new(PgWebhookStore::new(database.clone()));
    let operators = Arc::new(PgOperatorStore::new(database.clone()));
    Ok(OperatorServices {
        agents: AgentAdmin::new(
            AgentAdminPorts {
                agents: agents.clone(),
                wallet_keys: Arc::new(PgWalletKeyStore::new(database.clone())),
                inboxes: Arc::new(SandboxInboxProvisioner::new(config.email_domain.clone())),
                numbers,
                releaser,
                vault: key_vault(config),
                barrier: hub.clone(),
            },
            usdc(config),
        ),
        policies: PolicyAdmin::new(agents.clone(), intents.clone(), usdc(config)),
        decisions: IntentDecisions::new(
            DecisionStores {
                agents,
                intents: intents.clone(),
                usage: intents.clone(),
                transitions: intents.clone(),
                notifications: hub,
                chain: chain.reader.clone(),
            },
            config.usdc_token_address,
            services.intents.pending_ttl,
        ),
        resolution: ChainResolution::new(ChainResolutionPorts {
            intents: intents.clone(),
            chain: chain.writer.clone(),
            settlement: intents,
        }),
        events: EventAdmin::new(
            Arc::new(PgEventLog::new(database.clone())),
            webhooks.clone(),
            webhooks.clone(),
            webhooks,
        ),
        console: ConsoleAccess::new(
            ConsoleStores {
                accounts: operators.clone(),
                sessions: operators.clone(),
                tokens: operators.clone(),
                audit: operators,
            },
            console_passkeys(&services.console_url),
            services.console_url.clone(),
        ),
    })
}

/// The console's passkeys; where its URL cannot carry them, none, said at start and by every
/// ceremony: the rest of the service runs.
fn console_passkeys(console_url: &str) -> Arc<dyn Passkeys> {
    match WebauthnPasskeys::new(console_url) {
        Ok(passkeys) => Arc::new(passkeys),
        Err(why) => {
            let why = format!("PUBLIC_BASE_URL: {why}; the operator console cannot sign anyone in");
            tracing::warn!("{why}");
            Arc::new(NoPasskeys::new(why))
        }
    }
}

/// Refuses a master key that does not open the wallets already stored: a server or CLI with the
/// wrong (or the public sandbox) key would seal new wallets nothing else opens and could sign for
/// none of the old ones. A database that cannot be reached now is no reason to refuse start-up:
/// the check is skipped, and an executor with a wrong key only ever waits (it fails no intent).
pub async fn check_master_key(
    database: &Database,
    config: &ProvisioningConfig,
) -> anyhow::Result<()> {
    match wallet_key_rotation(database, config)
        .vault_opens_stored_keys()
        .await
    {
        Ok(true) => Ok(()),
        Err(error) => {
            tracing::warn!(%error, "could not check WALLET_MASTER_KEY against the stored wallets");
            Ok(())
        }
        Ok(false) => anyhow::bail!(
            "WALLET_MASTER_KEY does not open the wallets already in this database: set it to the \
             key they were sealed under (and WALLET_MASTER_KEY_PREVIOUS during a rotation)"
        ),
    }
}

/// The vault of wallet keys: seals under the current master key, opens under it or, during a
/// rotation, under the previous one.
fn key_vault(config: &ProvisioningConfig) -> Arc<LocalKeyVault> {
    let vault = LocalKeyVault::new(config.wallet_master_key.clone());
    Arc::new(match &config.previous_wallet_master_key {
        Some(previous) => vault.also_opening(previous.clone()),
        None => vault,
    })
}

fn key_store(database: &Database) -> Arc<dyn KeyStore> {
    Arc::new(PgKeyStore::new(database.clone()))
}

fn agent_store(database: &Database) -> Arc<dyn AgentStore> {
    Arc::new(PgAgentStore::new(database.clone()))
}

/// One store behind the intent ports; each use case sees only the port it needs.
fn intent_store(database: &Database) -> Arc<PgIntentStore> {
    Arc::new(PgIntentStore::new(database.clone()))
}
