//! The OpenAPI 3.1 description, generated from the handlers themselves.

use actix_web::http::Method;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{Ref, RefOr};
use utoipa::{Modify, OpenApi};

use crate::errors::{ErrorBody, ValidationErrorBody, ValidationItem};
use crate::routes;
use api_types::{
    AgentResponse, ApprovalsOut, AttachmentIn, AttachmentOut, Channel, CodeOut, CodesWaitRequest,
    ConfirmedBy, Direction, EmailFailedData, EmailForwardRequest, EmailInboxOut, EmailInboxPage,
    EmailMessageOut, EmailReceivedData, EmailReplyRequest, EmailSendRequest, EmailSendResponse,
    EmailSentData, EmailStatus, EventData, EventOut, EventPage, EventTypeName, FetchedResponseOut,
    IntentKind, IntentStatus, KeyCreateRequest, KeyCreatedOut, KeyInUseOut, KeyListOut, KeyOut,
    ParsedDataOut, PhoneNumberOut, PhoneNumberResponse, PolicyVerdictOut, ReceiptKeyOut,
    ReceiptKeysOut, ReceiptOut, RecipientLimitOut, ScopeName, SendStatus, SenderRulesOut,
    SenderRulesRequest, ServerSentEvent, SmsMessageOut, SmsRawPayload, SmsReceivedData,
    SpendPolicyOut, SpendPolicyResponse, SpendUsageOut, ThreadDetailOut, ThreadOut, ThreadPageOut,
    TransferIntentOut, TransferIntentPage, VerificationCodeResponse, WaitForCodeRequest,
    WalletAddressResponse, WalletAssetBalance, WalletBalanceResponse, WalletCheckRequest,
    WalletOut, WalletSendRequest, WalletStatus, WebhookAttemptOut, WebhookAttemptPage,
    WebhookCreateRequest, WebhookOut, WebhookReplayRequest, WebhookReplayResponse,
    WebhookUpdateRequest, WindowUsageOut, X402AuthorizationStatus, X402AuthorizeRequest,
    X402AuthorizedOut, X402CheckRequest, X402FetchFailedOut, X402FetchOut, X402FetchPaymentOut,
    X402FetchRequest, X402FetchStatus, X402PaymentOut, X402PendingOut,
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
        routes::email::send::send,
        routes::email::send::reply,
        routes::email::send::forward,
        routes::email::read::inbox,
        routes::email::read::message,
        routes::email::attachments::attachment,
        routes::email::read::search,
        routes::email::read::threads,
        routes::email::read::thread,
        routes::email::sender_rules::rules,
        routes::email::sender_rules::set_rules,
        routes::sms::number,
        routes::sms::messages,
        routes::sms::wait_for_code,
        routes::sms::wait_any_channel,
        routes::wallet::address,
        routes::wallet::policy,
        routes::wallet::balance,
        routes::wallet::send,
        routes::wallet::authorize_x402,
        routes::wallet::fetch_x402,
        routes::wallet::receipt,
        routes::wallet::receipt_keys,
        routes::wallet::check,
        routes::wallet::intents,
        routes::wallet::intent,
        routes::events::list,
        routes::events::stream,
        routes::webhook_endpoints::create,
        routes::webhook_endpoints::list,
        routes::webhook_endpoints::get,
        routes::webhook_endpoints::update,
        routes::webhook_endpoints::delete,
        routes::webhook_endpoints::rotate_secret,
        routes::webhook_endpoints::deliveries,
        routes::webhook_endpoints::replay,
        routes::keys::create,
        routes::keys::list,
        routes::keys::revoke,
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
        EmailForwardRequest,
        AttachmentIn,
        EmailSendResponse,
        EmailInboxPage,
        SenderRulesRequest,
        SenderRulesOut,
        ThreadOut,
        ThreadPageOut,
        ThreadDetailOut,
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
        PolicyVerdictOut,
        SpendUsageOut,
        WindowUsageOut,
        RecipientLimitOut,
        TransferIntentOut,
        X402PaymentOut,
        X402AuthorizeRequest,
        X402CheckRequest,
        WalletCheckRequest,
        X402FetchRequest,
        X402FetchOut,
        X402FetchStatus,
        FetchedResponseOut,
        X402FetchPaymentOut,
        X402FetchFailedOut,
        ReceiptOut,
        ReceiptKeyOut,
        ReceiptKeysOut,
        X402AuthorizationStatus,
        X402AuthorizedOut,
        X402PendingOut,
        ApprovalsOut,
        ConfirmedBy,
        TransferIntentPage,
        Direction,
        EmailStatus,
        SendStatus,
        IntentKind,
        IntentStatus,
        WalletStatus,
        Channel,
        EventOut,
        EventPage,
        EventTypeName,
        EventData,
        ServerSentEvent,
        EmailReceivedData,
        EmailSentData,
        EmailFailedData,
        SmsReceivedData,
        WebhookCreateRequest,
        WebhookUpdateRequest,
        WebhookReplayRequest,
        WebhookReplayResponse,
        WebhookOut,
        WebhookAttemptOut,
        WebhookAttemptPage,
        KeyCreateRequest,
        KeyCreatedOut,
        ScopeName,
        KeyInUseOut,
        KeyListOut,
        KeyOut,
        ErrorBody,
        ValidationErrorBody,
        ValidationItem
    )),
    modifiers(&BearerSecurity, &RequiredScopes, &McpTools),
    tags(
        (name = "agents", description = "The calling agent"),
        (name = "sms", description = "The agent's receive-only number: its messages, and waiting for a verification code"),
        (name = "email", description = "The agent's inbox: send and reply through a durable outbox, read inbound and outbound mail"),
        (name = "wallet", description = "The agent's wallet on Base: balances, spend policy, transfer intents"),
        (name = "events", description = "What happened to the agent's mail, SMS and transfers: a feed, and a live stream"),
        (name = "webhooks", description = "Endpoints the agent's events are posted to, signed per Standard Webhooks"),
        (name = "keys", description = "The agent's keys: narrower, expiring keys made for sub-agents, and their revocation"),
        (name = "operations", description = "Liveness and readiness probes")
    )
)]
pub struct ApiDoc;

struct BearerSecurity;

impl Modify for BearerSecurity {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        // The package's license field names none; an empty license shows as "License:" alone.
        openapi.info.license = None;
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

/// The MCP tools, as `tools/list` describes them, in a trait tag: `/docs` (Redoc) shows it as a
/// section of its own and `docs/api.md` renders it, so both list the tools the server serves.
struct McpTools;

impl Modify for McpTools {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let catalog = serde_json::to_value(mcp::tool_catalog()).unwrap_or_default();
        let tag = TagBuilder::new()
            .name(crate::api_page::MCP_TOOLS_TAG)
            .description(Some(crate::api_page::mcp_tools_section(&catalog)))
            .extensions(Some(
                ExtensionsBuilder::new().add("x-traitTag", true).build(),
            ))
            .build();
        openapi.tags.get_or_insert_with(Vec::new).push(tag);
    }
}

/// Each operation's scope, from the route table (`crate::API`): an `x-required-scope` extension,
/// a sentence closing its description, and the 403 a key without it gets.
struct RequiredScopes;

impl Modify for RequiredScopes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, item) in &mut openapi.paths.paths {
            let operations = [
                (Method::GET, &mut item.get),
                (Method::PUT, &mut item.put),
                (Method::POST, &mut item.post),
                (Method::DELETE, &mut item.delete),
                (Method::PATCH, &mut item.patch),
            ];
            for (method, operation) in operations {
                let (Some(operation), Some(scope)) =
                    (operation.as_mut(), crate::required_scope(&method, path))
                else {
                    continue;
                };
                let sentence = format!("Needs a key with the scope `{scope}`.");
                operation.description = Some(match operation.description.take() {
                    Some(described) => format!("{described}\n\n{sentence}"),
                    None => sentence,
                });
                // A route's own 403 (a rule it names) stays documented beside the scope's.
                let forbidden = match operation.responses.responses.get("403") {
                    Some(RefOr::T(own)) => {
                        format!("{}; or the key lacks the scope {scope}", own.description)
                    }
                    _ => format!("The key lacks the scope {scope}"),
                };
                operation.responses.responses.insert(
                    "403".into(),
                    RefOr::T(
                        ResponseBuilder::new()
                            .description(forbidden)
                            .content(
                                "application/json",
                                ContentBuilder::new()
                                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                                    .build(),
                            )
                            .build(),
                    ),
                );
                operation
                    .extensions
                    .get_or_insert_with(Default::default)
                    .merge(
                        ExtensionsBuilder::new()
                            .add("x-required-scope", scope.as_str())
                            .build(),
                    );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// As long as a heading reads at a glance.
    const MAX_SUMMARY_CHARS: usize = 80;

    fn description() -> Value {
        serde_json::to_value(ApiDoc::openapi()).expect("serializes")
    }

    fn at<'d>(description: &'d Value, pointer: &str) -> &'d Value {
        description
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{pointer} is not in the description"))
    }

    /// The schema a `$ref` names, or the schema itself.
    fn resolved<'d>(description: &'d Value, schema: &'d Value) -> &'d Value {
        match schema["$ref"].as_str() {
            Some(reference) => at(description, reference.trim_start_matches('#')),
            None => schema,
        }
    }

    fn parameter<'d>(description: &'d Value, operation: &str, name: &str) -> &'d Value {
        at(description, &format!("{operation}/parameters"))
            .as_array()
            .expect("parameters")
            .iter()
            .find(|parameter| parameter["name"] == name)
            .map(|parameter| &parameter["schema"])
            .unwrap_or_else(|| panic!("{operation} has no parameter {name}"))
    }

    // Found by the fuzz run (make fuzz): 422 bodies did not match their own description.
    #[test]
    fn a_validation_item_is_described_as_it_is_written() {
        let description = description();
        let item = "/components/schemas/ValidationItem/properties";
        assert_eq!(
            at(&description, &format!("{item}/loc/items")),
            &json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert!(at(&description, &format!("{item}/input"))
            .get("type")
            .is_none());
    }

    // Found by the fuzz run (make fuzz): requests the description allowed were refused by rules
    // it did not state.
    #[test]
    fn the_description_states_the_rules_requests_are_refused_by() {
        let description = description();
        let inbox = "/paths/~1v1~1email~1inbox/get";
        let sms = "/paths/~1v1~1sms~1messages/get";
        for operation in [inbox, sms] {
            assert_eq!(
                resolved(
                    &description,
                    parameter(&description, operation, "direction")
                )["enum"],
                json!(["inbound", "outbound"])
            );
        }
        assert_eq!(
            parameter(&description, sms, "offset")["maximum"],
            json!(u32::MAX)
        );
        for operation in [
            "/paths/~1v1~1email~1send/post",
            "/paths/~1v1~1email~1reply~1{message_id}/post",
        ] {
            let key = parameter(&description, operation, "Idempotency-Key");
            assert_eq!(
                (&key["minLength"], &key["maxLength"]),
                (&json!(1), &json!(255))
            );
        }
        let send = "/components/schemas/EmailSendRequest/properties";
        assert_eq!(at(&description, &format!("{send}/to/minItems")), &json!(1));
        assert_eq!(
            at(&description, &format!("{send}/to/maxItems")),
            &json!(domain::MAX_RECIPIENTS)
        );
        assert_eq!(
            at(&description, &format!("{send}/body_text/maxLength")),
            &json!(domain::MAX_BODY_TEXT_BYTES)
        );
        let wallet = "/components/schemas/WalletSendRequest/properties";
        for field in ["to", "amount_atomic", "idempotency_key"] {
            assert!(at(&description, &format!("{wallet}/{field}/pattern")).is_string());
        }
        for request in ["WaitForCodeRequest", "CodesWaitRequest"] {
            let request_id = format!("/components/schemas/{request}/properties/request_id");
            assert_eq!(
                at(&description, &format!("{request_id}/maxLength")),
                &json!(domain::MAX_REQUEST_ID_CHARS)
            );
        }
        let channel = at(
            &description,
            "/components/schemas/CodesWaitRequest/properties/channels/items",
        );
        assert_eq!(
            resolved(&description, channel)["enum"],
            json!(["sms", "email"])
        );
    }

    /// Redoc shows a summary as its operation's heading, as written: Markdown is not read there.
    #[test]
    fn every_summary_is_one_short_sentence_of_plain_text() {
        let description = description();
        for (path, operations) in at(&description, "/paths").as_object().expect("paths") {
            for (method, operation) in operations.as_object().expect("operations") {
                let summary = operation["summary"].as_str().unwrap_or_default();
                assert!(
                    !summary.is_empty()
                        && summary.chars().count() <= MAX_SUMMARY_CHARS
                        && !summary.contains(['`', '\n', '*', '[']),
                    "{method} {path}: {summary:?} is not one short sentence of plain text; move \
                     the rest to the description, after a blank line of the doc comment"
                );
            }
        }
    }

    #[test]
    fn the_mcp_tools_are_a_trait_tag_naming_every_tool() {
        let description = description();
        let tags = at(&description, "/tags").as_array().expect("tags");
        let tools = tags
            .iter()
            .find(|tag| tag["name"] == crate::api_page::MCP_TOOLS_TAG)
            .expect("the MCP tools' tag");
        assert_eq!(tools["x-traitTag"], json!(true));
        let text = tools["description"].as_str().expect("a description");
        for tool in mcp::tool_catalog() {
            assert!(
                text.contains(&format!("### {}\n", tool.name)),
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn statuses_directions_and_channels_are_published_as_enums() {
        let description = description();
        let field = |schema: &str, name: &str| {
            let property = at(
                &description,
                &format!("/components/schemas/{schema}/properties/{name}"),
            );
            resolved(&description, property)["enum"].clone()
        };
        assert_eq!(
            field("EmailMessageOut", "status"),
            json!(["queued", "sent", "failed", "received"])
        );
        assert_eq!(
            field("EmailMessageOut", "direction"),
            json!(["inbound", "outbound"])
        );
        assert_eq!(field("EmailSendResponse", "status"), json!(["sent"]));
        assert_eq!(
            field("SmsMessageOut", "direction"),
            json!(["inbound", "outbound"])
        );
        assert_eq!(field("CodeOut", "channel"), json!(["sms", "email"]));
        assert_eq!(
            field("TransferIntentOut", "status"),
            json!([
                "pending_confirmation",
                "confirmed",
                "authorized",
                "submitted",
                "executed",
                "failed",
                "rejected",
                "expired"
            ])
        );
        assert_eq!(field("WalletOut", "status"), json!(["active"]));
    }
}
