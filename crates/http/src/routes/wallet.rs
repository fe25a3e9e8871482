//! `/v1/wallet`: address, policy, balance, transfer intents.

use actix_web::web::{self, Json, Path};
use actix_web::HttpResponse;
use api_types::{
    FetchedResponseOut, PageLimit, PolicyVerdictOut, ReceiptKeysOut, ReceiptOut,
    SpendPolicyResponse, TransferIntentOut, TransferIntentPage, WalletAddressResponse,
    WalletBalanceResponse, WalletCheckRequest, WalletSendRequest, X402AuthorizeRequest,
    X402AuthorizedOut, X402FetchFailedOut, X402FetchOut, X402FetchRequest, X402PendingOut,
};
use app::{
    FetchOutcome, IntentPage, PolicyUsage, SendRequest, X402Check, X402Fetch, X402Outcome,
    X402Request,
};
use domain::x402::MAX_FETCH_BODY_BYTES;
use edge::Refusal;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody, ValidationErrorBody};
use crate::extract::{rejected, JsonBody, QueryParams};
use crate::rendered_pages::{PageKey, PageListing};
use crate::state::ApiState;

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
    Ok(Json(
        (&state.services.wallets.wallet(&agent.profile)?).into(),
    ))
}

/// The spend policy in force, with what each window holds.
///
/// `null` where a rule is not configured. `usage` gives each configured window (`daily`,
/// `weekly`, `monthly`, `auto_confirm_daily`) what it holds now and what is left of it.
#[utoipa::path(get, path = "/v1/wallet/policy", tag = "wallet", operation_id = "get_wallet_policy",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The effective spend policy and its usage", body = SpendPolicyResponse),
        (status = 400, description = "No wallet provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn policy(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
) -> Result<HttpResponse, ApiError> {
    state
        .policies
        .answer(
            agent.profile.agent.id,
            |held| state.services.wallets.usage_against(&agent.profile, held),
            |usage: PolicyUsage| SpendPolicyResponse::with_usage(&usage.policy, &usage.windows),
        )
        .await
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
    Ok(Json(
        (&state.services.wallets.balances(&agent.profile).await?).into(),
    ))
}

/// Creates a transfer intent.
///
/// It stays `pending_confirmation` until the operators it needs confirm it, unless the policy's
/// auto-confirm tier confirms it at once (`confirmed`, `confirmed_by: policy`). Only USDC on Base
/// is supported (`asset` and `chain` default to them). The amount is in atomic units: `"100000000"`
/// is 100 USDC. The spend policy is checked in one atomic step per wallet: the recipient allowlist,
/// the per-transfer limits (the wallet's and the recipient's), and the rolling daily, weekly and
/// monthly limits and the recipient's daily one, over every intent still holding its amount; a
/// violation is 403 with a detail naming the rule and what the window still allows. With an
/// `idempotency_key`, a retry with the same parameters within 24 hours returns the original intent
/// (`Idempotent-Replayed: true`); a reuse with other parameters, or while the first request is
/// still in progress, is 409.
#[utoipa::path(post, path = "/v1/wallet/send", tag = "wallet", operation_id = "create_wallet_send",
    security(("HTTPBearer" = [])),
    request_body = WalletSendRequest,
    responses(
        (status = 200, description = "The intent; with `Idempotent-Replayed: true` the original one, made earlier for the same idempotency key and transfer", body = TransferIntentOut,
            headers(("Idempotent-Replayed" = String, description = "`true` when the intent was made by an earlier request with the same idempotency key"))),
        (status = 400, description = "No wallet provisioned, or an unsupported asset or chain", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 403, description = "Spend policy violation; the detail names the rule", body = ErrorBody),
        (status = 409, description = "Idempotency key reused with different parameters, or a request with the same key is still in progress", body = ErrorBody),
        (status = 422, description = "Request validation failed, including a recipient that can only lose the money (the zero address, the wallet itself, the token contract)", body = ValidationErrorBody),
        (status = 429, description = "Too many sends from this agent, its wallet is busy, or its request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; retry after `Retry-After` seconds", body = ErrorBody,
            headers(("Retry-After" = String, description = "Seconds to wait before retrying"))),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn send(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<WalletSendRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = SendRequest::try_from(body.read(&agent).await?)?;
    let (intent, replayed) = state
        .services
        .wallets
        .send(&agent.principal(), request)
        .await?;
    Ok(super::ok_replayed_if(replayed).json(TransferIntentOut::from(&intent)))
}

/// Pays an x402 challenge from the wallet, under the spend policy.
///
/// Takes the challenge a server answered `402 Payment Required` with. The `accepts` entry this
/// wallet can pay (scheme `exact`, this chain's network, the configured USDC) becomes a transfer
/// intent of kind `x402` to its `payTo`, judged by every rule of the spend policy as a send is.
/// Confirmed at once by the auto-confirm tier, an EIP-3009 authorization is signed, recorded and
/// answered (200): repeat the request with `header` set to `payment_signature`. Otherwise the
/// answer is 202 with the intent and an `approval_url`; once operators approve, the same call
/// with the same `idempotency_key` answers 200 with an authorization signed then. The same key
/// with the same terms (payTo, asset, amount, network, resource) answers the same authorization
/// while it is valid; with other terms, 409.
#[utoipa::path(post, path = "/v1/wallet/x402/authorize", tag = "wallet", operation_id = "authorize_x402_payment",
    security(("HTTPBearer" = [])),
    request_body = X402AuthorizeRequest,
    responses(
        (status = 200, description = "Signed: the payment header to repeat the request with", body = X402AuthorizedOut),
        (status = 202, description = "Waiting for operators: retry with the same idempotency key once approved", body = X402PendingOut),
        (status = 400, description = "No wallet provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 403, description = "Above `max_amount_atomic` (rule `max_amount`), or a spend policy violation; the detail names the rule", body = ErrorBody),
        (status = 409, description = "Idempotency key reused with other terms, its request still in progress, or its payment rejected or expired", body = ErrorBody),
        (status = 422, description = "Not an x402 challenge, or no entry of `accepts` payable here (each named with why)", body = ValidationErrorBody),
        (status = 429, description = "Too many payments from this agent, or its wallet is busy; retry after `Retry-After` seconds", body = ErrorBody,
            headers(("Retry-After" = String, description = "Seconds to wait before retrying"))),
        (status = 503, description = "The database or the chain is unavailable", body = ErrorBody),
    ))]
pub async fn authorize_x402(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<X402AuthorizeRequest>,
) -> Result<HttpResponse, ApiError> {
    let request = X402Request::try_from(body.read(&agent).await?)?;
    let outcome = state
        .services
        .wallets
        .authorize_x402(&agent.principal(), request)
        .await?;
    Ok(match outcome {
        X402Outcome::Authorized {
            authorization,
            header,
        } => {
            let id = authorization.intent.id;
            let answer =
                X402AuthorizedOut::of(&authorization.intent, header, authorization.payment)
                    .ok_or_else(|| {
                        ApiError::Refused(Refusal::Internal(format!(
                            "authorized intent {id} has no validBefore"
                        )))
                    })?;
            HttpResponse::Ok().json(answer)
        }
        X402Outcome::Pending(intent) => {
            HttpResponse::Accepted().json(X402PendingOut::of(&intent, &state.console_base_url))
        }
    })
}

/// Fetches a resource for the agent, paying it from the wallet when it answers 402.
///
/// The service makes the request (`url`, `method`, `headers`, `body`); the target passes the
/// webhooks' guard at every connection (https; no private, loopback, link-local or metadata
/// address unless the deployment allows private targets), redirects are followed only within
/// the origin, and the resource has 15 s to answer and 30 s in all. Answered 402, its challenge
/// is paid as `POST /v1/wallet/x402/authorize` pays it (under `max_amount_atomic` and the spend
/// policy; one authorization per `idempotency_key`) and the request is made again with the
/// payment header. 200 with the resource's answer (`status` `paid` or `free`; the body at most
/// 4 MiB, as text or `body_base64`); 202 while operators decide; 502 when the resource fails,
/// after payment with the payment's intent.
#[utoipa::path(post, path = "/v1/wallet/x402/fetch", tag = "wallet", operation_id = "fetch_x402_resource",
    security(("HTTPBearer" = [])),
    request_body = X402FetchRequest,
    responses(
        (status = 200, description = "The resource's answer, and its payment when it asked for one", body = X402FetchOut),
        (status = 202, description = "The payment waits for operators: fetch again with the same idempotency key once approved", body = X402PendingOut),
        (status = 400, description = "No wallet provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 403, description = "Above `max_amount_atomic` (rule `max_amount`), or a spend policy violation; the detail names the rule", body = ErrorBody),
        (status = 409, description = "Idempotency key reused with other terms, or its payment rejected or expired", body = ErrorBody),
        (status = 422, description = "A field is wrong: a URL whose target is refused (named with the rule), a header that may not be sent, or a challenge with no entry payable here", body = ValidationErrorBody),
        (status = 429, description = "Too many payments from this agent, or its wallet is busy; retry after `Retry-After` seconds", body = ErrorBody,
            headers(("Retry-After" = String, description = "Seconds to wait before retrying"))),
        (status = 502, description = "The resource failed: no answer, a 402 without a readable challenge, or, after payment, a failure (with the payment's intent)", body = X402FetchFailedOut),
        (status = 503, description = "The database or the chain is unavailable", body = ErrorBody),
    ))]
pub async fn fetch_x402(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<X402FetchRequest>,
) -> Result<HttpResponse, ApiError> {
    let command = X402Fetch::try_from(
        body.read_at_most(&agent, 2 * MAX_FETCH_BODY_BYTES + 64 * 1024)
            .await?,
    )?;
    let fetched = state
        .services
        .wallets
        .fetch_x402(&agent.principal(), command)
        .await;
    Ok(match fetched {
        Ok(FetchOutcome::Free(answer)) => HttpResponse::Ok().json(X402FetchOut::free(
            FetchedResponseOut::of(answer.status, &answer.headers, answer.body),
        )),
        Ok(FetchOutcome::Paid {
            response,
            intent,
            settlement,
        }) => HttpResponse::Ok().json(X402FetchOut::paid(
            FetchedResponseOut::of(response.status, &response.headers, response.body),
            &intent,
            settlement,
        )),
        Ok(FetchOutcome::Pending(intent)) => {
            HttpResponse::Accepted().json(X402PendingOut::of(&intent, &state.console_base_url))
        }
        Err(failure) => match failure.paid_and_failed() {
            Ok((detail, intent)) => HttpResponse::BadGateway().json(X402FetchFailedOut {
                detail,
                intent: TransferIntentOut::from(intent.as_ref()),
            }),
            Err(failure) => return Err(ApiError::Refused(Refusal::from(failure))),
        },
    })
}

/// The spend policy's verdict on a transfer or an x402 payment.
///
/// Nothing is created or reserved. Takes the body of `POST /v1/wallet/send` (an `idempotency_key`
/// is ignored), or an x402 challenge as `POST /v1/wallet/x402/authorize` takes it
/// (`payment_required`, and `max_amount_atomic`), judged as a payment to its `payTo`. Answers
/// whether the policy allows it now; if not, the rule that refuses it and why; where it would stand
/// (`confirmed` by the auto-confirm tier, or `pending_confirmation`); and what each configured
/// window holds. A later send or payment may be judged otherwise: others can take the allowance
/// first.
#[utoipa::path(post, path = "/v1/wallet/check", tag = "wallet", operation_id = "check_wallet_send",
    security(("HTTPBearer" = [])),
    request_body = WalletCheckRequest,
    responses(
        (status = 200, description = "The verdict; `allowed: false` for a transfer or payment the policy refuses", body = PolicyVerdictOut),
        (status = 400, description = "No wallet provisioned, or an unsupported asset or chain", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 403, description = "A challenge asking more than `max_amount_atomic` (rule `max_amount`)", body = ErrorBody),
        (status = 422, description = "Request validation failed, including a recipient that can only lose the money (the zero address, the wallet itself, the token contract), or a challenge with no entry payable here", body = ValidationErrorBody),
        (status = 429, description = "The agent's request bodies being read reach `REQUEST_BODY_BYTES_PER_AGENT`; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn check(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    body: JsonBody<serde_json::Map<String, serde_json::Value>>,
) -> Result<Json<PolicyVerdictOut>, ApiError> {
    let read = WalletCheckRequest::read(body.read(&agent).await?)
        .map_err(|error| ApiError::Validation(vec![error.into()]))?;
    let wallets = &state.services.wallets;
    let check = match read {
        WalletCheckRequest::Send(send) => {
            wallets
                .check(&agent.profile, SendRequest::try_from(send)?)
                .await?
        }
        WalletCheckRequest::Payment(payment) => wallets
            .check_x402(&agent.profile, X402Check::try_from(payment)?)
            .await
            .map_err(Refusal::from)?,
    };
    Ok(Json(PolicyVerdictOut::of(&check.verdict, &check.windows)))
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
    let limit = query
        .limit(PageLimit::PAGE)
        .map_err(|item| rejected([Some(item)]))?;
    let render = |page: IntentPage| TransferIntentPage {
        items: page.items.iter().map(TransferIntentOut::from).collect(),
        next_cursor: page.next_cursor,
    };
    let Some(cursor) = query.get("cursor") else {
        let key = PageKey {
            agent: agent.profile.agent.id,
            listing: PageListing::Intents,
            limit,
        };
        return state
            .first_pages
            .answer(
                key,
                |held| {
                    state
                        .services
                        .wallets
                        .intents_first_page(&agent.profile, limit as usize, held)
                },
                render,
            )
            .await;
    };
    let page = state
        .services
        .wallets
        .intents(&agent.profile, Some(cursor), limit as usize)
        .await?;
    Ok(HttpResponse::Ok().json(render(page)))
}

/// The signed receipt of one of the agent's executed intents.
///
/// The intent is a transfer or an x402 payment. `signature` is the Ed25519 signature, by the key
/// `receipt.receipt_key_id` (see `GET /v1/wallet/receipt-keys`), over the RFC 8785 canonical JSON
/// of `receipt`.
#[utoipa::path(get, path = "/v1/wallet/intents/{intent_id}/receipt", tag = "wallet", operation_id = "get_wallet_intent_receipt",
    security(("HTTPBearer" = [])),
    params(("intent_id" = String, Path, description = "The intent's id")),
    responses(
        (status = 200, description = "The receipt and its signature", body = ReceiptOut),
        (status = 400, description = "No wallet provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such intent of this agent", body = ErrorBody),
        (status = 409, description = "The intent is not executed: only an executed intent has a receipt", body = ErrorBody),
        (status = 503, description = "The database or the chain is unavailable", body = ErrorBody),
    ))]
pub async fn receipt(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    id: Path<String>,
) -> Result<Json<ReceiptOut>, ApiError> {
    let signed = state
        .services
        .wallets
        .receipt(&agent.profile, &id.into_inner())
        .await
        .map_err(Refusal::from)?;
    Ok(Json(ReceiptOut::from(&signed)))
}

/// The keys receipts are signed with, the current one first.
///
/// The ones it replaced follow it, so every receipt ever given stays verifiable.
#[utoipa::path(get, path = "/v1/wallet/receipt-keys", tag = "wallet", operation_id = "list_receipt_keys",
    security(("HTTPBearer" = [])),
    responses(
        (status = 200, description = "The keys", body = ReceiptKeysOut),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
    ))]
pub async fn receipt_keys(
    state: web::Data<ApiState>,
    _agent: AuthenticatedAgent,
) -> Json<ReceiptKeysOut> {
    let keys = state.services.wallets.receipt_keys();
    Json(ReceiptKeysOut::of(
        keys.iter().map(|key| (key.id.as_str(), &key.public_key)),
    ))
}

/// One of the agent's transfer intents, as it stands now.
#[utoipa::path(get, path = "/v1/wallet/intents/{intent_id}", tag = "wallet", operation_id = "get_wallet_intent",
    security(("HTTPBearer" = [])),
    params(("intent_id" = String, Path, description = "The intent's id")),
    responses(
        (status = 200, description = "The intent", body = TransferIntentOut),
        (status = 400, description = "No wallet provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such intent of this agent", body = ErrorBody),
        (status = 503, description = "The database is unavailable", body = ErrorBody),
    ))]
pub async fn intent(
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    id: Path<String>,
) -> Result<Json<TransferIntentOut>, ApiError> {
    let intent = state
        .services
        .wallets
        .intent(&agent.profile, &id.into_inner())
        .await?;
    Ok(Json(TransferIntentOut::from(&intent)))
}
