//! `AgentStore` on PostgreSQL: agents, their resources and spend policies.

use std::collections::BTreeMap;

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::keys::{AgentKeyRecord, KeyGrant, KeyId, KeyRequest, Scopes};
use domain::{
    Actor, AgentId, AgentKeyHash, AgentProfile, AtomicAmount, AuditAction, AuditTarget,
    IntentStatus, PolicyAsset, PolicyChange, Quorum, SpendPolicyRecord, WebhookEndpointRecord,
    DEACTIVATED_AGENT_REASON, ROTATED_KEY_REASON,
};
use ports::{AgentStore, NewAgent, NewKey, PolicyUpdateError, StoreError};
use serde_json::json;
use uuid::Uuid;

use crate::audit::{self, AuditEntry};
use crate::database::Database;
use crate::errors::{from_diesel, TxError};
use crate::keys::{insert_key, lock_agents_keys, revoke_tree};
use crate::rows::{
    address_column, allowlist_column, amount_from_numeric, numeric_column, recipient_limits_column,
    AgentKeyRow, AgentRow, EmailInboxRow, PhoneNumberRow, SpendPolicyRow, WalletRow,
};
use crate::schema::{
    agent_keys, agents, email_domains, email_inboxes, phone_numbers, spend_policies, sponsors,
    transfer_intents, wallet_addresses, wallets,
};
use crate::webhooks::{disable_agents_endpoints, disable_keys_endpoints};

pub struct PgAgentStore {
    database: Database,
}

impl PgAgentStore {
    pub fn new(database: Database) -> Self {
        Self { database }
    }
}

type ProfileRow = (
    AgentRow,
    Option<PhoneNumberRow>,
    Option<EmailInboxRow>,
    Option<WalletRow>,
    Option<SpendPolicyRow>,
);

/// Agents joined with all their resources, selecting every record of a profile. A macro rather
/// than a function so each use keeps a concrete query type, which diesel can prepare once and
/// cache; a boxed query would be parsed and planned again on every request.
macro_rules! profiles {
    () => {
        agents::table
            .left_join(phone_numbers::table)
            .left_join(email_inboxes::table)
            .left_join(wallets::table.left_join(spend_policies::table))
            .select((
                AgentRow::as_select(),
                Option::<PhoneNumberRow>::as_select(),
                Option::<EmailInboxRow>::as_select(),
                Option::<WalletRow>::as_select(),
                Option::<SpendPolicyRow>::as_select(),
            ))
    };
}

async fn load_profile(
    connection: &mut AsyncPgConnection,
    id: AgentId,
) -> Result<Option<AgentProfile>, TxError<StoreError>> {
    let row: Option<ProfileRow> = profiles!()
        .filter(agents::id.eq(id.0))
        .first(connection)
        .await
        .optional()?;
    row.map(into_profile).transpose().map_err(TxError::Abort)
}

fn into_profile(
    (agent, phone, inbox, wallet, policy): ProfileRow,
) -> Result<AgentProfile, StoreError> {
    let spend_policy = policy.map(SpendPolicyRow::into_record).transpose()?;
    Ok(AgentProfile {
        agent: agent.into_record()?,
        phone_number: phone.map(PhoneNumberRow::into_record).transpose()?,
        email_inbox: inbox.map(EmailInboxRow::into_record).transpose()?,
        wallet: wallet.map(|w| w.into_record(spend_policy)).transpose()?,
    })
}

async fn insert_agent(
    connection: &mut AsyncPgConnection,
    new: &NewAgent,
) -> Result<(), TxError<StoreError>> {
    let sponsor_id: Uuid = diesel::insert_into(sponsors::table)
        .values((
            sponsors::id.eq(Uuid::now_v7()),
            sponsors::name.eq(&new.sponsor),
        ))
        .on_conflict(sponsors::name)
        .do_update()
        .set(sponsors::name.eq(excluded(sponsors::name)))
        .returning(sponsors::id)
        .get_result(connection)
        .await?;
    let agent_id = new.id.0;
    diesel::insert_into(agents::table)
        .values((
            agents::id.eq(agent_id),
            agents::sponsor_id.eq(sponsor_id),
            agents::label.eq(new.label.as_ref().map(|label| label.as_str())),
        ))
        .execute(connection)
        .await?;
    insert_first_key(connection, new.id, new.key_id, new.key_hash).await?;
    if let Some(phone) = &new.phone_number {
        diesel::insert_into(phone_numbers::table)
            .values((
                phone_numbers::id.eq(Uuid::now_v7()),
                phone_numbers::agent_id.eq(agent_id),
                phone_numbers::number.eq(phone.number.as_str()),
                phone_numbers::country_iso2.eq(phone.country_iso2.as_deref()),
                phone_numbers::provider.eq(&phone.provider),
            ))
            .execute(connection)
            .await?;
    }
    if let Some(inbox) = &new.email_inbox {
        diesel::insert_into(email_inboxes::table)
            .values((
                email_inboxes::id.eq(Uuid::now_v7()),
                email_inboxes::agent_id.eq(agent_id),
                email_inboxes::address.eq(inbox.address.as_str()),
                email_inboxes::provider.eq(&inbox.provider),
            ))
            .execute(connection)
            .await?;
        // Inboxes are handed out on the domain the service is configured to serve, so a domain
        // seen first here starts verified; one an operator unverified stays so.
        let domain = inbox.address.domain().to_owned();
        diesel::insert_into(email_domains::table)
            .values((
                email_domains::name.eq(domain),
                email_domains::verified_at.eq(diesel::dsl::now),
            ))
            .on_conflict_do_nothing()
            .execute(connection)
            .await?;
    }
    if let Some(wallet) = &new.wallet {
        let wallet_id = Uuid::now_v7();
        diesel::insert_into(wallet_addresses::table)
            .values((
                wallet_addresses::address.eq(address_column(&wallet.address)),
                wallet_addresses::agent_id.eq(agent_id),
            ))
            .execute(connection)
            .await?;
        diesel::insert_into(wallets::table)
            .values((
                wallets::id.eq(wallet_id),
                wallets::agent_id.eq(agent_id),
                wallets::provider.eq(&wallet.provider),
                wallets::chain.eq(wallet.chain.as_str()),
                wallets::address.eq(address_column(&wallet.address)),
                wallets::custody.eq(wallet.custody.as_str()),
                wallets::sealed_key.eq(&wallet.sealed_key),
            ))
            .execute(connection)
            .await?;
        insert_default_policy(connection, new.id, wallet_id, &wallet.policy_asset).await?;
    }
    Ok(())
}

/// Gives the agent its first key: every scope, no expiry.
async fn insert_first_key(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    id: KeyId,
    hash: AgentKeyHash,
) -> Result<(), TxError<StoreError>> {
    let first = NewKey {
        id,
        hash,
        label: None,
        asked: KeyRequest {
            scopes: Scopes::all(),
            expires_in: None,
        },
    };
    insert_key(connection, agent, &first, &KeyGrant::first(), None, true)
        .await
        .map(drop)
}

/// Gives the wallet of `agent` a policy for `asset` with no limits, unless it already has one.
async fn insert_default_policy(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    wallet_id: Uuid,
    asset: &PolicyAsset,
) -> Result<(), diesel::result::Error> {
    diesel::insert_into(spend_policies::table)
        .values((
            spend_policies::id.eq(Uuid::now_v7()),
            spend_policies::wallet_id.eq(wallet_id),
            spend_policies::agent_id.eq(agent.0),
            spend_policies::asset.eq(asset.asset.symbol()),
            spend_policies::chain.eq(asset.chain.as_str()),
            spend_policies::decimals.eq(i16::from(asset.decimals)),
            spend_policies::token_address.eq(asset.token_address.as_ref().map(address_column)),
        ))
        .on_conflict((spend_policies::wallet_id, spend_policies::agent_id))
        .do_nothing()
        .execute(connection)
        .await?;
    Ok(())
}

/// The policy row as the audit log shows it: its rules, without its ids and times.
async fn policy_shown(
    connection: &mut AsyncPgConnection,
    policy: Uuid,
) -> Result<serde_json::Value, diesel::result::Error> {
    spend_policies::table
        .find(policy)
        .select(diesel::dsl::sql::<diesel::sql_types::Jsonb>(
            "to_jsonb(spend_policies) - 'id' - 'wallet_id' - 'agent_id' - 'created_at' \
             - 'updated_at'",
        ))
        .first(connection)
        .await
}

async fn apply_policy_change(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    asset: &PolicyAsset,
    change: &PolicyChange,
    actor: &Actor,
) -> Result<Option<SpendPolicyRecord>, TxError<PolicyUpdateError>> {
    let Some(wallet_id) = wallets::table
        .filter(wallets::agent_id.eq(agent.0))
        .select(wallets::id)
        .first::<Uuid>(connection)
        .await
        .optional()?
    else {
        return Ok(None);
    };
    insert_default_policy(connection, agent, wallet_id, asset).await?;
    // The row lock serialises concurrent changes, so an extension never loses another's addresses.
    let current = spend_policies::table
        .filter(spend_policies::wallet_id.eq(wallet_id))
        .select(SpendPolicyRow::as_select())
        .for_update()
        .first(connection)
        .await?;
    let policy_id = current.id;
    let current = current.into_record().map_err(TxError::store)?;
    if *change == PolicyChange::default() {
        return Ok(Some(current));
    }
    let rules = change
        .apply(&current.rules)
        .map_err(|refused| TxError::Abort(refused.into()))?;
    let before = policy_shown(connection, policy_id).await?;
    let amount = |cap: Option<AtomicAmount>| cap.as_ref().map(numeric_column);
    let updated = diesel::update(spend_policies::table.find(policy_id))
        .set((
            (
                spend_policies::max_per_tx_atomic.eq(amount(rules.limits.max_per_tx)),
                spend_policies::max_daily_atomic.eq(amount(rules.limits.max_daily)),
                spend_policies::max_weekly_atomic.eq(amount(rules.limits.max_weekly)),
                spend_policies::max_monthly_atomic.eq(amount(rules.limits.max_monthly)),
            ),
            spend_policies::allowlisted_addresses.eq(allowlist_column(&rules.allowlist)),
            spend_policies::recipient_limits.eq(recipient_limits_column(&rules.recipient_limits)),
            (
                spend_policies::auto_confirm_max_atomic.eq(amount(rules.auto_confirm.max)),
                spend_policies::auto_confirm_daily_atomic.eq(amount(rules.auto_confirm.daily)),
            ),
            (
                spend_policies::approvals_required
                    .eq(rules.quorum.required.map(|count| i16::from(count.get()))),
                spend_policies::approvals_required_above_atomic.eq(amount(rules.quorum.above)),
            ),
            spend_policies::x402_enabled.eq(rules.x402_enabled),
            spend_policies::updated_at.eq(diesel::dsl::now),
        ))
        .returning(SpendPolicyRow::as_returning())
        .get_result(connection)
        .await?;
    if rules.quorum != current.rules.quorum {
        require_quorum_of_pending(connection, wallet_id, &rules.quorum).await?;
    }
    if rules != current.rules {
        let after = policy_shown(connection, policy_id).await?;
        audit::record(
            connection,
            AuditEntry {
                actor,
                action: AuditAction::PolicyChange,
                target: Some(AuditTarget::Agent(agent).to_string()),
                before: Some(before),
                after: Some(after),
                reason: None,
            },
        )
        .await?;
    }
    updated.into_record().map(Some).map_err(TxError::store)
}

/// Sets the approvals each pending intent of the wallet needs by `quorum`
/// (`Quorum::required_for`), where they differ from what it needed.
async fn require_quorum_of_pending(
    connection: &mut AsyncPgConnection,
    wallet: Uuid,
    quorum: &Quorum,
) -> Result<(), TxError<PolicyUpdateError>> {
    let pending: Vec<(Uuid, BigDecimal, i16)> = transfer_intents::table
        .filter(transfer_intents::wallet_id.eq(wallet))
        .filter(transfer_intents::status.eq(IntentStatus::PendingConfirmation.as_str()))
        .select((
            transfer_intents::id,
            transfer_intents::amount_atomic,
            transfer_intents::approvals_required,
        ))
        .for_update()
        .load(connection)
        .await?;
    let mut changed: BTreeMap<i16, Vec<Uuid>> = BTreeMap::new();
    for (id, amount, required_before) in pending {
        let amount = amount_from_numeric(&amount).map_err(TxError::store)?;
        let required = i16::from(quorum.required_for(amount).get());
        if required != required_before {
            changed.entry(required).or_default().push(id);
        }
    }
    for (required, ids) in changed {
        diesel::update(transfer_intents::table.filter(transfer_intents::id.eq_any(ids)))
            .set(transfer_intents::approvals_required.eq(required))
            .execute(connection)
            .await?;
    }
    Ok(())
}

#[async_trait]
impl AgentStore for PgAgentStore {
    #[tracing::instrument(level = "debug", skip_all, fields(agent_id = %new.id))]
    async fn create(&self, new: NewAgent, actor: &Actor) -> Result<AgentProfile, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    insert_agent(connection, &new).await?;
                    let profile = load_profile(connection, new.id).await?.ok_or_else(|| {
                        TxError::Abort(StoreError::Internal("created agent vanished".into()))
                    })?;
                    audit::record(
                        connection,
                        AuditEntry {
                            actor,
                            action: AuditAction::Create,
                            target: Some(AuditTarget::Agent(new.id).to_string()),
                            before: None,
                            after: Some(json!({
                                "label": new.label.as_ref().map(|label| label.as_str()),
                                "email_inbox": new.email_inbox.is_some(),
                                "phone_number": new.phone_number.is_some(),
                                "wallet": new.wallet.is_some(),
                            })),
                            reason: None,
                        },
                    )
                    .await?;
                    Ok(profile)
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn active_profile_by_key_hash(
        &self,
        hash: &AgentKeyHash,
    ) -> Result<Option<(AgentProfile, AgentKeyRecord)>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        let row: Option<(AgentKeyRow, ProfileRow)> = agents::table
            .inner_join(agent_keys::table)
            .left_join(phone_numbers::table)
            .left_join(email_inboxes::table)
            .left_join(wallets::table.left_join(spend_policies::table))
            .filter(agent_keys::key_hash.eq(hash.as_bytes().as_slice()))
            .filter(agent_keys::revoked_at.is_null())
            .filter(agents::is_active.eq(true))
            .select((
                AgentKeyRow::as_select(),
                (
                    AgentRow::as_select(),
                    Option::<PhoneNumberRow>::as_select(),
                    Option::<EmailInboxRow>::as_select(),
                    Option::<WalletRow>::as_select(),
                    Option::<SpendPolicyRow>::as_select(),
                ),
            ))
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        row.map(|(key, profile)| Ok((into_profile(profile)?, key.into_record()?)))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn profile(&self, id: AgentId) -> Result<Option<AgentProfile>, StoreError> {
        let mut connection = self.database.read_connection().await?;
        load_profile(&mut connection, id)
            .await
            .map_err(TxError::into_error)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn list(&self) -> Result<Vec<AgentProfile>, StoreError> {
        let mut connection = self.database.connection().await?;
        let rows: Vec<ProfileRow> = profiles!()
            .order((agents::created_at.asc(), agents::id.asc()))
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter().map(into_profile).collect()
    }

    #[tracing::instrument(level = "debug", skip(self, actor))]
    async fn deactivate(&self, id: AgentId, actor: &Actor) -> Result<bool, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let Some(was_active) = agents::table
                        .find(id.0)
                        .select(agents::is_active)
                        .for_update()
                        .first::<bool>(connection)
                        .await
                        .optional()?
                    else {
                        return Ok(false);
                    };
                    diesel::update(agents::table.find(id.0))
                        .set((
                            agents::is_active.eq(false),
                            agents::updated_at.eq(diesel::dsl::now),
                        ))
                        .execute(connection)
                        .await?;
                    if was_active {
                        audit::record(
                            connection,
                            AuditEntry {
                                actor,
                                action: AuditAction::Deactivate,
                                target: Some(AuditTarget::Agent(id).to_string()),
                                before: Some(json!({ "active": true })),
                                after: Some(json!({ "active": false })),
                                reason: None,
                            },
                        )
                        .await?;
                    }
                    disable_agents_endpoints::<StoreError>(
                        connection,
                        id,
                        DEACTIVATED_AGENT_REASON,
                    )
                    .await?;
                    Ok(true)
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, hash, actor))]
    async fn replace_first_key(
        &self,
        id: AgentId,
        key_id: KeyId,
        hash: AgentKeyHash,
        actor: &Actor,
    ) -> Result<Option<Vec<WebhookEndpointRecord>>, StoreError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    if lock_agents_keys(connection, id).await?.is_none() {
                        return Ok(None);
                    }
                    let first: Option<Uuid> = agent_keys::table
                        .filter(agent_keys::agent_id.eq(id.0))
                        .filter(agent_keys::is_first)
                        .filter(agent_keys::revoked_at.is_null())
                        .select(agent_keys::id)
                        .first(connection)
                        .await
                        .optional()?;
                    let revoked = match first {
                        Some(first) => revoke_tree(connection, id, KeyId(first)).await?,
                        None => Vec::new(),
                    };
                    insert_first_key(connection, id, key_id, hash).await?;
                    diesel::update(agents::table.find(id.0))
                        .set(agents::updated_at.eq(diesel::dsl::now))
                        .execute(connection)
                        .await?;
                    // The log says the key changed, never a key or its hash.
                    audit::record(
                        connection,
                        AuditEntry {
                            actor,
                            action: AuditAction::Rotate,
                            target: Some(AuditTarget::Agent(id).to_string()),
                            before: None,
                            after: Some(json!({
                                "key_rotated": true,
                                "key_id": key_id.to_string(),
                                "revoked_key_ids": revoked
                                    .iter()
                                    .map(|(revoked, _)| revoked.to_string())
                                    .collect::<Vec<_>>(),
                            })),
                            reason: None,
                        },
                    )
                    .await?;
                    let hashes: Vec<AgentKeyHash> = revoked.iter().map(|(_, hash)| *hash).collect();
                    disable_keys_endpoints(connection, id, &hashes, ROTATED_KEY_REASON)
                        .await
                        .map(Some)
                }
                .scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn update_policy(
        &self,
        id: AgentId,
        asset: PolicyAsset,
        change: PolicyChange,
        actor: &Actor,
    ) -> Result<Option<SpendPolicyRecord>, PolicyUpdateError> {
        self.database
            .in_transaction(|connection| {
                async move { apply_policy_change(connection, id, &asset, &change, actor).await }
                    .scope_boxed()
            })
            .await
    }
}
