//! `WalletService::fetch_x402`: a resource fetched for the agent and, when it answers 402, paid
//! through the same authorization as `authorize_x402` (one key, one nonce) and asked again with
//! the payment header.

use domain::commands::{X402Fetch, X402Request};
use domain::x402::{failed_after_payment, ChallengeError, PaymentChallenge, SettlementResponse};
use domain::{TransferIntentRecord, WebhookUrl};
use ports::{FetchError, ResourceRequest, ResourceResponse, StoreError};

use super::{require_wallet, SendError, WalletService, X402Error, X402Outcome};
use crate::Principal;

/// What a fetch came to.
#[derive(Debug, Clone)]
pub enum FetchOutcome {
    /// The resource answered without asking for payment.
    Free(ResourceResponse),
    /// Paid, and the resource answered the paid request.
    Paid {
        response: ResourceResponse,
        intent: TransferIntentRecord,
        /// The server's decoded `PAYMENT-RESPONSE`, when it sent one.
        settlement: Option<SettlementResponse>,
    },
    /// The payment waits for operators; the same fetch under the same key pays once approved.
    Pending(TransferIntentRecord),
}

#[derive(Debug, thiserror::Error)]
pub enum FetchFailure {
    #[error(transparent)]
    Payment(#[from] X402Error),
    /// The URL leads where fetches may not go; nothing was signed.
    #[error("{0}")]
    TargetRefused(String),
    /// The resource did not answer the unpaid request; nothing was signed.
    #[error("the resource did not answer: {0}")]
    Unanswered(FetchError),
    /// It answered 402 with nothing this service reads as a challenge; nothing was signed.
    #[error("the resource answered 402 without an x402 challenge this service reads: {0}")]
    NoChallenge(ChallengeError),
    /// Paid (the authorization was handed to the resource), but it failed to serve.
    #[error("paid, but the resource failed: {reason}")]
    AfterPayment {
        intent: Box<TransferIntentRecord>,
        reason: String,
    },
}

impl FetchFailure {
    /// A failure after payment as its detail and the payment's intent, which every way in shows
    /// together; any other failure as it is.
    pub fn paid_and_failed(self) -> Result<(String, Box<TransferIntentRecord>), Self> {
        let detail = self.to_string();
        match self {
            Self::AfterPayment { intent, .. } => Ok((detail, intent)),
            other => Err(other),
        }
    }
}

impl From<SendError> for FetchFailure {
    fn from(error: SendError) -> Self {
        Self::Payment(error.into())
    }
}

/// The challenge of a 402: version 2's `PAYMENT-REQUIRED` header, else version 1's body.
fn challenge_of(answer: &ResourceResponse) -> Result<PaymentChallenge, ChallengeError> {
    match answer.header("payment-required") {
        Some(header) => PaymentChallenge::from_header(header),
        None => PaymentChallenge::from_json(&answer.body),
    }
}

impl WalletService {
    /// Fetches `command.url` for the agent; a 402 is paid as `authorize_x402` pays it, under the
    /// agent's `max_amount` and the spend policy, and the request made again with the payment.
    #[tracing::instrument(level = "debug", skip(self, principal, command), fields(agent = %principal.profile.agent.id))]
    pub async fn fetch_x402(
        &self,
        principal: &Principal,
        command: X402Fetch,
    ) -> Result<FetchOutcome, FetchFailure> {
        require_wallet(&principal.profile).map_err(SendError::from)?;
        let url = WebhookUrl::parse(command.url.as_str(), self.x402.targets)
            .map_err(|refused| FetchFailure::TargetRefused(refused.to_string()))?;
        let request = ResourceRequest {
            url: url.as_str().to_owned(),
            method: command.method,
            headers: command.headers,
            body: command.body,
        };
        let unpaid = match self.x402.fetcher.fetch(request.clone()).await {
            Ok(answer) => answer,
            Err(FetchError::Refused(rule)) => return Err(FetchFailure::TargetRefused(rule)),
            Err(error) => return Err(FetchFailure::Unanswered(error)),
        };
        if unpaid.status != 402 {
            return Ok(FetchOutcome::Free(unpaid));
        }
        let challenge = challenge_of(&unpaid).map_err(FetchFailure::NoChallenge)?;
        let paying = X402Request {
            challenge,
            resource_url: Some(request.url.clone()),
            max_amount: Some(command.max_amount),
            idempotency_key: command.idempotency_key,
        };
        let (authorization, header) = match self.authorize_x402(principal, paying).await? {
            X402Outcome::Pending(intent) => return Ok(FetchOutcome::Pending(intent)),
            X402Outcome::Authorized {
                authorization,
                header,
            } => (authorization, header),
        };
        let mut paid = request;
        paid.headers
            .push((header.to_ascii_lowercase(), authorization.payment));
        let intent = authorization.intent;
        let answer = match self.x402.fetcher.fetch(paid).await {
            Ok(answer) => answer,
            Err(error) => {
                return Err(FetchFailure::AfterPayment {
                    intent: Box::new(intent),
                    reason: error.to_string(),
                })
            }
        };
        let settlement = answer
            .header("payment-response")
            .or_else(|| answer.header("x-payment-response"))
            .and_then(SettlementResponse::from_header);
        let intent = match &settlement {
            Some(settlement) => self
                .x402
                .payments
                .record_payment_response(intent.id, settlement)
                .await
                .map_err(|error: StoreError| SendError::from(error))?,
            None => intent,
        };
        if failed_after_payment(answer.status) {
            return Err(FetchFailure::AfterPayment {
                intent: Box::new(intent),
                reason: format!("it answered {} to the paid request", answer.status),
            });
        }
        Ok(FetchOutcome::Paid {
            response: answer,
            intent,
            settlement,
        })
    }
}
