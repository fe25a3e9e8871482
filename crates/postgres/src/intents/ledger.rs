//! `IntentLedger`: the agent's keyset pages, the operator's listing, and decisions on intents.

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel::sql_types::{Array, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
use diesel_async::RunQueryDsl;
use domain::{
    approval_counts, Actor, AgentId, Approvals, AuditAction, AuditTarget, CursorPosition,
    EvmAddress, Held, IntentEvent, IntentId, IntentStatus, Operator, OperatorAccount, OperatorId,
    OperatorRole, TransferIntentRecord, WalletId, WalletRecord, U256,
};
use ports::{
    Approval, ApprovalCheck, ApprovalContext, AttemptRecord, IntentApproval, IntentFilter,
    IntentLedger, Listing, ListingVersion, StoreError, TransitionError, UsageReading, UsageVersion,
};
use time::OffsetDateTime;
use uuid::Uuid;

use super::execution::AttemptRow;
use super::window::{read_usage_version, wallet_and_held, wallet_usage};
use super::{intent_record, lock_intent, move_locked, PgIntentStore};
use crate::audit::{self, AuditEntry};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::keyset::{before, limited_to};
use crate::listings::listing_version;
use crate::prepared::Prepared;
use crate::rows::{address_column, parse_address, u256_saturating_from_numeric, TransferIntentRow};
use crate::schema::{agents, intent_approvals, transfer_attempts, transfer_intents, wallets};

/// A recipient its wallet paid, as `paid_recipients` reads it.
#[derive(QueryableByName)]
struct PaidRecipient {
    #[diesel(sql_type = SqlUuid)]
    wallet_id: Uuid,
    #[diesel(sql_type = Text)]
    recipient_address: String,
}

/// An approval of an intent, with the account its principal names when the registry holds one.
#[derive(QueryableByName)]
struct ApprovalRow {
    #[diesel(sql_type = Text)]
    operator: String,
    #[diesel(sql_type = Timestamptz)]
    approved_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    account_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    account_role: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    account_created_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    account_disabled_at: Option<OffsetDateTime>,
}

impl ApprovalRow {
    fn into_approval(self) -> Result<IntentApproval, StoreError> {
        let approver = Operator::parse_stored(&self.operator).map_err(corrupt)?;
        let registered = match (&approver, self.account_id, self.account_role) {
            (Operator::Named(name), Some(id), Some(role)) => Some(OperatorAccount {
                id: OperatorId(id),
                name: name.clone(),
                role: OperatorRole::parse(&role).map_err(corrupt)?,
                created_at: self.account_created_at.unwrap_or(self.approved_at),
                disabled_at: self.account_disabled_at,
            }),
            _ => None,
        };
        Ok(IntentApproval {
            counts: approval_counts(&approver, registered.as_ref()),
            approver,
            approved_at: self.approved_at,
        })
    }
}

/// The intent's approvals, oldest first, each with the account its principal names as the
/// registry holds it now: whether it counts is the domain's (`approval_counts`).
async fn approvals_of<E: From<StoreError>>(
    connection: &mut AsyncPgConnection,
    id: IntentId,
) -> Result<Vec<IntentApproval>, TxError<E>> {
    let rows: Vec<ApprovalRow> = diesel::sql_query(
        "SELECT a.operator, a.approved_at, o.id AS account_id, o.role AS account_role, \
                o.created_at AS account_created_at, o.disabled_at AS account_disabled_at \
         FROM intent_approvals a \
         LEFT JOIN operators o ON a.operator = 'operator:' || o.name \
         WHERE a.intent_id = $1 \
         ORDER BY a.approved_at, a.operator",
    )
    .bind::<SqlUuid, _>(id.0)
    .load(connection)
    .await?;
    rows.into_iter()
        .map(|row| row.into_approval().map_err(TxError::store))
        .collect()
}

/// Records the approval under the intent's lock, and confirms the intent once the distinct
/// operators' approvals reach what its row requires.
async fn approve_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    actor: &Actor,
    check: &ApprovalCheck,
) -> Result<Approval, TxError<TransitionError>> {
    let approver = actor.operator.clone();
    let wallet: Option<Uuid> = transfer_intents::table
        .find(id.0)
        .select(transfer_intents::wallet_id)
        .first(connection)
        .await
        .optional()?;
    let wallet = wallet.ok_or(TxError::Abort(TransitionError::NotFound(id)))?;
    // The wallet first, as a send takes it, then the intent: approvals of one wallet are judged
    // one at a time, with its sends, against what its confirmed intents already commit.
    wallets::table
        .find(wallet)
        .select(wallets::id)
        .for_no_key_update()
        .first::<Uuid>(connection)
        .await?;
    let current = lock_intent(connection, id).await?;
    // Only a pending intent takes approvals: say so before recording one.
    current
        .status
        .apply(IntentEvent::Confirm)
        .map_err(|refused| TxError::Abort(TransitionError::Refused(refused)))?;
    let agent_active: bool = agents::table
        .find(current.agent_id.0)
        .select(agents::is_active)
        .first(connection)
        .await?;
    let (wallet_record, held) =
        wallet_and_held(connection, current.agent_id, Some(&current.recipient))
            .await
            .map_err(TxError::store)?
            .ok_or(TxError::Abort(TransitionError::NotFound(id)))?;
    let committed: Option<BigDecimal> = transfer_intents::table
        .filter(transfer_intents::wallet_id.eq(wallet))
        .filter(transfer_intents::status.eq_any([
            IntentStatus::Confirmed.as_str(),
            IntentStatus::Submitted.as_str(),
        ]))
        .select(diesel::dsl::sum(transfer_intents::amount_atomic))
        .first(connection)
        .await?;
    let verdict = check(&ApprovalContext {
        intent: &current,
        agent_active,
        policy: wallet_record.spend_policy.as_ref(),
        held,
        committed: committed
            .as_ref()
            .map_or(U256::ZERO, u256_saturating_from_numeric),
    })
    .map_err(|refused| TxError::Abort(TransitionError::Judged(refused)))?;
    let counted = diesel::insert_into(intent_approvals::table)
        .values((
            intent_approvals::intent_id.eq(id.0),
            intent_approvals::operator.eq(approver.to_string()),
        ))
        .on_conflict_do_nothing()
        .execute(connection)
        .await?
        == 1;
    // Counted afresh at every approval: one of an operator disabled since counts no more.
    let received = approvals_of(connection, id)
        .await?
        .iter()
        .filter(|approval| approval.counts)
        .count();
    let approvals = Approvals {
        received: u8::try_from(received).unwrap_or(u8::MAX),
        ..current.approvals
    };
    let intent = if approvals.are_met() {
        move_locked(
            connection,
            &current,
            IntentEvent::Confirm,
            None,
            None,
            Some(approver),
            Some(approvals),
        )
        .await?
    } else {
        let row = diesel::update(transfer_intents::table.find(id.0))
            .set((
                transfer_intents::approvals_received.eq(i16::from(approvals.received)),
                transfer_intents::decided_by.eq(approver.to_string()),
                transfer_intents::updated_at.eq(diesel::dsl::now),
            ))
            .returning(TransferIntentRow::as_returning())
            .get_result(connection)
            .await?;
        intent_record(row)?
    };
    if counted {
        audited(
            connection,
            actor,
            AuditAction::Approve,
            &current,
            &intent,
            None,
        )
        .await?;
    }
    Ok(Approval {
        intent,
        counted,
        verdict,
    })
}

/// What the audit log shows of an intent's decisions.
fn decision_state(intent: &TransferIntentRecord) -> serde_json::Value {
    serde_json::json!({
        "status": intent.status.as_str(),
        "approvals": {
            "required": intent.approvals.required,
            "received": intent.approvals.received,
        },
    })
}

/// Records `actor`'s decision moving `before` to `after`.
async fn audited(
    connection: &mut AsyncPgConnection,
    actor: &Actor,
    action: AuditAction,
    before: &TransferIntentRecord,
    after: &TransferIntentRecord,
    reason: Option<&str>,
) -> Result<(), diesel::result::Error> {
    audit::record(
        connection,
        AuditEntry {
            actor,
            action,
            target: Some(AuditTarget::Intent(after.id).to_string()),
            before: Some(decision_state(before)),
            after: Some(decision_state(after)),
            reason,
        },
    )
    .await
}

fn records(rows: Vec<TransferIntentRow>) -> Result<Vec<TransferIntentRecord>, StoreError> {
    rows.into_iter()
        .map(TransferIntentRow::into_record)
        .collect()
}

#[async_trait]
impl IntentLedger for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn page(
        &self,
        agent: AgentId,
        after: Option<CursorPosition>,
        limit: usize,
    ) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let newest_first = (
            transfer_intents::created_at.desc(),
            transfer_intents::id.desc(),
        );
        let rows = match after {
            None => {
                let page = transfer_intents::table
                    .filter(transfer_intents::agent_id.eq(agent.0))
                    .select(TransferIntentRow::as_select())
                    .order(newest_first);
                limited_to(page, limit).load(&mut connection).await
            }
            Some(position) => {
                let after = before(
                    transfer_intents::created_at,
                    transfer_intents::id,
                    &position,
                )?;
                let page = transfer_intents::table
                    .filter(transfer_intents::agent_id.eq(agent.0))
                    .filter(after)
                    .select(TransferIntentRow::as_select())
                    .order(newest_first);
                limited_to(page, limit).load(&mut connection).await
            }
        }
        .map_err(from_diesel)?;
        records(rows)
    }

    async fn listing_version(&self, agent: AgentId) -> Result<ListingVersion, StoreError> {
        listing_version(&self.database, Listing::Intents(agent)).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn find(&self, id: IntentId) -> Result<Option<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row = transfer_intents::table
            .find(id.0)
            .select(TransferIntentRow::as_select())
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        row.map(TransferIntentRow::into_record).transpose()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn list(&self, filter: IntentFilter) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        // An operator's ad-hoc listing: boxing (and re-planning) is fine off the request path.
        let mut query = transfer_intents::table
            .select(TransferIntentRow::as_select())
            .into_boxed();
        query = if filter.oldest_first {
            query.order((transfer_intents::created_at, transfer_intents::id))
        } else {
            query.order((
                transfer_intents::created_at.desc(),
                transfer_intents::id.desc(),
            ))
        };
        if let Some(limit) = filter.limit {
            query = query.limit(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        if let Some(agent) = filter.agent {
            query = query.filter(transfer_intents::agent_id.eq(agent.0));
        }
        if let Some(status) = filter.status {
            query = query.filter(transfer_intents::status.eq(status.as_str()));
        }
        if filter.decided {
            query = query
                .filter(transfer_intents::status.ne(IntentStatus::PendingConfirmation.as_str()));
        }
        if let Some(recipient) = filter.recipient {
            query =
                query.filter(transfer_intents::recipient_address.eq(address_column(&recipient)));
        }
        records(query.load(&mut connection).await.map_err(from_diesel)?)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn wallet_and_held(
        &self,
        agent: AgentId,
        recipient: Option<EvmAddress>,
    ) -> Result<Option<(WalletRecord, Held)>, StoreError> {
        let mut connection = self.database.connection().await?;
        wallet_and_held(&mut connection, agent, recipient.as_ref()).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn usage(&self, agent: AgentId) -> Result<Option<UsageReading>, StoreError> {
        let mut connection = self.database.connection().await?;
        wallet_usage(&mut connection, agent).await
    }

    async fn usage_version(
        &self,
        agent: AgentId,
        wallet: WalletId,
    ) -> Result<(UsageVersion, OffsetDateTime), StoreError> {
        let mut connection = self.database.connection().await?;
        read_usage_version(&mut connection, agent, wallet).await
    }

    async fn paid_recipients(
        &self,
        pairs: Vec<(WalletId, EvmAddress)>,
    ) -> Result<Vec<(WalletId, EvmAddress)>, StoreError> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let (wallets, recipients): (Vec<Uuid>, Vec<String>) = pairs
            .iter()
            .map(|(wallet, recipient)| (wallet.0, address_column(recipient)))
            .unzip();
        let mut connection = self.database.connection().await?;
        let paid: Vec<PaidRecipient> = Prepared(
            diesel::sql_query(
                "SELECT asked.wallet_id, asked.recipient_address \
                 FROM unnest($1::uuid[], $2::text[]) AS asked (wallet_id, recipient_address) \
                 WHERE EXISTS (SELECT 1 FROM transfer_intents AS paid \
                     WHERE paid.wallet_id = asked.wallet_id \
                       AND paid.recipient_address = asked.recipient_address \
                       AND paid.status = 'executed')",
            )
            .bind::<Array<SqlUuid>, _>(wallets)
            .bind::<Array<Text>, _>(recipients),
        )
        .load(&mut connection)
        .await
        .map_err(from_diesel)?;
        paid.into_iter()
            .map(|paid| {
                Ok((
                    WalletId(paid.wallet_id),
                    parse_address(&paid.recipient_address)?,
                ))
            })
            .collect()
    }

    #[tracing::instrument(level = "debug", skip(self, check))]
    async fn approve(
        &self,
        id: IntentId,
        approver: Actor,
        check: &ApprovalCheck,
    ) -> Result<Approval, TransitionError> {
        self.database
            .in_transaction(|connection| {
                async move { approve_locked(connection, id, &approver, check).await }.scope_boxed()
            })
            .await
    }

    async fn approvals(&self, id: IntentId) -> Result<Vec<IntentApproval>, StoreError> {
        let mut connection = self.database.connection().await?;
        approvals_of(&mut connection, id)
            .await
            .map_err(TxError::<StoreError>::into_error)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn attempts(&self, id: IntentId) -> Result<Vec<AttemptRecord>, StoreError> {
        let mut connection = self.database.connection().await?;
        let rows: Vec<(AttemptRow, TransferIntentRow, String)> = transfer_attempts::table
            .inner_join(transfer_intents::table.inner_join(wallets::table))
            .filter(transfer_attempts::intent_id.eq(id.0))
            .select((
                AttemptRow::as_select(),
                TransferIntentRow::as_select(),
                wallets::address,
            ))
            .order(transfer_attempts::created_at.desc())
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
        rows.into_iter()
            .map(|(attempt, intent, from)| attempt.into_record(&intent.into_record()?, &from))
            .collect()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn transition(
        &self,
        id: IntentId,
        event: IntentEvent,
        reason: Option<String>,
        decided_by: Actor,
    ) -> Result<TransferIntentRecord, TransitionError> {
        self.database
            .in_transaction(|connection| {
                async move {
                    let current = lock_intent(connection, id).await?;
                    let moved = move_locked(
                        connection,
                        &current,
                        event,
                        reason.clone(),
                        None,
                        Some(decided_by.operator.clone()),
                        None,
                    )
                    .await?;
                    let action = match event {
                        IntentEvent::Confirm => Some(AuditAction::Approve),
                        IntentEvent::Reject => Some(AuditAction::Reject),
                        _ => None,
                    };
                    if let Some(action) = action {
                        audited(
                            connection,
                            &decided_by,
                            action,
                            &current,
                            &moved,
                            moved.failure_reason.as_deref(),
                        )
                        .await?;
                    }
                    Ok(moved)
                }
                .scope_boxed()
            })
            .await
    }
}
