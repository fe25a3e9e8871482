//! x402 payments beside their intents (`x402_payments`): the offer stored at admission, the
//! authorization recorded before it is handed out (sign, record, then hand out), and the payment
//! read back wherever an intent is shown.

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::x402::{AuthorizationWindow, ChosenOffer, SettlementResponse};
use domain::{
    AgentId, IntentEvent, IntentId, IntentKind, IntentStatus, TransferIntentRecord, WalletId,
    X402Payment, X402Resource,
};
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use ports::{
    RecordedAuthorization, SignedAuthorization, SigningBasis, StoreError, TransitionError,
    X402Authorizations,
};
use serde_json::{json, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{lock_intent, move_locked, PgIntentStore};
use crate::errors::{corrupt, from_diesel, TxError};
use crate::prepared::Prepared;
use crate::rows::parse_address;
use crate::schema::{chain_heads, wallets, x402_payments};

#[derive(Queryable, Selectable)]
#[diesel(table_name = x402_payments, check_for_backend(diesel::pg::Pg))]
pub(super) struct PaymentRow {
    intent_id: Uuid,
    resource_url: Option<String>,
    network: String,
    nonce: Option<Vec<u8>>,
    valid_before: Option<OffsetDateTime>,
    payment_response: Option<Value>,
}

impl PaymentRow {
    pub(super) fn into_payment(self) -> Result<X402Payment, StoreError> {
        let nonce = self
            .nonce
            .map(|nonce| {
                <[u8; 32]>::try_from(nonce.as_slice())
                    .map_err(|_| corrupt(format!("the x402 nonce of intent {}", self.intent_id)))
            })
            .transpose()?;
        let payment_response = match self.payment_response {
            None => None,
            Some(Value::Object(object)) => Some(object),
            Some(_) => return Err(corrupt("an x402 payment response that is not an object")),
        };
        Ok(X402Payment {
            resource: X402Resource {
                network: self.network,
                resource_url: self.resource_url,
            },
            nonce,
            valid_before: self.valid_before,
            payment_response,
        })
    }
}

/// The offer as stored: what the payment header echoes, enough to sign it again.
fn offer_column(offer: &ChosenOffer) -> Value {
    json!({
        "x402Version": offer.version.number(),
        "accepted": offer.accepted,
        "resource": offer.resource,
    })
}

/// Stores the offer an x402 intent pays, in the transaction that admits it, with its
/// authorization when it was signed there; the payment's row as stored. A future that holds no
/// borrow of the connection, so it can go out with the statements beside it.
pub(super) fn insert_payment(
    connection: &mut AsyncPgConnection,
    intent: IntentId,
    agent: AgentId,
    wallet: WalletId,
    offer: &ChosenOffer,
    signed: Option<&SignedAuthorization>,
) -> BoxFuture<'static, QueryResult<PaymentRow>> {
    Prepared(
        diesel::insert_into(x402_payments::table)
            .values((
                x402_payments::intent_id.eq(intent.0),
                x402_payments::agent_id.eq(agent.0),
                x402_payments::wallet_id.eq(wallet.0),
                x402_payments::offer.eq(offer_column(offer)),
                x402_payments::resource_url.eq(offer.resource_url.clone()),
                x402_payments::network.eq(offer.network.clone()),
                x402_payments::nonce.eq(signed.map(|signed| signed.nonce.to_vec())),
                x402_payments::valid_after.eq(signed.map(|signed| window_start(&signed.window))),
                x402_payments::valid_before
                    .eq(signed.map(|signed| signed.window.valid_before_time())),
                x402_payments::payment.eq(signed.map(|signed| signed.payment.clone())),
                x402_payments::watch_from_block
                    .eq(signed.map(|signed| block_column(signed.watch_from_block))),
            ))
            .returning(PaymentRow::as_returning()),
    )
    .get_result(connection)
    .boxed()
}

/// The payment of each x402 intent among `intents`, read in one query (none when there is none).
pub(super) async fn attach_payments(
    connection: &mut AsyncPgConnection,
    intents: &mut [TransferIntentRecord],
) -> Result<(), StoreError> {
    let ids: Vec<Uuid> = intents
        .iter()
        .filter(|intent| intent.kind == IntentKind::X402)
        .map(|intent| intent.id.0)
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    let rows: Vec<PaymentRow> = x402_payments::table
        .filter(x402_payments::intent_id.eq_any(&ids))
        .select(PaymentRow::as_select())
        .load(connection)
        .await
        .map_err(from_diesel)?;
    for row in rows {
        let id = row.intent_id;
        let payment = row.into_payment()?;
        if let Some(intent) = intents.iter_mut().find(|intent| intent.id.0 == id) {
            intent.x402 = Some(payment);
        }
    }
    match intents
        .iter()
        .find(|intent| intent.kind == IntentKind::X402 && intent.x402.is_none())
    {
        Some(missing) => Err(corrupt(format!(
            "x402 intent {} has no payment row",
            missing.id
        ))),
        None => Ok(()),
    }
}

/// `intent` with its payment, when it is an x402 intent.
pub(super) async fn with_payment(
    connection: &mut AsyncPgConnection,
    intent: TransferIntentRecord,
) -> Result<TransferIntentRecord, StoreError> {
    let mut intents = [intent];
    attach_payments(connection, &mut intents).await?;
    let [intent] = intents;
    Ok(intent)
}

/// `intent` with its payment and the payment header recorded for it, in one read of its row;
/// `None` until it was signed.
async fn recorded_locked(
    connection: &mut AsyncPgConnection,
    mut intent: TransferIntentRecord,
) -> Result<Option<RecordedAuthorization>, StoreError> {
    let found: Option<(PaymentRow, Option<String>)> = x402_payments::table
        .find(intent.id.0)
        .select((PaymentRow::as_select(), x402_payments::payment))
        .first(connection)
        .await
        .optional()
        .map_err(from_diesel)?;
    let Some((row, Some(payment))) = found else {
        return Ok(None);
    };
    intent.x402 = Some(row.into_payment()?);
    Ok(Some(RecordedAuthorization { intent, payment }))
}

async fn record_locked(
    connection: &mut AsyncPgConnection,
    id: IntentId,
    signed: &SignedAuthorization,
) -> Result<RecordedAuthorization, TxError<TransitionError>> {
    // A transfer is refused by the state machine (`apply_as`) in `move_locked`, which rolls the
    // payment's update back with it.
    let current = lock_intent::<TransitionError>(connection, id).await?;
    if current.status == IntentStatus::Authorized {
        return recorded_locked(connection, current)
            .await
            .map_err(TxError::store)?
            .ok_or_else(|| {
                TxError::store(corrupt(format!("authorized intent {id} has no payment")))
            });
    }
    authorize_locked(connection, &current, signed).await
}

/// Records `signed` for the intent `current`, locked by the caller and confirmed, and moves it
/// to `authorized`: the payment header is handed out only once this commits.
async fn authorize_locked(
    connection: &mut AsyncPgConnection,
    current: &TransferIntentRecord,
    signed: &SignedAuthorization,
) -> Result<RecordedAuthorization, TxError<TransitionError>> {
    let id = current.id;
    let valid_before = signed.window.valid_before_time();
    let payment: PaymentRow = diesel::update(x402_payments::table.find(id.0))
        .set((
            x402_payments::offer.eq(offer_column(&signed.offer)),
            x402_payments::nonce.eq(signed.nonce.as_slice()),
            x402_payments::valid_after.eq(window_start(&signed.window)),
            x402_payments::valid_before.eq(valid_before),
            x402_payments::payment.eq(&signed.payment),
            x402_payments::watch_from_block.eq(block_column(signed.watch_from_block)),
        ))
        .returning(PaymentRow::as_returning())
        .get_result(connection)
        .await?;
    let mut intent = move_locked(
        connection,
        current,
        IntentEvent::Authorize,
        None,
        None,
        None,
        None,
    )
    .await?;
    intent.x402 = Some(payment.into_payment().map_err(TxError::store)?);
    Ok(RecordedAuthorization {
        intent,
        payment: signed.payment.clone(),
    })
}

/// `validAfter` as stored.
fn window_start(window: &AuthorizationWindow) -> i64 {
    i64::try_from(window.valid_after).unwrap_or(i64::MAX)
}

/// A block number as stored.
fn block_column(block: u64) -> i64 {
    i64::try_from(block).unwrap_or(i64::MAX)
}

/// The agent's wallet's address and sealed key, and the head of chain `chain_id` the watch saw
/// last, in one read; `None` when the agent has no wallet. A future that holds no borrow of the
/// connection, so it can go out with the statements beside it.
pub(super) fn signing_basis_of(
    connection: &mut AsyncPgConnection,
    agent: AgentId,
    chain_id: u64,
) -> BoxFuture<'static, QueryResult<Option<SigningBasisRow>>> {
    let known_head = chain_heads::table
        .filter(chain_heads::chain_id.eq(block_column(chain_id)))
        .select(chain_heads::block_number)
        .single_value();
    Prepared(
        wallets::table
            .filter(wallets::agent_id.eq(agent.0))
            .select((wallets::address, wallets::sealed_key, known_head))
            .limit(1),
    )
    .get_result(connection)
    .map(OptionalExtension::optional)
    .boxed()
}

/// A wallet's signing basis as read by `signing_basis_of`.
pub(super) struct SigningBasisRow(String, Vec<u8>, Option<i64>);

impl Queryable<(Text, Binary, Nullable<BigInt>), Pg> for SigningBasisRow {
    type Row = (String, Vec<u8>, Option<i64>);

    fn build((address, sealed_key, known_head): Self::Row) -> diesel::deserialize::Result<Self> {
        Ok(Self(address, sealed_key, known_head))
    }
}

impl SigningBasisRow {
    pub(super) fn into_basis(self) -> Result<SigningBasis, StoreError> {
        let Self(address, sealed_key, known_head) = self;
        Ok(SigningBasis {
            wallet_address: parse_address(&address)?,
            sealed_key,
            known_head: known_head.and_then(|block| u64::try_from(block).ok()),
        })
    }
}

#[async_trait]
impl X402Authorizations for PgIntentStore {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn signing_basis(
        &self,
        agent: AgentId,
        chain_id: u64,
    ) -> Result<Option<SigningBasis>, StoreError> {
        let mut connection = self.database.connection().await?;
        signing_basis_of(&mut connection, agent, chain_id)
            .await
            .map_err(from_diesel)?
            .map(SigningBasisRow::into_basis)
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip(self, signed))]
    async fn record_authorization(
        &self,
        id: IntentId,
        signed: &SignedAuthorization,
    ) -> Result<RecordedAuthorization, TransitionError> {
        self.database
            .in_transaction(|connection| {
                async move { record_locked(connection, id, signed).await }.scope_boxed()
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, settlement))]
    async fn record_payment_response(
        &self,
        id: IntentId,
        settlement: &SettlementResponse,
    ) -> Result<TransferIntentRecord, StoreError> {
        let mut connection = self.database.connection().await?;
        diesel::update(x402_payments::table.find(id.0))
            .set(x402_payments::payment_response.eq(Value::Object(settlement.object.clone())))
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
        let row = crate::schema::transfer_intents::table
            .find(id.0)
            .select(crate::rows::TransferIntentRow::as_select())
            .first(&mut connection)
            .await
            .map_err(from_diesel)?;
        with_payment(&mut connection, row.into_record()?).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn recorded_authorization(
        &self,
        id: IntentId,
    ) -> Result<Option<RecordedAuthorization>, StoreError> {
        let mut connection = self.database.connection().await?;
        let row = crate::schema::transfer_intents::table
            .find(id.0)
            .select(crate::rows::TransferIntentRow::as_select())
            .first(&mut connection)
            .await
            .optional()
            .map_err(from_diesel)?;
        match row {
            Some(row) => recorded_locked(&mut connection, row.into_record()?).await,
            None => Ok(None),
        }
    }
}
