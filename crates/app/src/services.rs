//! Every use case of the runtime, built once (by the composition root) and held by every way in:
//! the HTTP API, `agentctl`, and the transports to come. None of them assembles services of its
//! own.

use std::sync::Arc;

use crate::{
    AgentService, CodeService, DecisionWaits, EventService, KeyService, LongLived, MailServices,
    OperatorServices, SmsService, WalletService, WebhookService,
};

pub struct Services {
    /// Authentication of agent keys.
    pub agents: AgentService,
    /// An agent's keys: delegation by its keys, and the operator's.
    pub keys: KeyService,
    pub wallets: WalletService,
    /// Mail: sending (`outbound`), the inbox (`mailbox`) and what the provider delivers
    /// (`intake`).
    pub mail: MailServices,
    pub sms: SmsService,
    /// Waits for a code, over SMS, mail or both.
    pub codes: CodeService,
    /// Waits for an operator's decision on a transfer intent.
    pub decisions: DecisionWaits,
    /// The agent's event log: its feed and its live followers.
    pub events: EventService,
    /// The agent's webhook endpoints.
    pub webhooks: WebhookService,
    /// The long-lived requests held on this instance (waits, event streams), capped per agent
    /// and counted.
    pub long_lived: Arc<LongLived>,
    /// The operator's side: agents, policies, decisions on intents, chain resolution.
    pub operator: OperatorServices,
}

impl Services {
    /// Ends every wait (each answers as timed out) and every live stream (event streams, the
    /// console's live lists) at once, for a stopping instance.
    pub fn shut_down(&self) {
        self.long_lived.shut_down();
        self.codes.shut_down();
        self.decisions.shut_down();
        self.events.shut_down();
    }
}
