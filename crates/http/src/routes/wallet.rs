//! `/v1/wallet`: address, policy, balance, transfer intents.

use actix_web::{web, HttpResponse};
use app::{BalanceError, ListIntentsError, SendError, SendRequest, WalletError};
use domain::{AtomicAmount, EvmAddress};
use ports::ChainError;

use crate::auth::AuthenticatedAgent;
use crate::dto::{
    SpendPolicyResponse, TransferIntentOut, TransferIntentPage, WalletAddressResponse,
    WalletBalanceResponse, WalletSendRequest,
};
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::{string_length, value_error, JsonBody, QueryParams, Validation};
use crate::state::ApiState;

const NO_WALLET: &str = "No wallet provisioned for this agent";
const MAX_IDEMPOTENCY_KEY_CHARS: usize = 255;

impl From<WalletError> for ApiError {
    fn from(error: WalletError) -> Self {
        match error {
            WalletError::NoWallet => ApiError::BadRequest(NO_WALLET.into()),
            WalletError::Store(store) => store.into(),
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
) -> Result<HttpResponse, ApiError> {
    let wallet = state.wallets.wallet(agent.0).await?;
    Ok(HttpResponse::Ok().json(WalletAddressResponse {
        address: wallet.address.to_string(),
        chain: wallet.chain,
    }))
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
) -> Result<HttpResponse, ApiError> {
    let policy = state.wallets.policy(agent.0).await?;
    Ok(HttpResponse::Ok().json(SpendPolicyResponse::from(&policy)))
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
) -> Result<HttpResponse, ApiError> {
    match state.wallets.balances(agent.0).await {
        Ok(balances) => Ok(HttpResponse::Ok().json(WalletBalanceResponse::from(&balances))),
        Err(BalanceError::NoWallet) => Err(ApiError::BadRequest(NO_WALLET.into())),
        Err(BalanceError::Chain(error)) => {
            let cause = match error {
                ChainError::Unavailable(cause) | ChainError::Unexpected(cause) => cause,
            };
            Err(ApiError::Unavailable {
                detail: "Chain unavailable",
                cause,
            })
        }
        Err(BalanceError::Store(store)) => Err(store.into()),
    }
}

fn parse_send(body: WalletSendRequest) -> Result<SendRequest, ApiError> {
    let mut validation = Validation::default();
    let to =
        validation.check(EvmAddress::parse(&body.to).map_err(|e| value_error("to", &body.to, e)));
    let amount = validation.check(
        AtomicAmount::parse(&body.amount_atomic)
            .map_err(|e| value_error("amount_atomic", &body.amount_atomic, e)),
    );
    if let Some(key) = &body.idempotency_key {
        validation.check(string_length(
            "idempotency_key",
            key,
            1,
            MAX_IDEMPOTENCY_KEY_CHARS,
        ));
    }
    validation.finish()?;
    match (to, amount) {
        (Some(to), Some(amount)) => Ok(SendRequest {
            to,
            amount,
            asset: body.asset,
            chain: body.chain,
            idempotency_key: body.idempotency_key,
        }),
        _ => Err(ApiError::Internal(
            "validation passed without values".into(),
        )),
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
) -> Result<HttpResponse, ApiError> {
    let request = parse_send(body.0)?;
    match state.wallets.send(agent.0, request).await {
        Ok((intent, _replayed)) => Ok(HttpResponse::Ok().json(TransferIntentOut::from(&intent))),
        Err(SendError::NoWallet) => Err(ApiError::BadRequest(NO_WALLET.into())),
        Err(SendError::Unsupported { asset, chain }) => Err(ApiError::BadRequest(format!(
            "Unsupported asset or chain: only asset {asset} on chain {chain} is supported"
        ))),
        Err(SendError::Policy(violation)) => Err(ApiError::Forbidden(format!(
            "Spend policy violation: {violation}"
        ))),
        Err(error @ SendError::IdempotencyMismatch { .. }) => Err(ApiError::Conflict(format!(
            "Idempotency key conflict: {error}"
        ))),
        Err(SendError::Store(store)) => Err(store.into()),
    }
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
) -> Result<HttpResponse, ApiError> {
    let mut validation = Validation::default();
    let limit = validation.check(query.integer("limit", 20, 1, 100));
    validation.finish()?;
    let limit = usize::try_from(limit.unwrap_or(20)).unwrap_or(20);
    match state
        .wallets
        .intents(agent.0, query.get("cursor"), limit)
        .await
    {
        Ok(page) => Ok(HttpResponse::Ok().json(TransferIntentPage {
            items: page.items.iter().map(TransferIntentOut::from).collect(),
            next_cursor: page.next_cursor,
        })),
        Err(ListIntentsError::NoWallet) => Err(ApiError::BadRequest(NO_WALLET.into())),
        Err(ListIntentsError::InvalidCursor) => Err(ApiError::BadRequest("Invalid cursor".into())),
        Err(ListIntentsError::Store(store)) => Err(store.into()),
    }
}
