//! `IntentTransitions`: operators' decisions on intents, approvals counted toward the quorum and
//! other moves, each audited in its own transaction.

use async_trait::async_trait;
use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{
    Actor, Approvals, AuditAction, AuditTarget, IntentEvent, IntentId, IntentStatus,
    TransferIntentRecord, U256,
};
use ports::{Approval, ApprovalCheck, ApprovalContext, IntentTransitions, TransitionError};
use uuid::Uuid;

use super::records::approvals_of;
use super::window::wallet_and_held;
use super::{intent_record, lock_intent, move_locked, PgIntentStore};
use crate::audit::{self, AuditEntry};
use crate::errors::TxError;
use crate::rows::{u256_saturating_from_numeric, TransferIntentRow};
use crate::schema::{agents, intent_approvals, transfer_intents, wallets};

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
            intent_approvals::agent_id.eq(current.agent_id.0),
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

#[async_trait]
impl IntentTransitions for PgIntentStore {
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
