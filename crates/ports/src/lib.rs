//! The traits the agent-runtime core needs from the outside world, and the records they carry.
//! Port signatures hold domain and std types only, never an adapter's types.

pub mod agents;
pub mod chain;
pub mod health;
pub mod intents;
pub mod provisioning;
pub mod wallet_keys;

pub use agents::{
    AgentProfile, AgentRecord, AgentStore, EmailInboxRecord, NewAgent, NewEmailInbox,
    NewPhoneNumber, NewWallet, PhoneNumberRecord, PolicyAsset, SpendPolicyRecord, StoreError,
    WalletRecord,
};
pub use chain::{
    BroadcastError, ChainClient, ChainError, ChainWriter, FeeQuote, ReceiptStatus, SignedTransfer,
    TransferCall,
};
pub use health::{DatabaseHealth, PoolUsage};
pub use intents::{
    Admission, AdmissionCheck, AdmissionError, IntentFilter, IntentStore, NewTransferIntent,
    SubmissionClaim, SubmissionError, SubmittedIntent, TransferIntentRecord, TransitionError,
};
pub use provisioning::{
    InboxProvisioner, KeyVault, NumberProvisioner, ProviderError, ProvisionedInbox,
    ProvisionedNumber, SealedWalletKey,
};
pub use wallet_keys::{SealedKeyRecord, WalletKeyStore};

#[cfg(feature = "mock")]
pub use agents::MockAgentStore;
#[cfg(feature = "mock")]
pub use chain::{MockChainClient, MockChainWriter};
#[cfg(feature = "mock")]
pub use health::MockDatabaseHealth;
#[cfg(feature = "mock")]
pub use intents::MockIntentStore;
#[cfg(feature = "mock")]
pub use provisioning::{MockInboxProvisioner, MockKeyVault, MockNumberProvisioner};
#[cfg(feature = "mock")]
pub use wallet_keys::MockWalletKeyStore;
