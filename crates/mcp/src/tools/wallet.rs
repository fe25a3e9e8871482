//! The wallet: its balances and policy, and the transfer intents an operator decides on.

use api_types::{
    FetchedResponseOut, PolicyVerdictOut, SpendPolicyResponse, SpendUsageOut, TransferIntentOut,
    TransferIntentPage, WalletAssetBalance, WalletBalanceResponse, X402AuthorizedOut, X402FetchOut,
    X402PendingOut,
};
use app::{Decision, FetchOutcome, SendError, SendRequest, X402Fetch, X402Outcome, X402Request};
use domain::keys::Scope;
use domain::IntentStatus;
use rmcp::handler::server::common::schema_for_empty_input;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use serde::Serialize;
use serde_json::Map;

use super::{cancelled, input, to_json, AgentTools, Caller, PROGRESS_EVERY};
use crate::answers::{answer, refused, refused_with, reporting_progress};
use crate::arguments::{
    Arguments, AuthorizeX402Arguments, CreateTransferArguments, IntentArguments,
    ListIntentsArguments, PayX402ResourceArguments, WaitForDecisionArguments,
};

/// The wallet as a model needs it in one call.
#[derive(Serialize)]
struct WalletAnswer {
    address: String,
    chain: String,
    balances: Vec<WalletAssetBalance>,
    policy: SpendPolicyResponse,
    usage: SpendUsageOut,
}

#[derive(Serialize)]
struct TransferAnswer {
    intent: TransferIntentOut,
    /// True when the idempotency key had made this intent before: nothing new was created.
    replayed: bool,
    verdict: PolicyVerdictOut,
    approval_url: String,
    /// What happens next, in one sentence: who decides on the intent, and where.
    detail: String,
}

/// What happens next to an intent the policy admitted (`admitted_as`) that is now `status`, in
/// one sentence a model can act on.
fn next_step(status: IntentStatus, admitted_as: IntentStatus, approval_url: &str) -> String {
    match (status, admitted_as) {
        (IntentStatus::PendingConfirmation, _) => format!(
            "An operator decides on this transfer in the console at {approval_url} and no money \
             moves before one approves it: call wait_for_transfer_decision to learn the decision."
        ),
        (_, IntentStatus::Confirmed) => "The spend policy confirmed this transfer itself: it \
             executes without an operator."
            .to_owned(),
        (_, _) => format!(
            "An operator has already decided on this transfer at {approval_url}: its status \
             tells how."
        ),
    }
}

/// The verdict beside a refused transfer: the route's verdict but `would_be`, since nothing was
/// admitted to be anything.
#[derive(Serialize)]
struct RefusedVerdict {
    allowed: bool,
    rule: Option<String>,
    detail: Option<String>,
    usage: SpendUsageOut,
}

impl From<PolicyVerdictOut> for RefusedVerdict {
    fn from(verdict: PolicyVerdictOut) -> Self {
        Self {
            allowed: verdict.allowed,
            rule: verdict.rule,
            detail: verdict.detail,
            usage: verdict.usage,
        }
    }
}

#[derive(Serialize)]
struct DecisionAnswer {
    /// Whether the intent left `pending_confirmation`; its `status` tells how.
    decided: bool,
    intent: TransferIntentOut,
    approval_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

#[tool_router(router = wallet_router, vis = "pub(super)")]
impl AgentTools {
    #[tool(
        name = "get_wallet",
        meta = super::needs(Scope::WalletRead),
        title = "Get the wallet",
        description = "The agent's wallet on Base: its address, its balances read from the chain \
now (native and USDC, in atomic units and formatted), the spend policy in force and what is left \
of each capped window (`usage`).",
        input_schema = schema_for_empty_input(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_wallet(&self, caller: Caller) -> CallToolResult {
        let wallets = &self.services().wallets;
        let balances = or_refuse!(wallets.balances(&caller.profile).await);
        let usage = or_refuse!(wallets.usage(&caller.profile).await);
        let balances = WalletBalanceResponse::from(&balances);
        answer(WalletAnswer {
            address: balances.address,
            chain: balances.chain,
            balances: balances.assets,
            policy: SpendPolicyResponse::with_usage(&usage.policy, &usage.windows),
            usage: usage.windows.as_slice().into(),
        })
    }

    #[tool(
        name = "create_transfer_intent",
        meta = super::needs(Scope::WalletPay),
        title = "Ask for a USDC transfer",
        description = "Asks for a transfer of USDC on Base from the agent's wallet. The spend \
policy is checked at once: a transfer it refuses comes back as an error naming the rule and what \
is left of each window. One it allows is recorded as an intent: `confirmed` when the policy's \
auto-confirm tier takes it (it executes without an operator), otherwise `pending_confirmation`, \
and no money moves until the operators it needs approve it at approval_url; then call \
wait_for_transfer_decision. The \
idempotency_key is required: use one key per payment, and call again with the same key (never a \
new one) when unsure whether the first call went through.",
        input_schema = input::<CreateTransferArguments>(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn create_transfer_intent(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<CreateTransferArguments>,
    ) -> CallToolResult {
        let request = or_refuse!(SendRequest::try_from(or_refuse!(arguments).into_request()));
        let wallets = &self.services().wallets;
        let sent = match wallets.send(&caller.principal(), request).await {
            Ok(sent) => Ok(sent),
            Err(SendError::Policy(violation)) => Err(violation),
            Err(error) => return refused(error.into()),
        };
        // What is left of each window once the policy has judged, for the verdict.
        let windows = or_refuse!(wallets.usage(&caller.profile).await).windows;
        match sent {
            Ok((record, replayed)) => {
                let intent = TransferIntentOut::from(&record);
                let approval_url = self.toolbox.approval_url(&intent);
                answer(TransferAnswer {
                    detail: next_step(record.status, record.admitted_as(), &approval_url),
                    approval_url,
                    intent,
                    replayed,
                    verdict: PolicyVerdictOut::allowed(record.admitted_as(), &windows),
                })
            }
            Err(violation) => {
                let verdict = RefusedVerdict::from(PolicyVerdictOut::of(&Err(violation), &windows));
                refused_with(
                    SendError::Policy(violation).into(),
                    Map::from_iter([("verdict".to_owned(), to_json(&verdict))]),
                )
            }
        }
    }

    #[tool(
        name = "authorize_x402_payment",
        meta = super::needs(Scope::WalletPay),
        title = "Pay an HTTP 402 challenge",
        description = "Pays a server's x402 challenge (HTTP 402 Payment Required) from the \
agent's wallet. Pass the challenge as the server gave it. The spend policy judges the payment as \
it judges a transfer: one it refuses comes back as an error naming the rule. One the policy \
confirms is signed at once: `status: authorized`, then repeat your request to the server with the \
header named `header` set to `payment_signature` (single use, valid until `valid_before`). \
Otherwise `status: pending_confirmation` with an approval_url: once an operator approves, call \
again with the same idempotency_key to get the signature. The idempotency_key is required: one \
key per payment, and call again with the same key (never a new one) when unsure.",
        input_schema = input::<AuthorizeX402Arguments>(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn authorize_x402_payment(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<AuthorizeX402Arguments>,
    ) -> CallToolResult {
        let request = or_refuse!(X402Request::try_from(or_refuse!(arguments).into_request()));
        let outcome = or_refuse!(
            self.services()
                .wallets
                .authorize_x402(&caller.principal(), request)
                .await
        );
        match outcome {
            X402Outcome::Authorized {
                authorization,
                header,
            } => {
                let id = authorization.intent.id;
                match X402AuthorizedOut::of(&authorization.intent, header, authorization.payment) {
                    Some(authorized) => answer(authorized),
                    None => refused(edge::Refusal::Internal(format!(
                        "authorized intent {id} has no validBefore"
                    ))),
                }
            }
            X402Outcome::Pending(intent) => {
                answer(X402PendingOut::of(&intent, &self.toolbox.public_base_url))
            }
        }
    }

    #[tool(
        name = "pay_x402_resource",
        meta = super::needs(Scope::WalletPay),
        title = "Fetch a resource, paying its HTTP 402",
        description = "Fetches a URL for the agent and, when the server answers 402 Payment \
Required (x402), pays it from the wallet and fetches again with the payment. The spend policy \
judges the payment as it judges a transfer: one it refuses comes back as an error naming the rule; \
one above `max_amount_atomic` is refused before it is asked. Answers `status: paid` or `free` with \
the server's `response` (its status, a few headers, and its body as text or `body_base64`) and, \
when paid, the `payment` (its intent and the server's settlement). A payment that needs an \
operator answers `status: pending_confirmation` with an approval_url: call again with the same \
idempotency_key once approved. A server that fails after payment comes back as an error with the \
payment's intent. Private and loopback addresses are refused. The idempotency_key is required: \
one key per purchase; calling again with it never pays twice.",
        input_schema = input::<PayX402ResourceArguments>(),
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn pay_x402_resource(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<PayX402ResourceArguments>,
    ) -> CallToolResult {
        let command = or_refuse!(X402Fetch::try_from(or_refuse!(arguments).into_request()));
        let fetched = self
            .services()
            .wallets
            .fetch_x402(&caller.principal(), command)
            .await;
        match fetched {
            Ok(FetchOutcome::Free(response)) => answer(X402FetchOut::free(FetchedResponseOut::of(
                response.status,
                &response.headers,
                response.body,
            ))),
            Ok(FetchOutcome::Paid {
                response,
                intent,
                settlement,
            }) => answer(X402FetchOut::paid(
                FetchedResponseOut::of(response.status, &response.headers, response.body),
                &intent,
                settlement,
            )),
            Ok(FetchOutcome::Pending(intent)) => {
                answer(X402PendingOut::of(&intent, &self.toolbox.public_base_url))
            }
            Err(failure) => match failure.paid_and_failed() {
                Ok((detail, intent)) => refused_with(
                    edge::Refusal::BadGateway(detail),
                    Map::from_iter([(
                        "intent".to_owned(),
                        to_json(&TransferIntentOut::from(intent.as_ref())),
                    )]),
                ),
                Err(failure) => refused(failure.into()),
            },
        }
    }

    #[tool(
        name = "get_transfer_intent",
        meta = super::needs(Scope::WalletRead),
        title = "Get a transfer intent",
        description = "One of the agent's transfer intents as it stands now: \
`pending_confirmation` (waiting for an operator), `confirmed`, `submitted` (sent to the chain), \
`executed` (mined, see tx_hash), `failed` (the money did not and will not move), `rejected` or \
`expired`.",
        input_schema = input::<IntentArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_transfer_intent(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<IntentArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let intent = or_refuse!(
            self.services()
                .wallets
                .intent(&caller.profile, &arguments.intent_id)
                .await
        );
        answer(TransferIntentOut::from(&intent))
    }

    #[tool(
        name = "list_transfer_intents",
        meta = super::needs(Scope::WalletRead),
        title = "List transfer intents",
        description = "A page of the agent's transfer intents, newest first. Pass next_cursor as \
cursor for the next page.",
        input_schema = input::<ListIntentsArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_transfer_intents(
        &self,
        caller: Caller,
        Arguments(arguments): Arguments<ListIntentsArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let limit = or_refuse!(arguments.limit());
        let page = or_refuse!(
            self.services()
                .wallets
                .intents(&caller.profile, arguments.cursor.as_deref(), limit)
                .await
        );
        answer(TransferIntentPage {
            items: page.items.iter().map(TransferIntentOut::from).collect(),
            next_cursor: page.next_cursor,
        })
    }

    #[tool(
        name = "wait_for_transfer_decision",
        meta = super::needs(Scope::WalletRead),
        title = "Wait for an operator's decision",
        description = "Waits until an operator confirms or rejects a transfer intent (or it \
expires), up to `timeout` seconds (at most 55), and returns the intent. When no decision comes in \
time the answer is `decided: false` with the intent still `pending_confirmation`: call again to \
keep waiting. A confirmed intent then moves on to `submitted` and `executed` by itself.",
        input_schema = input::<WaitForDecisionArguments>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn wait_for_transfer_decision(
        &self,
        caller: Caller,
        context: RequestContext<RoleServer>,
        Arguments(arguments): Arguments<WaitForDecisionArguments>,
    ) -> CallToolResult {
        let arguments = or_refuse!(arguments);
        let timeout = or_refuse!(arguments.timeout());
        let waited = reporting_progress(
            &context,
            "waiting for an operator's decision",
            timeout,
            PROGRESS_EVERY,
            self.services()
                .decisions
                .wait(&caller.principal(), &arguments.intent_id, timeout),
        )
        .await;
        let (decided, intent) = match waited {
            None => return refused(cancelled()),
            Some(Err(error)) => return refused(error.into()),
            Some(Ok(Decision::Decided(intent))) => (true, intent),
            Some(Ok(Decision::Pending(intent))) => (false, intent),
        };
        let intent = TransferIntentOut::from(&intent);
        answer(DecisionAnswer {
            decided,
            approval_url: self.toolbox.approval_url(&intent),
            intent,
            detail: (!decided).then(|| {
                format!(
                    "No operator decided within {} s; the intent is still pending_confirmation. \
                     Call wait_for_transfer_decision again to keep waiting.",
                    timeout.as_secs()
                )
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://runtime.example/console/intents/1";

    #[test]
    fn an_admitted_intent_says_in_one_sentence_who_decides_and_where() {
        let pending = next_step(
            IntentStatus::PendingConfirmation,
            IntentStatus::PendingConfirmation,
            URL,
        );
        assert!(
            pending.starts_with("An operator decides") && pending.contains(URL),
            "{pending}"
        );
        let confirmed = next_step(IntentStatus::Executed, IntentStatus::Confirmed, URL);
        assert!(confirmed.contains("without an operator"), "{confirmed}");
        let decided = next_step(
            IntentStatus::Rejected,
            IntentStatus::PendingConfirmation,
            URL,
        );
        assert!(
            decided.contains("already decided") && decided.contains(URL),
            "{decided}"
        );
        for sentence in [pending, confirmed, decided] {
            assert_eq!(
                sentence.matches(". ").count(),
                0,
                "one sentence: {sentence}"
            );
            assert!(
                sentence.ends_with('.') && !sentence.contains("  "),
                "{sentence}"
            );
        }
    }
}
