//! `/v1/wallet`: address, policy, balance, transfer intents.

use actix_web::web::{self, Json};
use api_types::{
    SpendPolicyResponse, TransferIntentOut, TransferIntentPage, WalletAddressResponse,
    WalletBalanceResponse, WalletSendRequest,
};
use app::{BalanceError, ListIntentsError, SendError, SendRequest, WalletError};
use domain::{AtomicAmount, EvmAddress};

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::{rejected, string_length, value_error, JsonBody, QueryParams};
use crate::state::ApiState;

const MAX_IDEMPOTENCY_KEY_CHARS: usize = 255;

impl From<WalletError> for ApiError {
    fn from(error: WalletError) -> Self {
        match error {
            WalletError::NotProvisioned(missing) => missing.into(),
            WalletError::Store(store) => store.into(),
        }
    }
}

impl From<BalanceError> for ApiError {
    fn from(error: BalanceError) -> Self {
        match error {
            BalanceError::NotProvisioned(missing) => missing.into(),
            BalanceError::Chain(chain) => chain.into(),
            BalanceError::Store(store) => store.into(),
        }
    }
}

impl From<SendError> for ApiError {
    fn from(error: SendError) -> Self {
        match error {
            SendError::NotProvisioned(missing) => missing.into(),
            SendError::Unsupported { asset, chain } => ApiError::BadRequest(format!(
                "Unsupported asset or chain: only asset {asset} on chain {chain} is supported"
            )),
            SendError::Policy(violation) => {
                ApiError::Forbidden(format!("Spend policy violation: {violation}"))
            }
            error @ SendError::IdempotencyMismatch { .. } => {
                ApiError::Conflict(format!("Idempotency key conflict: {error}"))
            }
            SendError::Store(store) => store.into(),
        }
    }
}

impl From<ListIntentsError> for ApiError {
    fn from(error: ListIntentsError) -> Self {
        match error {
            ListIntentsError::NotProvisioned(missing) => missing.into(),
            ListIntentsError::InvalidCursor => ApiError::BadRequest("Invalid cursor".into()),
            ListIntentsError::Store(store) => store.into(),
        }
    }
}

/// The wallet's address on its chain.
#[utoipa::path(get, path = "/v1/wallet/address", tag = "wallet", operation_id = "get_wallet_address",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The wallet address", body = WalletAddressResponse),
        (status = 400, description = "No wallet provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn address(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<Json<WalletAddressResponse>, ApiError> {
    Ok(Json((&state.wallets.wallet(agent.0).await?).into()))
}

/// The spend policy in force; `null` where a rule is not configured.
#[utoipa::path(get, path = "/v1/wallet/policy", tag = "wallet", operation_id = "get_wallet_policy",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The effective spend policy", body = SpendPolicyResponse),
        (status = 400, description = "No wallet provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn policy(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<Json<SpendPolicyResponse>, ApiError> {
    Ok(Json((&state.wallets.policy(agent.0).await?).into()))
}

/// Native and USDC balances, read from the chain at the time of the call.
#[utoipa::path(get, path = "/v1/wallet/balance", tag = "wallet", operation_id = "get_wallet_balance",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "Balances", body = WalletBalanceResponse),
        (status = 400, description = "No wallet provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 503, description = "The chain or the database is unavailable", body = ErrorBody),
    ))]
pub async fn balance(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<Json<WalletBalanceResponse>, ApiError> {
    Ok(Json((&state.wallets.balances(agent.0).await?).into()))
}

/// The send as the use case takes it, or every field that is wrong.
fn parse_send(body: WalletSendRequest) -> Result<SendRequest, ApiError> {
    let to = EvmAddress::parse(&body.to).map_err(|e| value_error("to", &body.to, e));
    let amount = AtomicAmount::parse(&body.amount_atomic)
        .map_err(|e| value_error("amount_atomic", &body.amount_atomic, e));
    let key = match &body.idempotency_key {
        Some(key) => string_length("idempotency_key", key, 1, MAX_IDEMPOTENCY_KEY_CHARS),
        None => Ok(()),
    };
    match (to, amount, key) {
        (Ok(to), Ok(amount), Ok(())) => Ok(SendRequest {
            to,
            amount,
            asset: body.asset,
            chain: body.chain,
            idempotency_key: body.idempotency_key,
        }),
        (to, amount, key) => Err(rejected([to.err(), amount.err(), key.err()])),
    }
}

/// Creates a transfer intent. It stays `pending_confirmation` until an operator confirms it.
///
/// Only USDC on Base is supported (`asset` and `chain` default to them). The amount is in atomic
/// units: `"100000000"` is 100 USDC. The spend policy is checked in one atomic step per wallet:
/// the per-transfer limit, the rolling 24-hour limit over every intent still holding its amount,
/// and the recipient allowlist; a violation is 403 with a detail naming the rule. With an
/// `idempotency_key`, a retry with the same parameters returns the original intent and a reuse
/// with other parameters is 409; concurrent first uses create one intent.
#[utoipa::path(post, path = "/v1/wallet/send", tag = "wallet", operation_id = "create_wallet_send",
    security(("HTTPBearer" = [])),
    request_body = WalletSendRequest,
    responses(
        (status = 200, description = "The intent (the original one when the idempotency key was used before for the same transfer)", body = TransferIntentOut),
        (status = 400, description = "No wallet provisioned, or an unsupported asset or chain", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 403, description = "Spend policy violation; the detail names the rule", body = ErrorBody),
        (status = 409, description = "Idempotency key reused with different parameters", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn send(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<WalletSendRequest>,
) -> Result<Json<TransferIntentOut>, ApiError> {
    let (intent, _replayed) = state.wallets.send(agent.0, parse_send(body.0)?).await?;
    Ok(Json((&intent).into()))
}

/// The agent's transfer intents, newest first, a page at a time.
///
/// Ordered by creation time with the id as tie-breaker; pass `next_cursor` as `cursor` for the
/// next page. Intents of other agents never appear.
#[utoipa::path(get, path = "/v1/wallet/intents", tag = "wallet", operation_id = "list_wallet_intents",
    security(("HTTPBearer" = [])),
    params(
        ("limit" = Option<i64>, Query, description = "Page size; 20 when omitted", minimum = 1, maximum = 100),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "One page of intents", body = TransferIntentPage),
        (status = 400, description = "No wallet provisioned, or an invalid cursor", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 422, description = "Request validation failed", body = ValidationErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn intents(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    query: QueryParams,
) -> Result<Json<TransferIntentPage>, ApiError> {
    let limit = query
        .integer("limit", 20, 1, 100)
        .map_err(|item| rejected([Some(item)]))?;
    let page = state
        .wallets
        .intents(agent.0, query.get("cursor"), limit as usize)
        .await?;
    Ok(Json(TransferIntentPage {
        items: page.items.iter().map(TransferIntentOut::from).collect(),
        next_cursor: page.next_cursor,
    }))
}
