//! The phone number's text messages, and the wait for a verification code (by SMS or mail).

use api_types::{CodeOut, SmsMessageOut};
use app::{ChannelsWait, FoundCode, WaitError};
use domain::keys::Scope;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use serde::Serialize;

use super::{cancelled, input, AgentTools, Caller, PROGRESS_EVERY};
use crate::answers::{answer, refused, reporting_progress};
use crate::arguments::{Arguments, ListSmsArguments, WaitForCodeArguments};

/// A wait for a code's answer.
#[derive(Serialize)]
struct CodeAnswer {
    /// Whether a code came.
    found: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<CodeOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

#[derive(Serialize)]
struct SmsAnswer {
    items: Vec<SmsMessageOut>,
    /// False when the SMS provider could not be reached: only what was stored before is shown.
    synced: bool,
}

#[tool_router(router = sms_router, vis = "pub(super)")]
impl AgentTools {
    #[tool(
        name = "list_sms",
        meta = super::needs(Scope::SmsRead),
        title = "List text messages",
        description = "The text messages of the agent's phone number, newest first, with the \
verification code found in each. The provider is asked for new ones first; `synced` is false when \
it could not be reached.",
        input_schema = input::<ListSmsArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_sms(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ListSmsArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let (limit, offset) = or_refuse!(arguments.window());
        let history = or_refuse!(
            self.services()
                .sms
                .messages(
                    &caller.profile,
                    arguments.direction.map(Into::into),
                    limit,
                    offset
                )
                .await
        );
        answer(SmsAnswer {
            items: history.messages.iter().map(SmsMessageOut::from).collect(),
            synced: history.synced,
        })
    }

    #[tool(
        name = "wait_for_code",
        meta = super::needs(Scope::CodesRead),
        title = "Wait for a verification code",
        description = "Waits for a verification code sent to the agent by SMS or mail, up to \
`timeout` seconds (at most 55), and returns the code with the message it came in. A code that \
arrived already and was not returned before is returned at once. With a service_name, only a code \
from that service counts. When none comes in time the answer is `found: false`: call again to \
keep waiting. Call it right after asking a service to send the code.",
        input_schema = input::<WaitForCodeArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn wait_for_code(
        &self,
        caller: Caller,
        context: RequestContext<RoleServer>,
        Arguments(arguments): Arguments<WaitForCodeArguments>,
    ) -> CallToolResult {
        let request = or_refuse!(or_refuse!(arguments).into_request());
        let wait = or_refuse!(ChannelsWait::try_from(request));
        let (timeout, request_id) = (wait.wait.timeout, wait.wait.request_id.clone());
        let waited = reporting_progress(
            &context,
            "waiting for a verification code",
            timeout,
            PROGRESS_EVERY,
            self.services().codes.wait(&caller.principal(), wait),
        )
        .await;
        match waited {
            None => refused(cancelled()),
            Some(Ok(found)) => answer(CodeAnswer {
                found: true,
                code: Some(match &found {
                    FoundCode::Sms(message) => CodeOut::from_sms(message, request_id),
                    FoundCode::Email(message) => CodeOut::from_email(message, request_id),
                }),
                detail: None,
            }),
            Some(Err(WaitError::TimedOut)) => answer(CodeAnswer {
                found: false,
                code: None,
                detail: Some(format!(
                    "No new verification code arrived within {} s; call wait_for_code again to \
                     keep waiting.",
                    timeout.as_secs()
                )),
            }),
            Some(Err(error)) => refused(error.into()),
        }
    }
}
