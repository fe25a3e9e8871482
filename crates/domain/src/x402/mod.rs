//! Paying for resources over HTTP 402 (x402): the challenge a server answers with, read into
//! typed offers; the one this service can pay, with why each other was skipped; and the EIP-3009
//! authorization that pays it, with its EIP-712 signing hash and the header that carries it; and
//! whether the payee settled it, as the token's logs tell.

mod authorization;
mod challenge;
mod fetch;
mod settlement;

pub use authorization::{
    payment_header_value, AuthorizationWindow, SettlementResponse, TokenDomain,
    TransferAuthorization, MAX_AUTHORIZATION_SECS, VALID_AFTER_SKEW_SECS,
};
pub use challenge::{
    ChallengeError, ChosenOffer, NothingPayable, PayableBy, PaymentChallenge, SkippedOffer,
    X402Terms, X402Version, MAX_CHALLENGE_BYTES, MAX_OFFERS,
};
pub use fetch::{
    check_fetch_headers, failed_after_payment, FetchHeaderError, FetchMethod, FETCH_FIRST_BYTE,
    FETCH_TOTAL, MAX_FETCHED_BYTES, MAX_FETCH_BODY_BYTES, MAX_FETCH_HEADERS,
    MAX_FETCH_HEADER_VALUE_BYTES, MAX_FETCH_REDIRECTS, SHOWN_RESPONSE_HEADERS,
};
pub use settlement::{
    search_range, settlement_seen, BlockHead, SettlementSeen, UsedAuthorization,
    WatchedAuthorization,
};
