//! What a refused request is told, said once for every way in: each use case's error becomes a
//! `Refusal`, a kind (which the HTTP API turns into a status, MCP into a tool result with
//! `isError`) and the detail text the caller reads. So a policy denial, a reused idempotency key
//! or a missing wallet reads the same over `/v1`, `/mcp` and the console. Causes of unavailability
//! and of internal errors are kept beside the detail, for the log only.

use std::time::Duration;

use api_types::{attachments_too_large, FieldError, FieldErrors};
use app::{
    AttachmentError, AuthError, BalanceError, DecisionWaitError, FetchFailure, FollowError,
    IntentLookupError, KeyError, ListIntentsError, NotProvisioned, ReadMailError, ReceiptError,
    SendError, SendMailError, SmsError, WaitError, WalletError, WebhookError, X402Error,
};
use domain::keys::{DelegationRefusal, Scope};
use ports::{ChainError, StoreError, TransitionError};
use time::format_description::well_known::Rfc3339;

/// How long a throttled mail send is told to wait: the spec's fixed `Retry-After`.
pub const MAIL_THROTTLE_RETRY_AFTER: Duration = Duration::from_secs(5);

/// A request refused, with what its caller is told.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// The agent key is missing, malformed or no longer authenticates.
    #[error("Invalid agent key")]
    InvalidKey,
    /// The agent key authenticated until its expiry, which has passed; the detail says when.
    #[error("{0}")]
    ExpiredKey(String),
    /// A business rule refused the request: a resource not provisioned, an invalid cursor...
    #[error("{0}")]
    BadRequest(String),
    /// The key is valid but the action is not permitted, e.g. by the spend policy.
    #[error("{0}")]
    Forbidden(String),
    #[error("Not Found")]
    NotFound,
    /// What was asked for existed but is not kept, e.g. an attachment whose bytes were not stored.
    #[error("{0}")]
    Gone(String),
    /// The request conflicts with stored state, e.g. a reused idempotency key.
    #[error("{0}")]
    Conflict(String),
    /// A wait ended without what it waited for.
    #[error("{0}")]
    TimedOut(String),
    /// Too many requests: the caller may retry after `retry_after`.
    #[error("{detail}")]
    TooManyRequests {
        detail: String,
        retry_after: Duration,
    },
    /// Fields of the request are wrong, each named.
    #[error("request validation failed")]
    Invalid(FieldErrors),
    /// A server this service asked on the agent's behalf (a paid resource) failed to answer as
    /// it should; the detail says how.
    #[error("{0}")]
    BadGateway(String),
    /// A dependency (the database, the chain) could not be reached; `cause` is for the log.
    #[error("{detail}")]
    Unavailable { detail: &'static str, cause: String },
    /// A bug or an unexpected state; `cause` is for the log, never for the caller.
    #[error("Internal Server Error")]
    Internal(String),
}

/// What a 503 asks a client to wait: a database failing over is back within seconds (a new
/// primary is found within a host's connection deadline), and a chain node's outage lasts longer
/// than that or not at all. Long enough that clients retrying together do not add to the load.
pub const UNAVAILABLE_RETRY_AFTER: Duration = Duration::from_secs(2);

impl Refusal {
    /// The HTTP status of this kind of refusal: the API answers with it, and MCP's tool results
    /// name it beside the detail, so a model reads the same figure as a REST client.
    pub fn status(&self) -> u16 {
        match self {
            Self::InvalidKey | Self::ExpiredKey(_) => 401,
            Self::BadRequest(_) => 400,
            Self::Forbidden(_) => 403,
            Self::NotFound => 404,
            Self::Gone(_) => 410,
            Self::Conflict(_) => 409,
            Self::TimedOut(_) => 408,
            Self::TooManyRequests { .. } => 429,
            Self::Invalid(_) => 422,
            Self::BadGateway(_) => 502,
            Self::Unavailable { .. } => 503,
            Self::Internal(_) => 500,
        }
    }

    /// Whole seconds to wait before retrying, rounded up so a caller waiting that long is never
    /// early: for too many requests, and for a dependency out of reach (`UNAVAILABLE_RETRY_AFTER`).
    pub fn retry_after_secs(&self) -> Option<u64> {
        let retry_after = match self {
            Self::TooManyRequests { retry_after, .. } => *retry_after,
            Self::Unavailable { .. } => UNAVAILABLE_RETRY_AFTER,
            _ => return None,
        };
        let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
        Some(seconds.max(1))
    }

    /// Logs what only the log may know: the cause of an unavailability or of an internal error.
    pub fn log_cause(&self) {
        match self {
            Self::Unavailable { cause, .. } => tracing::warn!(%cause, "dependency unavailable"),
            Self::Internal(cause) => tracing::error!(%cause, "internal error"),
            _ => {}
        }
    }

    /// Whether the key did not authenticate (401): the answer carries `WWW-Authenticate`.
    pub fn is_unauthenticated(&self) -> bool {
        matches!(self, Self::InvalidKey | Self::ExpiredKey(_))
    }

    /// A valid key without the scope the action needs (the keys contract's words).
    pub fn lacks_scope(scope: Scope) -> Self {
        Self::Forbidden(format!("This key lacks the scope {scope}"))
    }

    /// A request whose body would take its agent's bodies being read past their share.
    pub fn too_many_body_bytes() -> Self {
        Self::TooManyRequests {
            detail: "Too many bytes of this agent's requests are being read at once; retry when \
                     its other requests have been answered"
                .into(),
            retry_after: Duration::from_secs(1),
        }
    }

    /// A write whose idempotency key another request of the same key still holds.
    pub fn key_in_flight() -> Self {
        Self::Conflict(
            "Idempotency key conflict: a request with this key is still in progress; retry once \
             it has finished"
                .into(),
        )
    }

    /// A write whose idempotency key an earlier, different request took; `mismatch` names it.
    pub fn key_mismatch(mismatch: impl std::fmt::Display) -> Self {
        Self::Conflict(format!("Idempotency key conflict: {mismatch}"))
    }
}

impl From<FieldErrors> for Refusal {
    fn from(errors: FieldErrors) -> Self {
        Self::Invalid(errors)
    }
}

impl From<FieldError> for Refusal {
    fn from(error: FieldError) -> Self {
        Self::Invalid(FieldErrors::from(error))
    }
}

impl From<StoreError> for Refusal {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(cause) | StoreError::TimedOut(cause) => Self::Unavailable {
                detail: "Database unavailable",
                cause,
            },
            StoreError::ObjectStoreUnavailable(cause) => Self::Unavailable {
                detail: "Attachment store unavailable",
                cause,
            },
            StoreError::Busy(_) => Self::TooManyRequests {
                detail: "Too many concurrent requests for this resource; retry shortly".into(),
                retry_after: Duration::from_secs(1),
            },
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<ChainError> for Refusal {
    fn from(error: ChainError) -> Self {
        let (ChainError::Unavailable(cause) | ChainError::Unexpected(cause)) = error;
        Self::Unavailable {
            detail: "Chain unavailable",
            cause,
        }
    }
}

impl From<NotProvisioned> for Refusal {
    fn from(missing: NotProvisioned) -> Self {
        let resource = match missing {
            NotProvisioned::Wallet => "wallet",
            NotProvisioned::EmailInbox => "email inbox",
            NotProvisioned::PhoneNumber => "phone number",
        };
        Self::BadRequest(format!("No {resource} provisioned for this agent"))
    }
}

impl From<AuthError> for Refusal {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::InvalidKey => Self::InvalidKey,
            AuthError::Expired(at) => Self::ExpiredKey(format!(
                "This key expired at {}",
                at.format(&Rfc3339).unwrap_or_else(|_| at.to_string())
            )),
            AuthError::Store(store) => store.into(),
        }
    }
}

impl From<KeyError> for Refusal {
    fn from(error: KeyError) -> Self {
        match error {
            KeyError::Refused(refused) => refused.into(),
            KeyError::KeyGone => Self::InvalidKey,
            KeyError::NotFound => Self::NotFound,
            KeyError::KeyInFlight => Self::key_in_flight(),
            error @ KeyError::KeyReused => Self::key_mismatch(error),
            KeyError::Store(store) => store.into(),
        }
    }
}

/// A key the delegation rules refuse: 422 naming the scope or the time, 409 past the live keys.
impl From<DelegationRefusal> for Refusal {
    fn from(refused: DelegationRefusal) -> Self {
        let field = match refused {
            DelegationRefusal::TooManyKeys => return Self::Conflict(refused.to_string()),
            DelegationRefusal::ScopeNotHeld(scope) => {
                FieldError::value_error("scopes", scope.as_str(), refused)
            }
            DelegationRefusal::OutlivesMaker(_) => {
                FieldError::value_error("expires_in_seconds", serde_json::Value::Null, refused)
            }
            DelegationRefusal::TooDeep => FieldError::body(
                Vec::new(),
                "value_error",
                format!("Value error, {refused}"),
                serde_json::Value::Null,
            ),
        };
        Self::Invalid(FieldErrors(vec![field]))
    }
}

impl From<WalletError> for Refusal {
    fn from(error: WalletError) -> Self {
        match error {
            WalletError::NotProvisioned(missing) => missing.into(),
            WalletError::Store(store) => store.into(),
        }
    }
}

impl From<BalanceError> for Refusal {
    fn from(error: BalanceError) -> Self {
        match error {
            BalanceError::NotProvisioned(missing) => missing.into(),
            BalanceError::Chain(chain) => chain.into(),
            BalanceError::Store(store) => store.into(),
        }
    }
}

impl From<SendError> for Refusal {
    fn from(error: SendError) -> Self {
        match error {
            SendError::NotProvisioned(missing) => missing.into(),
            SendError::Unsupported { asset, chain } => Self::BadRequest(format!(
                "Unsupported asset or chain: only asset {asset} on chain {chain} is supported"
            )),
            SendError::TooLarge(too_large) => {
                FieldError::value_error("amount_atomic", serde_json::Value::Null, too_large).into()
            }
            SendError::Recipient(refused) => {
                FieldError::value_error("to", serde_json::Value::Null, refused).into()
            }
            SendError::KeyInFlight => Self::key_in_flight(),
            SendError::RateLimited { retry_after } => Self::TooManyRequests {
                detail: "Too many sends from this agent; retry later".into(),
                retry_after,
            },
            SendError::Policy(violation) => {
                Self::Forbidden(format!("Spend policy violation: {violation}"))
            }
            error @ SendError::IdempotencyMismatch { .. } => Self::key_mismatch(error),
            SendError::Store(store) => store.into(),
        }
    }
}

impl From<X402Error> for Refusal {
    fn from(error: X402Error) -> Self {
        // What the challenge asks is the agent's input: a payment it cannot make is told at
        // `payment_required`, not at a send's fields.
        let challenge = |reason: &dyn std::fmt::Display| -> Self {
            FieldError::value_error("payment_required", serde_json::Value::Null, reason).into()
        };
        match error {
            X402Error::NothingPayable(nothing) => challenge(&nothing),
            error @ X402Error::TokenDomain { .. } => challenge(&error),
            X402Error::AboveCeiling { amount, ceiling } => Self::Forbidden(format!(
                "Refused by rule max_amount: the payment asks {amount}, above max_amount_atomic \
                 {ceiling}"
            )),
            X402Error::NoToken => {
                Self::BadRequest("x402 payments need the USDC token configured".into())
            }
            error @ X402Error::Ended { .. } => Self::Conflict(error.to_string()),
            X402Error::Send(SendError::TooLarge(refused)) => challenge(&refused),
            X402Error::Send(SendError::Recipient(refused)) => challenge(&refused),
            X402Error::Send(SendError::Policy(violation)) => Self::Forbidden(format!(
                "Spend policy violation (rule {}): {violation}",
                violation.rule()
            )),
            X402Error::Send(send) => send.into(),
            X402Error::Chain(chain) => chain.into(),
            X402Error::Signing(error) => Self::Internal(error.to_string()),
            X402Error::Transition(TransitionError::Store(store)) => store.into(),
            X402Error::Transition(refused) => {
                Self::Conflict(format!("The payment could not be authorized: {refused}"))
            }
        }
    }
}

impl From<FetchFailure> for Refusal {
    fn from(failure: FetchFailure) -> Self {
        match failure {
            FetchFailure::Payment(payment) => payment.into(),
            FetchFailure::TargetRefused(rule) => {
                FieldError::value_error("url", serde_json::Value::Null, rule).into()
            }
            failed @ (FetchFailure::Unanswered(_)
            | FetchFailure::NoChallenge(_)
            | FetchFailure::AfterPayment { .. }) => Self::BadGateway(failed.to_string()),
        }
    }
}

impl From<ReceiptError> for Refusal {
    fn from(error: ReceiptError) -> Self {
        match error {
            ReceiptError::NotProvisioned(missing) => missing.into(),
            ReceiptError::NotFound => Self::NotFound,
            ReceiptError::NotExecuted(pending) => Self::Conflict(format!(
                "The intent is {}: only an executed intent has a receipt",
                pending.status
            )),
            ReceiptError::Chain(chain) => chain.into(),
            ReceiptError::Store(store) => store.into(),
            ReceiptError::Encoding(cause) => Self::Internal(cause),
            too_many @ ReceiptError::TooMany => Self::BadRequest(too_many.to_string()),
        }
    }
}

impl From<ListIntentsError> for Refusal {
    fn from(error: ListIntentsError) -> Self {
        match error {
            ListIntentsError::NotProvisioned(missing) => missing.into(),
            ListIntentsError::InvalidCursor => Self::BadRequest("Invalid cursor".into()),
            ListIntentsError::Store(store) => store.into(),
        }
    }
}

impl From<IntentLookupError> for Refusal {
    fn from(error: IntentLookupError) -> Self {
        match error {
            IntentLookupError::NotProvisioned(missing) => missing.into(),
            IntentLookupError::NotFound => Self::NotFound,
            IntentLookupError::Store(store) => store.into(),
        }
    }
}

impl From<DecisionWaitError> for Refusal {
    fn from(error: DecisionWaitError) -> Self {
        match error {
            DecisionWaitError::NotProvisioned(missing) => missing.into(),
            DecisionWaitError::NotFound => Self::NotFound,
            DecisionWaitError::TooManyWaiters => Self::TooManyRequests {
                detail: "Too many waits for a decision from this agent at once; retry later".into(),
                retry_after: Duration::from_secs(1),
            },
            DecisionWaitError::Revoked => Self::InvalidKey,
            DecisionWaitError::Store(store) => store.into(),
        }
    }
}

impl From<SendMailError> for Refusal {
    fn from(error: SendMailError) -> Self {
        match error {
            SendMailError::NotProvisioned(missing) => missing.into(),
            SendMailError::Category(category) => Self::BadRequest(format!(
                "Unsupported category {category:?}: only \"transactional\" mail can be sent \
                 (marketing is unavailable)"
            )),
            SendMailError::Unavailable(field) => {
                Self::BadRequest(format!("{field} is unavailable: leave it out"))
            }
            SendMailError::DomainNotVerified(domain) => Self::BadRequest(format!(
                "Sending domain {domain} is not verified; mail cannot be sent from it"
            )),
            SendMailError::SourceNotFound => Self::NotFound,
            SendMailError::ForwardTooLarge {
                carried,
                carried_bytes,
                given,
                given_bytes,
            } => Self::Invalid(
                attachments_too_large(given, given_bytes, Some((carried, carried_bytes))).into(),
            ),
            SendMailError::NotReplyable => Self::BadRequest(
                "Source message is not a replyable inbound thread: only inbound mail with a \
                 sender address can be answered"
                    .into(),
            ),
            SendMailError::Throttled => Self::TooManyRequests {
                detail: "Email send rate exceeded for this sponsor; retry later".into(),
                retry_after: MAIL_THROTTLE_RETRY_AFTER,
            },
            error @ SendMailError::IdempotencyMismatch { .. } => Self::key_mismatch(error),
            SendMailError::KeyInFlight => Self::key_in_flight(),
            SendMailError::Store(store) => store.into(),
        }
    }
}

impl From<ReadMailError> for Refusal {
    fn from(error: ReadMailError) -> Self {
        match error {
            ReadMailError::NotProvisioned(missing) => missing.into(),
            ReadMailError::InvalidCursor => Self::BadRequest("Invalid cursor".into()),
            ReadMailError::NotFound => Self::NotFound,
            ReadMailError::TooManySearches => Self::TooManyRequests {
                detail: "Too many searches of this agent are under way; retry when one has \
                         finished"
                    .into(),
                retry_after: Duration::from_secs(1),
            },
            ReadMailError::SearchTooLong => Self::Unavailable {
                detail: "The search took longer than a search may; narrow it with more words, \
                         from:, to:, after: or before:",
                cause: "an inbox search ran past its statement timeout".into(),
            },
            ReadMailError::Store(store) => store.into(),
        }
    }
}

impl From<AttachmentError> for Refusal {
    fn from(error: AttachmentError) -> Self {
        match error {
            AttachmentError::NotProvisioned(missing) => missing.into(),
            AttachmentError::NotFound => Self::NotFound,
            AttachmentError::NotStored => Self::Gone(
                "The attachment's content was not stored: it is over the size kept, or the \
                 provider delivered its metadata only"
                    .into(),
            ),
            AttachmentError::TooManyDownloads => Self::TooManyRequests {
                detail: "Too many downloads of this agent under way at once; retry when one \
                         has ended"
                    .into(),
                retry_after: Duration::from_secs(1),
            },
            AttachmentError::Store(store) => store.into(),
        }
    }
}

impl From<SmsError> for Refusal {
    fn from(error: SmsError) -> Self {
        match error {
            SmsError::NotProvisioned(missing) => missing.into(),
            SmsError::Store(store) => store.into(),
        }
    }
}

impl From<WaitError> for Refusal {
    fn from(error: WaitError) -> Self {
        match error {
            WaitError::NotProvisioned(missing) => missing.into(),
            WaitError::TimedOut => Self::TimedOut(
                "No new SMS with a verification code arrived before the timeout".into(),
            ),
            WaitError::Revoked => Self::InvalidKey,
            WaitError::ScopeLacking(scope) => Self::lacks_scope(scope),
            WaitError::TooManyWaiters => Self::TooManyRequests {
                detail: "Too many waits for a code from this agent at once; retry later".into(),
                retry_after: Duration::from_secs(1),
            },
            WaitError::Store(store) => store.into(),
        }
    }
}

impl From<FollowError> for Refusal {
    fn from(error: FollowError) -> Self {
        match error {
            FollowError::TooManyStreams => Self::TooManyRequests {
                detail: "Too many event streams of this agent at once; close one or retry later"
                    .into(),
                retry_after: Duration::from_secs(3),
            },
            FollowError::Store(store) => store.into(),
        }
    }
}

impl From<WebhookError> for Refusal {
    fn from(error: WebhookError) -> Self {
        match error {
            WebhookError::NotFound => Self::NotFound,
            WebhookError::TooMany => Self::Conflict(error.to_string()),
            WebhookError::Url(refused) => {
                FieldError::value_error("url", serde_json::Value::Null, refused).into()
            }
            WebhookError::InvalidCursor => Self::BadRequest(error.to_string()),
            WebhookError::KeyRevoked => Self::InvalidKey,
            WebhookError::TooManyReplays { retry_after } => Self::TooManyRequests {
                detail: error.to_string(),
                retry_after,
            },
            WebhookError::KeyInFlight => Self::key_in_flight(),
            error @ WebhookError::KeyReused => Self::key_mismatch(error),
            WebhookError::Store(store) => store.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_never_told_to_retry_early() {
        let refusal = |retry_after| Refusal::TooManyRequests {
            detail: String::new(),
            retry_after,
        };
        assert_eq!(
            refusal(Duration::from_millis(1500)).retry_after_secs(),
            Some(2)
        );
        assert_eq!(refusal(Duration::ZERO).retry_after_secs(), Some(1));
        assert_eq!(refusal(Duration::from_secs(5)).retry_after_secs(), Some(5));
        assert_eq!(Refusal::NotFound.retry_after_secs(), None);
        let unavailable = Refusal::Unavailable {
            detail: "Database unavailable",
            cause: "connection refused".into(),
        };
        assert_eq!(unavailable.retry_after_secs(), Some(2));
    }

    #[test]
    fn an_unavailable_store_is_named_for_what_it_holds() {
        let database = Refusal::from(StoreError::Unavailable("connection refused".into()));
        let timed_out = Refusal::from(StoreError::TimedOut("statement timeout".into()));
        let objects = Refusal::from(StoreError::ObjectStoreUnavailable("hung".into()));
        for (refusal, detail) in [
            (database, "Database unavailable"),
            (timed_out, "Database unavailable"),
            (objects, "Attachment store unavailable"),
        ] {
            assert_eq!(refusal.status(), 503);
            assert_eq!(refusal.to_string(), detail);
        }
    }

    #[test]
    fn the_detail_of_a_policy_denial_names_the_rule() {
        let refusal = Refusal::from(SendError::Policy(
            domain::PolicyViolation::ExceedsPerTransactionMax {
                amount: domain::AtomicAmount::parse("30").expect("valid"),
                max: domain::AtomicAmount::parse("25").expect("valid"),
            },
        ));
        assert_eq!(refusal.status(), 403);
        assert_eq!(
            refusal.to_string(),
            "Spend policy violation: amount 30 exceeds the per-transaction maximum of 25"
        );
    }
}
