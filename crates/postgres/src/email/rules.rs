//! `SenderRuleStore`: each agent's sender rules, one row per agent that has set any or has had
//! mail kept out, and the count of what they kept out.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Text, Uuid as SqlUuid};
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use domain::{AgentId, SenderRules};
use ports::{SenderRuleStore, StoreError};
use uuid::Uuid;

use super::PgEmailStore;
use crate::errors::{corrupt, from_diesel};
use crate::schema::email_sender_rules;

/// The rules as stored: written by `set_sender_rules` from valid rules, so read back valid.
fn rules_from(allow: &[String], block: &[String]) -> Result<SenderRules, StoreError> {
    SenderRules::new(allow, block).map_err(|_| corrupt("stored sender rules are not valid"))
}

#[async_trait]
impl SenderRuleStore for PgEmailStore {
    async fn sender_rules(&self, agent: AgentId) -> Result<(SenderRules, u64), StoreError> {
        let mut connection = self.database.connection().await?;
        let row: Option<(Vec<String>, Vec<String>, i64)> = email_sender_rules::table
            .find(agent.0)
            .select((
                email_sender_rules::allow_list,
                email_sender_rules::block_list,
                email_sender_rules::kept_out_count,
            ))
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        match row {
            None => Ok((SenderRules::default(), 0)),
            Some((allow, block, kept_out)) => Ok((
                rules_from(&allow, &block)?,
                u64::try_from(kept_out).unwrap_or(0),
            )),
        }
    }

    async fn set_sender_rules(
        &self,
        agent: AgentId,
        rules: &SenderRules,
    ) -> Result<u64, StoreError> {
        let (allow, block) = rules.texts();
        let mut connection = self.database.connection().await?;
        let kept_out: i64 = diesel::insert_into(email_sender_rules::table)
            .values((
                email_sender_rules::agent_id.eq(agent.0),
                email_sender_rules::allow_list.eq(allow),
                email_sender_rules::block_list.eq(block),
            ))
            .on_conflict(email_sender_rules::agent_id)
            .do_update()
            .set((
                email_sender_rules::allow_list.eq(excluded(email_sender_rules::allow_list)),
                email_sender_rules::block_list.eq(excluded(email_sender_rules::block_list)),
                email_sender_rules::updated_at.eq(diesel::dsl::now),
            ))
            .returning(email_sender_rules::kept_out_count)
            .get_result(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(u64::try_from(kept_out).unwrap_or(0))
    }

    async fn rules_of(
        &self,
        agents: &[AgentId],
    ) -> Result<Vec<(AgentId, SenderRules)>, StoreError> {
        let ids: Vec<Uuid> = agents.iter().map(|agent| agent.0).collect();
        let mut connection = self.database.connection().await?;
        let rows: Vec<(Uuid, Vec<String>, Vec<String>)> = email_sender_rules::table
            .filter(email_sender_rules::agent_id.eq_any(&ids))
            .select((
                email_sender_rules::agent_id,
                email_sender_rules::allow_list,
                email_sender_rules::block_list,
            ))
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter()
            .map(|(agent, allow, block)| Ok((AgentId(agent), rules_from(&allow, &block)?)))
            .collect()
    }

    async fn count_kept_out(&self, agent: AgentId, delivery_key: &str) -> Result<bool, StoreError> {
        let mut connection = self.database.connection().await?;
        let counted = diesel::sql_query(COUNT_KEPT_OUT)
            .bind::<SqlUuid, _>(agent.0)
            .bind::<Text, _>(delivery_key)
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        Ok(counted == 1)
    }
}

/// Remembers the delivery ($2) kept out of agent $1's inbox and counts it, unless it was
/// remembered already; forgets the agent's deliveries kept out over a week ago in passing.
const COUNT_KEPT_OUT: &str = "
    WITH remembered AS (
        INSERT INTO email_kept_out_deliveries (agent_id, delivery_key) VALUES ($1, $2)
        ON CONFLICT DO NOTHING
        RETURNING agent_id
    ), forgotten AS (
        DELETE FROM email_kept_out_deliveries
        WHERE agent_id = $1 AND kept_out_at < now() - interval '7 days'
    )
    INSERT INTO email_sender_rules (agent_id, kept_out_count)
    SELECT agent_id, 1 FROM remembered
    ON CONFLICT (agent_id) DO UPDATE
    SET kept_out_count = email_sender_rules.kept_out_count + 1";
