//! Every use case of the runtime, built once (by the composition root) and held by every way in:
//! the HTTP API, `agentctl`, and the transports to come. None of them assembles services of its
//! own.

use std::sync::Arc;

use crate::{
    AgentService, CodeService, EmailService, LongLived, OperatorServices, SmsService, WalletService,
};

pub struct Services {
    /// Authentication of agent keys.
    pub agents: AgentService,
    pub wallets: WalletService,
    pub email: EmailService,
    pub sms: SmsService,
    /// Waits for a code, over SMS, mail or both.
    pub codes: CodeService,
    /// The long-lived requests held on this instance (waits now), capped per agent and counted.
    pub long_lived: Arc<LongLived>,
    /// The operator's side: agents, policies, decisions on intents, chain resolution.
    pub operator: OperatorServices,
}

impl Services {
    /// Ends every wait at once (each answers as timed out), for a stopping instance.
    pub fn shut_down(&self) {
        self.codes.shut_down();
    }
}
