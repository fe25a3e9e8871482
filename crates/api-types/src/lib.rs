//! The shapes agent-runtime speaks, field for field as the API contract names them: what the
//! HTTP API returns, what `agentctl` prints (so both describe an agent alike), and the bodies the
//! API accepts. Built from the domain's records only; serde and utoipa, no transport.

mod agents;
mod email;
mod sms;
mod wallet;

pub use agents::{AgentResponse, EmailInboxOut, PhoneNumberOut};
pub use email::{
    AttachmentOut, EmailInboxPage, EmailMessageOut, EmailReplyRequest, EmailSendRequest,
    EmailSendResponse, ParsedDataOut,
};
pub use sms::{
    CodeOut, CodesWaitRequest, PhoneNumberResponse, SmsMessageOut, SmsRawPayload,
    VerificationCodeResponse, WaitForCodeRequest,
};
pub use wallet::{
    SpendPolicyOut, SpendPolicyResponse, TransferIntentOut, TransferIntentPage,
    WalletAddressResponse, WalletAssetBalance, WalletBalanceResponse, WalletOut, WalletSendRequest,
};
