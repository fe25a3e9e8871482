//! The OpenAPI 3.1 description, generated from the handlers themselves.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::errors::{ErrorBody, ValidationErrorBody, ValidationItem};
use crate::routes;
use api_types::{
    AgentResponse, AttachmentOut, CodeOut, CodesWaitRequest, EmailInboxOut, EmailInboxPage,
    EmailMessageOut, EmailReplyRequest, EmailSendRequest, EmailSendResponse, ParsedDataOut,
    PhoneNumberOut, PhoneNumberResponse, SmsMessageOut, SmsRawPayload, SpendPolicyOut,
    SpendPolicyResponse, TransferIntentOut, TransferIntentPage, VerificationCodeResponse,
    WaitForCodeRequest, WalletAddressResponse, WalletAssetBalance, WalletBalanceResponse,
    WalletOut, WalletSendRequest,
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "agent-runtime",
        version = "0.1.0",
        description = include_str!("api_overview.md")
    ),
    paths(
        routes::agents::me,
        routes::email::send,
        routes::email::reply,
        routes::email::inbox,
        routes::email::message,
        routes::sms::number,
        routes::sms::messages,
        routes::sms::wait_for_code,
        routes::sms::wait_any_channel,
        routes::wallet::address,
        routes::wallet::policy,
        routes::wallet::balance,
        routes::wallet::send,
        routes::wallet::intents,
        routes::ops::healthz,
        routes::ops::readyz
    ),
    components(schemas(
        AgentResponse,
        PhoneNumberOut,
        EmailInboxOut,
        EmailMessageOut,
        AttachmentOut,
        ParsedDataOut,
        EmailSendRequest,
        EmailReplyRequest,
        EmailSendResponse,
        EmailInboxPage,
        PhoneNumberResponse,
        SmsMessageOut,
        SmsRawPayload,
        VerificationCodeResponse,
        WaitForCodeRequest,
        CodesWaitRequest,
        CodeOut,
        WalletOut,
        SpendPolicyOut,
        WalletAddressResponse,
        SpendPolicyResponse,
        WalletBalanceResponse,
        WalletAssetBalance,
        WalletSendRequest,
        TransferIntentOut,
        TransferIntentPage,
        ErrorBody,
        ValidationErrorBody,
        ValidationItem
    )),
    modifiers(&BearerSecurity),
    tags(
        (name = "agents", description = "The calling agent"),
        (name = "sms", description = "The agent's receive-only number: its messages, and waiting for a verification code"),
        (name = "email", description = "The agent's inbox: send and reply through a durable outbox, read inbound and outbound mail"),
        (name = "wallet", description = "The agent's wallet on Base: balances, spend policy, transfer intents"),
        (name = "operations", description = "Liveness and readiness probes")
    )
)]
pub struct ApiDoc;

struct BearerSecurity;

impl Modify for BearerSecurity {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "HTTPBearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("ark_ + 43 base62 characters")
                    .description(Some("The agent key, shown once when the agent is created."))
                    .build(),
            ),
        );
    }
}
