//! The runtime side of the wallet: address, policy, balances, transfer intents.

mod fetch;

use std::sync::Arc;
use std::time::Duration;

pub use domain::receipts::SignedReceipt;
use domain::receipts::{ExportRange, NotExecuted, Receipt, MAX_EXPORT_ROWS};
use domain::x402::{
    payment_header_value, AuthorizationWindow, ChosenOffer, NothingPayable, PayableBy,
    PaymentChallenge, TokenDomain, TransferAuthorization,
};
use domain::{
    check_recipient, check_transfer_amount, evaluate_transfer, evaluate_x402, window_usage,
    Admitted, AgentId, AgentProfile, Asset, AssetBalance, AtomicAmount, Chain, CursorCodec,
    CursorPosition, EvmAddress, Held, IdempotencyKey, IntentId, IntentStatus, PolicyAsset,
    PolicyViolation, RateLimit, RecipientRefused, SpendPolicyRecord, Targets, TransferIntentRecord,
    TransferTerms, TransferTooLarge, WalletBalances, WalletRecord, WindowUsage,
};
pub use fetch::{FetchFailure, FetchOutcome};
use ports::{
    Admission, AdmissionContext, AdmissionError, AdmissionLimits, AdmissionRefusal,
    AdmissionSigner, AgentStore, ChainClient, ChainError, ChainWriter, IntentAdmission,
    IntentFilter, IntentRecords, KeyVault, KeyedRefusal, ListingVersion, NewTransferIntent,
    ProviderError, ReceiptKey, ReceiptSigner, RecordedAuthorization, ResourceFetcher,
    SignedAuthorization, SigningBasis, SigningFailed, StoreError, TransitionError, UsageVersion,
    WalletUsage, X402Authorizations,
};
use rand::RngCore;
use time::OffsetDateTime;
use uuid::Uuid;

pub use domain::commands::{SendRequest, X402Check, X402Fetch, X402Request};

use crate::agents::Principal;
use crate::chain_id::KnownChainId;
use crate::in_flight::InFlight;
use crate::paging::{first_page_against, into_page, Kept};
use crate::NotProvisioned;

/// How long an idempotency key answers retries with its intent; after it, the key may be used for
/// a new transfer (Stripe keeps keys for 24 hours too).
pub const IDEMPOTENCY_KEY_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How much one agent may send: a rate shared by every instance, and how many of its sends one
/// instance works on at once (so one agent cannot take every database connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendLimits {
    pub rate: RateLimit,
    pub concurrent_per_agent: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum WalletError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum BalanceError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error("only {asset} on {chain} is supported")]
    Unsupported { asset: Asset, chain: Chain },
    #[error(transparent)]
    TooLarge(#[from] TransferTooLarge),
    #[error(transparent)]
    Recipient(RecipientRefused),
    #[error(transparent)]
    Policy(PolicyViolation),
    #[error("idempotency key already used by intent {original} for a different transfer")]
    IdempotencyMismatch { original: IntentId },
    #[error("a request with this idempotency key is in progress")]
    KeyInFlight,
    #[error("too many sends; retry after {retry_after:?}")]
    RateLimited { retry_after: Duration },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<WalletError> for SendError {
    fn from(error: WalletError) -> Self {
        match error {
            WalletError::NotProvisioned(missing) => Self::NotProvisioned(missing),
            WalletError::Store(store) => Self::Store(store),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum X402Outcome {
    /// Signed and recorded: the payment header's name and the recorded authorization.
    Authorized {
        authorization: RecordedAuthorization,
        header: &'static str,
    },
    /// Waiting for operators; a retry under the same key once they approved is signed then.
    Pending(TransferIntentRecord),
}

#[derive(Debug, thiserror::Error)]
pub enum X402Error {
    #[error(transparent)]
    NothingPayable(#[from] NothingPayable),
    #[error("the payment asks {amount}, above max_amount_atomic {ceiling}")]
    AboveCeiling {
        amount: AtomicAmount,
        ceiling: AtomicAmount,
    },
    #[error("this service pays x402 only in a token it is configured with")]
    NoToken,
    /// The offer's `extra` names an EIP-712 domain the token does not sign under: an
    /// authorization signed in it would never pay.
    #[error("the offer's extra names the token's EIP-712 domain as name {name:?}, version {version:?}, which is not the domain of the token at {token}")]
    TokenDomain {
        name: String,
        version: String,
        token: EvmAddress,
    },
    /// The intent under this idempotency key will sign nothing more.
    #[error("the payment {intent} under this idempotency key is {status}: nothing more is signed for it; retry with a new idempotency key")]
    Ended {
        intent: IntentId,
        status: IntentStatus,
    },
    #[error(transparent)]
    Send(#[from] SendError),
    #[error(transparent)]
    Chain(ChainError),
    #[error("signing the authorization: {0}")]
    Signing(ProviderError),
    #[error(transparent)]
    Transition(TransitionError),
}

impl From<TransferTooLarge> for X402Error {
    fn from(error: TransferTooLarge) -> Self {
        Self::Send(SendError::TooLarge(error))
    }
}

/// What paying x402 challenges needs beside the wallet's stores: the authorizations' records,
/// the vault that signs them, and the chain whose id names the network.
pub struct X402Ports {
    pub payments: Arc<dyn X402Authorizations>,
    pub vault: Arc<dyn KeyVault>,
    pub chain: Arc<dyn ChainWriter>,
    /// Makes the requests of the agents' fetches.
    pub fetcher: Arc<dyn ResourceFetcher>,
    /// Where fetches may go: public addresses only, or private ones too.
    pub targets: Targets,
    chain_id: KnownChainId,
    /// The configured token's `DOMAIN_SEPARATOR()`, read from the chain once.
    token_separator: std::sync::OnceLock<[u8; 32]>,
}

impl X402Ports {
    pub fn new(
        payments: Arc<dyn X402Authorizations>,
        vault: Arc<dyn KeyVault>,
        chain: Arc<dyn ChainWriter>,
        fetcher: Arc<dyn ResourceFetcher>,
        targets: Targets,
    ) -> Self {
        Self {
            payments,
            vault,
            chain,
            fetcher,
            targets,
            chain_id: KnownChainId::default(),
            token_separator: std::sync::OnceLock::new(),
        }
    }

    async fn chain_id(&self) -> Result<u64, ChainError> {
        self.chain_id.of(self.chain.as_ref()).await
    }

    /// The EIP-712 separator `token` signs under, asked of `reader` the first time only.
    async fn token_separator(
        &self,
        reader: &dyn ChainClient,
        token: &EvmAddress,
    ) -> Result<[u8; 32], ChainError> {
        if let Some(separator) = self.token_separator.get() {
            return Ok(*separator);
        }
        let separator = reader.token_domain_separator(token).await?;
        Ok(*self.token_separator.get_or_init(|| separator))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ListIntentsError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    #[error("Invalid cursor")]
    InvalidCursor,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    /// No intent of this agent has that id.
    #[error("transfer intent not found")]
    NotFound,
    #[error(transparent)]
    NotExecuted(#[from] NotExecuted),
    #[error(transparent)]
    Chain(ChainError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the receipt could not be written: {0}")]
    Encoding(String),
    /// An export whose range holds more executions than one export gives.
    #[error(
        "the range holds more than {MAX_EXPORT_ROWS} executed intents: export a shorter range"
    )]
    TooMany,
}

#[derive(Debug, thiserror::Error)]
pub enum IntentLookupError {
    #[error(transparent)]
    NotProvisioned(#[from] NotProvisioned),
    /// No intent of this agent has that id (another agent's is not found either).
    #[error("transfer intent not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The policy in force and what is left of each window it caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyUsage {
    pub policy: SpendPolicyRecord,
    pub windows: Vec<WindowUsage>,
}

impl PolicyUsage {
    /// The policy and its windows, as an answer shows them together.
    pub fn parts(&self) -> (&SpendPolicyRecord, &[WindowUsage]) {
        (&self.policy, &self.windows)
    }
}

/// What an answer of the policy with its usage was read at: the version it shows, and the instant
/// an execution it counts first leaves its window (none while no window counts one). The answer
/// holds until either moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageStamp {
    pub version: UsageVersion,
    pub departs: Option<OffsetDateTime>,
}

impl UsageStamp {
    /// Whether an answer read at this stamp is still the answer at `version`, read at `now`.
    fn still_at(&self, version: &UsageVersion, now: OffsetDateTime) -> bool {
        self.version == *version && self.departs.is_none_or(|departs| now < departs)
    }
}

/// The policy's verdict on a transfer that was only checked: how it would go on, or the rule
/// that refuses it, with what each capped window holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferCheck {
    pub verdict: Result<Admitted, PolicyViolation>,
    pub windows: Vec<WindowUsage>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentPage {
    pub items: Vec<TransferIntentRecord>,
    pub next_cursor: Option<String>,
}

/// The stores a wallet service reads and writes.
pub struct WalletStores {
    /// Where the policy in force is read (`policy`).
    pub agents: Arc<dyn AgentStore>,
    pub admission: Arc<dyn IntentAdmission>,
    /// The agent's intents, read.
    pub records: Arc<dyn IntentRecords>,
    /// What the wallet's windows hold.
    pub usage: Arc<dyn WalletUsage>,
}

pub struct WalletService {
    stores: WalletStores,
    x402: X402Ports,
    /// Signs the receipts of executed intents.
    receipts: Arc<dyn ReceiptSigner>,
    chain: Arc<dyn ChainClient>,
    cursors: CursorCodec,
    token: PolicyAsset,
    limits: SendLimits,
    in_flight: InFlight,
}

impl WalletService {
    pub fn new(
        stores: WalletStores,
        x402: X402Ports,
        receipts: Arc<dyn ReceiptSigner>,
        chain: Arc<dyn ChainClient>,
        cursors: CursorCodec,
        token: PolicyAsset,
        limits: SendLimits,
    ) -> Self {
        Self {
            stores,
            x402,
            receipts,
            chain,
            cursors,
            token,
            limits,
            in_flight: InFlight::default(),
        }
    }

    /// The wallet of the authenticated agent, or the error that says it has none: read from the
    /// profile the request authenticated with, no query.
    pub fn wallet(&self, profile: &AgentProfile) -> Result<WalletRecord, WalletError> {
        Ok(require_wallet(profile)?.clone())
    }

    /// The policy in force and what the wallet's windows hold now (in `recipient`'s day too when
    /// given), read from the store in one reading: an operator's change shows at the agent's very
    /// next read, where the authenticated profile may hold the policy before it until the
    /// change's notification arrives (decision 0030). A wallet without a stored policy has no
    /// limits.
    async fn policy_and_held(
        &self,
        profile: &AgentProfile,
        recipient: Option<EvmAddress>,
    ) -> Result<(SpendPolicyRecord, Held), WalletError> {
        let (wallet, held) = self
            .stores
            .usage
            .wallet_and_held(profile.agent.id, recipient)
            .await?
            .ok_or(NotProvisioned::Wallet)?;
        Ok((wallet.policy_in_force(&self.token), held))
    }

    /// The policy in force with what each window it caps holds now and has left, as admission
    /// would count them at this instant.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn usage(&self, profile: &AgentProfile) -> Result<PolicyUsage, WalletError> {
        let (policy, held) = self.policy_and_held(profile, None).await?;
        let windows = window_usage(&policy.rules, &held);
        Ok(PolicyUsage { policy, windows })
    }

    /// The stored policy of the profile's wallet with its usage, as the agent reads itself
    /// (`/v1/agents/me`, MCP's `get_me`): a policy that caps no window (a new wallet's) has an
    /// empty usage and costs no read; one that caps a window is read with its windows as `usage`
    /// reads them. `None` while the wallet has no stored policy, or there is no wallet.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn shown_policy(
        &self,
        profile: &AgentProfile,
    ) -> Result<Option<PolicyUsage>, WalletError> {
        let Some(policy) = profile
            .wallet
            .as_ref()
            .and_then(|wallet| wallet.spend_policy.as_ref())
        else {
            return Ok(None);
        };
        if !policy.rules.caps_a_window() {
            return Ok(Some(PolicyUsage {
                policy: policy.clone(),
                windows: Vec::new(),
            }));
        }
        self.usage(profile).await.map(Some)
    }

    /// The policy in force with its usage, as `usage` reads it, unless what the caller keeps of
    /// an answer read at `held` is still the answer: then one small reading of where the usage
    /// stands. A read answer always carries the stamp it was read at: one reading gives it all.
    #[tracing::instrument(level = "debug", skip(self, profile, held), fields(agent = %profile.agent.id))]
    pub async fn usage_against<H>(
        &self,
        profile: &AgentProfile,
        held: Option<(UsageStamp, H)>,
    ) -> Result<Kept<PolicyUsage, H, UsageStamp>, WalletError> {
        let agent = profile.agent.id;
        let wallet = require_wallet(profile)?;
        if let Some((stamp, kept)) = held {
            let (version, now) = self.stores.usage.usage_version(agent, wallet.id).await?;
            if stamp.still_at(&version, now) {
                return Ok(Kept::Unchanged(kept));
            }
        }
        let reading = self
            .stores
            .usage
            .usage(agent)
            .await?
            .ok_or(NotProvisioned::Wallet)?;
        let policy = reading.wallet.policy_in_force(&self.token);
        let windows = window_usage(&policy.rules, &reading.held);
        Ok(Kept::Read {
            value: PolicyUsage { policy, windows },
            version: Some(UsageStamp {
                version: reading.version,
                departs: reading.earliest.first_departure(),
            }),
        })
    }

    /// The spend policy's verdict on a send of `request`, with the same checks of its terms as
    /// `send`, without creating or reserving anything.
    #[tracing::instrument(level = "debug", skip(self, profile, request), fields(agent = %profile.agent.id, amount = %request.amount, to = %request.to))]
    pub async fn check(
        &self,
        profile: &AgentProfile,
        request: SendRequest,
    ) -> Result<TransferCheck, SendError> {
        let terms = self.terms(&request)?;
        let wallet = require_wallet(profile)?;
        check_recipient(
            &terms.recipient,
            &wallet.address,
            self.token.token_address.as_ref(),
        )
        .map_err(SendError::Recipient)?;
        // The recipient's day is read whether the policy caps it or not: the verdict counts it
        // only where it does.
        let (policy, held) = self.policy_and_held(profile, Some(terms.recipient)).await?;
        let rules = &policy.rules;
        Ok(TransferCheck {
            verdict: evaluate_transfer(rules, &terms.recipient, terms.amount, &held),
            windows: window_usage(rules, &held),
        })
    }

    /// The transfer a send asks for, in the one asset and chain the service pays in.
    fn terms(&self, request: &SendRequest) -> Result<TransferTerms, SendError> {
        let supported = Asset::parse(&request.asset) == Some(self.token.asset)
            && Chain::parse(&request.chain) == Some(self.token.chain);
        if !supported {
            return Err(SendError::Unsupported {
                asset: self.token.asset,
                chain: self.token.chain,
            });
        }
        Ok(TransferTerms {
            asset: self.token.asset,
            chain: self.token.chain,
            recipient: request.to,
            amount: check_transfer_amount(request.amount)?,
        })
    }

    /// One of the agent's intents, by the id its routes show.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn intent(
        &self,
        profile: &AgentProfile,
        id: &str,
    ) -> Result<TransferIntentRecord, IntentLookupError> {
        require_wallet(profile)?;
        let id = id
            .parse::<IntentId>()
            .map_err(|_| IntentLookupError::NotFound)?;
        own_intent(self.stores.records.as_ref(), profile, id)
            .await?
            .ok_or(IntentLookupError::NotFound)
    }

    /// The signed receipt of one of the agent's executed intents (a transfer or an x402 payment).
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn receipt(
        &self,
        profile: &AgentProfile,
        id: &str,
    ) -> Result<SignedReceipt, ReceiptError> {
        let wallet = require_wallet(profile)?;
        let id = id.parse::<IntentId>().map_err(|_| ReceiptError::NotFound)?;
        let intent = own_intent(self.stores.records.as_ref(), profile, id)
            .await?
            .ok_or(ReceiptError::NotFound)?;
        let chain_id = self.x402.chain_id().await.map_err(ReceiptError::Chain)?;
        self.signed_receipt(&intent, &wallet.address, chain_id)
    }

    /// The signed receipts of the agent's intents executed within `range`, in the order they
    /// executed: what an operator reconciles against the chain and the books.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn export_receipts(
        &self,
        profile: &AgentProfile,
        range: ExportRange,
    ) -> Result<Vec<SignedReceipt>, ReceiptError> {
        let wallet = require_wallet(profile)?;
        let executed = self
            .stores
            .records
            .list(IntentFilter {
                agent: Some(profile.agent.id),
                status: Some(IntentStatus::Executed),
                executed_from: Some(range.from),
                executed_before: Some(range.to),
                oldest_first: true,
                limit: Some(MAX_EXPORT_ROWS + 1),
                ..IntentFilter::default()
            })
            .await?;
        if executed.len() > MAX_EXPORT_ROWS {
            return Err(ReceiptError::TooMany);
        }
        if executed.is_empty() {
            return Ok(Vec::new());
        }
        let chain_id = self.x402.chain_id().await.map_err(ReceiptError::Chain)?;
        executed
            .iter()
            .map(|intent| self.signed_receipt(intent, &wallet.address, chain_id))
            .collect()
    }

    fn signed_receipt(
        &self,
        intent: &TransferIntentRecord,
        wallet: &EvmAddress,
        chain_id: u64,
    ) -> Result<SignedReceipt, ReceiptError> {
        let receipt = Receipt::of(intent, wallet, chain_id, &self.receipts.current_key_id())?;
        let signed = receipt
            .canonical_json()
            .map_err(|error| ReceiptError::Encoding(error.to_string()))?;
        Ok(SignedReceipt {
            signature: self.receipts.sign(&signed),
            receipt,
        })
    }

    /// Every key receipts were signed with, the current one first.
    pub fn receipt_keys(&self) -> Vec<ReceiptKey> {
        self.receipts.keys()
    }

    /// Native and token balances, both read from the chain now: never a cached figure.
    #[tracing::instrument(level = "debug", skip(self, profile), fields(agent = %profile.agent.id))]
    pub async fn balances(&self, profile: &AgentProfile) -> Result<WalletBalances, BalanceError> {
        let wallet = require_wallet(profile)?.clone();
        let native = wallet.chain.native_asset();
        let mut assets = vec![AssetBalance {
            asset: native,
            chain: wallet.chain,
            decimals: native.decimals(),
            amount: self.chain.native_balance(&wallet.address).await?,
            token_address: None,
        }];
        if let Some(token) = &self.token.token_address {
            let amount = self.chain.token_balance(token, &wallet.address).await?;
            let decimals = self.chain.token_decimals(token).await?;
            assets.push(AssetBalance {
                asset: self.token.asset,
                chain: wallet.chain,
                decimals,
                amount,
                token_address: Some(*token),
            });
        }
        Ok(WalletBalances { wallet, assets })
    }

    /// Creates a transfer intent, pending until the operators it needs approve it, or confirmed
    /// at once by the policy's auto-confirm tier. Returns the intent and whether it is an earlier
    /// one replayed for the same idempotency key.
    #[tracing::instrument(level = "debug", skip(self, principal, request), fields(agent = %principal.profile.agent.id, amount = %request.amount, to = %request.to))]
    pub async fn send(
        &self,
        principal: &Principal,
        request: SendRequest,
    ) -> Result<(TransferIntentRecord, bool), SendError> {
        let terms = self.terms(&request)?;
        self.admit(principal, terms, request.idempotency_key, None, None)
            .await
    }

    /// Admits an intent of `terms` (an x402 payment of `offer`, when given) in the wallet's
    /// locked step: the recipient and the spend policy judged against what the windows hold.
    async fn admit(
        &self,
        principal: &Principal,
        terms: TransferTerms,
        idempotency_key: Option<IdempotencyKey>,
        offer: Option<ChosenOffer>,
        signer: Option<&dyn AdmissionSigner>,
    ) -> Result<(TransferIntentRecord, bool), SendError> {
        let profile = principal.profile.as_ref();
        let agent = profile.agent.id;
        let _slot = self
            .in_flight
            .enter(agent, self.limits.concurrent_per_agent)
            .ok_or(SendError::RateLimited {
                retry_after: Duration::from_secs(1),
            })?;
        let intent = NewTransferIntent {
            id: IntentId(Uuid::now_v7()),
            agent_id: agent,
            terms,
            token_address: self.token.token_address,
            idempotency_key,
            key_id: Some(principal.key.id),
            x402: offer,
        };
        let token = self.token.token_address;
        let evaluate = match intent.x402 {
            Some(_) => evaluate_x402,
            None => evaluate_transfer,
        };
        let check = move |context: &AdmissionContext<'_>| {
            check_recipient(&terms.recipient, context.wallet_address, token.as_ref())
                .map_err(AdmissionRefusal::Recipient)?;
            evaluate(
                &context.policy.rules,
                &terms.recipient,
                terms.amount,
                &context.held,
            )
            .map_err(AdmissionRefusal::Policy)
        };
        let limits = AdmissionLimits {
            idempotency_key: IDEMPOTENCY_KEY_TTL,
            rate: self.limits.rate,
        };
        match self
            .stores
            .admission
            .admit(intent, limits, &check, signer)
            .await
        {
            Ok(Admission::Created(intent)) => Ok((intent, false)),
            Ok(Admission::Replayed(intent)) => Ok((intent, true)),
            Err(AdmissionError::NoWallet) => Err(NotProvisioned::Wallet.into()),
            Err(AdmissionError::Refused(AdmissionRefusal::Recipient(refused))) => {
                Err(SendError::Recipient(refused))
            }
            Err(AdmissionError::Refused(AdmissionRefusal::Policy(violation))) => {
                Err(SendError::Policy(violation))
            }
            Err(AdmissionError::Keyed(KeyedRefusal::IdempotencyMismatch { original })) => {
                Err(SendError::IdempotencyMismatch { original })
            }
            Err(AdmissionError::Keyed(KeyedRefusal::KeyInFlight)) => Err(SendError::KeyInFlight),
            // The signer keeps why it failed, and its caller answers that.
            Err(AdmissionError::Signing(failed)) => Err(SendError::Store(StoreError::Unavailable(
                failed.to_string(),
            ))),
            Err(AdmissionError::Keyed(KeyedRefusal::RateLimited { retry_after })) => {
                Err(SendError::RateLimited { retry_after })
            }
            Err(AdmissionError::Store(store)) => Err(store.into()),
        }
    }

    /// Pays an x402 challenge: the offer this wallet can pay is admitted as an intent of kind
    /// `x402` under the spend policy, as a send is; once confirmed (by the auto-confirm tier, or
    /// by operators before a retry under the same key), an EIP-3009 authorization is signed,
    /// recorded, and only then handed out. A retry under the key is answered the recorded
    /// authorization while the intent holds it: one key, one nonce.
    #[tracing::instrument(level = "debug", skip(self, principal, request), fields(agent = %principal.profile.agent.id))]
    pub async fn authorize_x402(
        &self,
        principal: &Principal,
        request: X402Request,
    ) -> Result<X402Outcome, X402Error> {
        require_wallet(&principal.profile).map_err(SendError::from)?;
        let (mut offer, payable) = self
            .payable_offer(&request.challenge, request.max_amount)
            .await?;
        if offer.resource_url.is_none() {
            offer.resource_url = request.resource_url;
        }
        let terms = self.payment_terms(&offer)?;
        // A payment the policy confirms at once is signed under the wallet's lock and recorded
        // in the admission's transaction; one an operator approved is signed by the first call
        // after the approval, then recorded. Either way nothing is signed before the payment is
        // confirmed, and nothing is handed out before it is recorded.
        let at_admission = SigningAtAdmission {
            wallet: self,
            offer: &offer,
            payable,
            signed: std::sync::Mutex::new(None),
        };
        let admitted = self
            .admit(
                principal,
                terms,
                Some(request.idempotency_key),
                Some(offer.clone()),
                Some(&at_admission),
            )
            .await;
        let signed_now = at_admission
            .signed
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (intent, _) = match (admitted, signed_now) {
            (Err(_), Some(Err(unsigned))) => return Err(unsigned),
            (Ok(admitted), Some(Ok(payment))) if !admitted.1 => {
                return Ok(X402Outcome::Authorized {
                    authorization: RecordedAuthorization {
                        intent: admitted.0,
                        payment,
                    },
                    header: offer.version.payment_header(),
                })
            }
            (admitted, _) => admitted?,
        };
        let header = offer.version.payment_header();
        match intent.status {
            IntentStatus::PendingConfirmation => Ok(X402Outcome::Pending(intent)),
            // Approved since it was asked for. The authorization a concurrent request under the
            // same key recorded first wins.
            IntentStatus::Confirmed => {
                let signed = self.sign(intent.agent_id, &offer, payable).await?;
                let authorization = self
                    .x402
                    .payments
                    .record_authorization(intent.id, &signed)
                    .await
                    .map_err(X402Error::Transition)?;
                Ok(X402Outcome::Authorized {
                    authorization,
                    header,
                })
            }
            IntentStatus::Authorized | IntentStatus::Executed => {
                let authorization = self
                    .x402
                    .payments
                    .recorded_authorization(intent.id)
                    .await
                    .map_err(SendError::from)?
                    .ok_or(X402Error::Ended {
                        intent: intent.id,
                        status: intent.status,
                    })?;
                Ok(X402Outcome::Authorized {
                    authorization,
                    header,
                })
            }
            status => Err(X402Error::Ended {
                intent: intent.id,
                status,
            }),
        }
    }

    /// The spend policy's verdict on paying `request`'s challenge, as `authorize_x402` would judge
    /// it, without creating or reserving anything.
    #[tracing::instrument(level = "debug", skip(self, profile, request), fields(agent = %profile.agent.id))]
    pub async fn check_x402(
        &self,
        profile: &AgentProfile,
        request: X402Check,
    ) -> Result<TransferCheck, X402Error> {
        let wallet = require_wallet(profile).map_err(SendError::from)?;
        let (offer, _) = self
            .payable_offer(&request.challenge, request.max_amount)
            .await?;
        let terms = self.payment_terms(&offer)?;
        check_recipient(
            &terms.recipient,
            &wallet.address,
            self.token.token_address.as_ref(),
        )
        .map_err(SendError::Recipient)?;
        let (policy, held) = self
            .policy_and_held(profile, Some(terms.recipient))
            .await
            .map_err(SendError::from)?;
        let rules = &policy.rules;
        Ok(TransferCheck {
            verdict: evaluate_x402(rules, &terms.recipient, terms.amount, &held),
            windows: window_usage(rules, &held),
        })
    }

    /// The offer of `challenge` this wallet pays, within the agent's own `ceiling`.
    async fn payable_offer(
        &self,
        challenge: &PaymentChallenge,
        ceiling: Option<AtomicAmount>,
    ) -> Result<(ChosenOffer, PayableBy), X402Error> {
        let payable = PayableBy {
            chain_id: self.x402.chain_id().await.map_err(X402Error::Chain)?,
            usdc: self.token.token_address.ok_or(X402Error::NoToken)?,
        };
        let offer = challenge.choose(&payable)?;
        let offered = TokenDomain::of_offer(&offer, payable.chain_id).separator();
        let token = self
            .x402
            .token_separator(self.chain.as_ref(), &payable.usdc)
            .await
            .map_err(X402Error::Chain)?;
        if offered != token {
            return Err(X402Error::TokenDomain {
                name: offer.domain_name,
                version: offer.domain_version,
                token: payable.usdc,
            });
        }
        if let Some(ceiling) = ceiling {
            if offer.amount.value() > ceiling.value() {
                return Err(X402Error::AboveCeiling {
                    amount: offer.amount,
                    ceiling,
                });
            }
        }
        Ok((offer, payable))
    }

    /// What paying `offer` transfers: its amount of the configured token to its `payTo`.
    fn payment_terms(&self, offer: &ChosenOffer) -> Result<TransferTerms, X402Error> {
        Ok(TransferTerms {
            asset: self.token.asset,
            chain: self.token.chain,
            recipient: offer.pay_to,
            amount: check_transfer_amount(offer.amount)?,
        })
    }

    /// An authorization of `offer` from the agent's wallet, signed now: `validBefore` counts
    /// from this moment.
    async fn sign(
        &self,
        agent: AgentId,
        offer: &ChosenOffer,
        payable: PayableBy,
    ) -> Result<SignedAuthorization, X402Error> {
        let basis = self
            .x402
            .payments
            .signing_basis(agent, payable.chain_id)
            .await
            .map_err(SendError::from)?
            .ok_or(SendError::from(NotProvisioned::Wallet))?;
        self.sign_on(basis, offer, payable).await
    }

    /// `sign` with the wallet's key and the watch's head already read.
    async fn sign_on(
        &self,
        basis: SigningBasis,
        offer: &ChosenOffer,
        payable: PayableBy,
    ) -> Result<SignedAuthorization, X402Error> {
        // The use of an authorization signed now is searched from a block that existed before:
        // the head the settlement watch saw, or, before it saw any, the chain's own.
        let watch_from_block = match basis.known_head {
            Some(head) => head,
            None => {
                self.chain
                    .block_head(None)
                    .await
                    .map_err(X402Error::Chain)?
                    .number
            }
        };
        let mut nonce = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let authorization = TransferAuthorization {
            from: basis.wallet_address,
            to: offer.pay_to,
            value: offer.amount,
            window: AuthorizationWindow::signed_at(
                OffsetDateTime::now_utc(),
                offer.max_timeout_secs,
            ),
            nonce,
        };
        let domain = TokenDomain::of_offer(offer, payable.chain_id);
        let signature = self
            .x402
            .vault
            .sign_transfer_authorization(&basis.sealed_key, &authorization, &domain)
            .await
            .map_err(X402Error::Signing)?;
        Ok(SignedAuthorization {
            payment: payment_header_value(offer, &authorization, &signature),
            offer: offer.clone(),
            nonce,
            window: authorization.window,
            watch_from_block,
        })
    }

    /// The first page of the agent's intents, unless it is still the page at `held`, a version
    /// an earlier answer of this call gave, with what the caller keeps of its page (see
    /// `Kept`).
    pub async fn intents_first_page<H>(
        &self,
        profile: &AgentProfile,
        limit: usize,
        held: Option<(ListingVersion, H)>,
    ) -> Result<Kept<IntentPage, H>, ListIntentsError> {
        if profile.wallet.is_none() {
            return Err(NotProvisioned::Wallet.into());
        }
        let agent = profile.agent.id;
        first_page_against(
            held,
            || async { Ok(self.stores.records.listing_version(agent).await?) },
            || self.intents(profile, None, limit),
        )
        .await
    }

    /// One page of the agent's intents, newest first. Whether the agent has a wallet is read from
    /// the profile it authenticated with, so a page costs one query.
    #[tracing::instrument(level = "debug", skip(self, profile, cursor), fields(agent = %profile.agent.id))]
    pub async fn intents(
        &self,
        profile: &AgentProfile,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<IntentPage, ListIntentsError> {
        let agent = profile.agent.id;
        let scope = format!("intents:{agent}");
        let after = self
            .cursors
            .decode_optional(&scope, cursor)
            .map_err(|_| ListIntentsError::InvalidCursor)?;
        if profile.wallet.is_none() {
            return Err(NotProvisioned::Wallet.into());
        }
        let fetched = self.stores.records.page(agent, after, limit + 1).await?;
        let (items, next_cursor) = into_page(fetched, limit, &self.cursors, &scope, |last| {
            CursorPosition::of(last.created_at, last.id.0)
        });
        Ok(IntentPage { items, next_cursor })
    }
}

/// The agent's intent `id`; another agent's is none of its own.
pub(crate) async fn own_intent(
    records: &dyn IntentRecords,
    profile: &AgentProfile,
    id: IntentId,
) -> Result<Option<TransferIntentRecord>, StoreError> {
    Ok(records
        .find(id)
        .await?
        .filter(|intent| intent.agent_id == profile.agent.id))
}

/// The agent's wallet, or the error that says it has none.
fn require_wallet(profile: &AgentProfile) -> Result<&WalletRecord, NotProvisioned> {
    profile.wallet.as_ref().ok_or(NotProvisioned::Wallet)
}

/// The signer an x402 admission calls under the wallet's lock when the policy confirms the
/// payment at once: it signs as `WalletService::sign` does and keeps, for the call that asked,
/// the payment header it made or why it could not.
struct SigningAtAdmission<'a> {
    wallet: &'a WalletService,
    offer: &'a ChosenOffer,
    payable: PayableBy,
    signed: std::sync::Mutex<Option<Result<String, X402Error>>>,
}

#[async_trait::async_trait]
impl AdmissionSigner for SigningAtAdmission<'_> {
    fn chain_id(&self) -> u64 {
        self.payable.chain_id
    }

    async fn sign(&self, basis: SigningBasis) -> Result<SignedAuthorization, SigningFailed> {
        let (kept, answer) = match self.wallet.sign_on(basis, self.offer, self.payable).await {
            Ok(signed) => (Ok(signed.payment.clone()), Ok(signed)),
            Err(failed) => (Err(failed), Err(SigningFailed)),
        };
        *self
            .signed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(kept);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::fixtures::principal;
    use domain::{
        AgentId, AgentRecord, AtomicAmount, EarliestExecutions, EvmAddress, SpendLimits,
        SpendRules, SpendWindow, TransferIntentRecord, U256,
    };
    use ports::{
        Listing, MockAgentStore, MockChainClient, MockChainWriter, MockIntentAdmission,
        MockIntentRecords, MockKeyVault, MockWalletUsage, MockX402Authorizations, UsageReading,
    };

    /// The intents' reads, mocked: each expects only what a test tells it.
    #[derive(Default)]
    struct Ledger {
        records: MockIntentRecords,
        usage: MockWalletUsage,
    }

    const LIMITS: SendLimits = SendLimits {
        rate: RateLimit {
            per_minute: 600,
            burst: 60,
        },
        concurrent_per_agent: 2,
    };

    fn token() -> PolicyAsset {
        PolicyAsset::usdc_on_base(EvmAddress::from_bytes([0xaa; 20]))
    }

    fn service(
        admission: MockIntentAdmission,
        ledger: Ledger,
        chain: MockChainClient,
    ) -> WalletService {
        serving(MockAgentStore::new(), admission, ledger, chain)
    }

    fn serving(
        agents: MockAgentStore,
        admission: MockIntentAdmission,
        ledger: Ledger,
        chain: MockChainClient,
    ) -> WalletService {
        serving_x402(agents, admission, ledger, chain, X402Mocks::default())
    }

    /// What paying x402 challenges uses, mocked: each expects only what a test tells it.
    #[derive(Default)]
    struct X402Mocks {
        payments: MockX402Authorizations,
        vault: MockKeyVault,
        /// Asked for its head when the settlement watch has seen none.
        chain: MockChainClient,
        /// Makes the fetches' requests.
        fetcher: ports::MockResourceFetcher,
    }

    fn serving_x402(
        agents: MockAgentStore,
        admission: MockIntentAdmission,
        ledger: Ledger,
        chain: MockChainClient,
        x402: X402Mocks,
    ) -> WalletService {
        let mut writer = MockChainWriter::new();
        writer.expect_chain_id().returning(|| Ok(8453));
        WalletService::new(
            WalletStores {
                agents: Arc::new(agents),
                admission: Arc::new(admission),
                records: Arc::new(ledger.records),
                usage: Arc::new(ledger.usage),
            },
            X402Ports::new(
                Arc::new(x402.payments),
                Arc::new(x402.vault),
                Arc::new(writer),
                Arc::new(x402.fetcher),
                Targets::PublicOnly,
            ),
            Arc::new(ports::MockReceiptSigner::new()),
            Arc::new(chain),
            CursorCodec::new(b"test secret"),
            token(),
            LIMITS,
        )
    }

    fn sending(admission: MockIntentAdmission) -> WalletService {
        service(admission, Ledger::default(), MockChainClient::new())
    }

    /// What the admission check decides for `policy` and `held` when the wallet is `0x01…01`.
    fn judged(
        check: &ports::AdmissionCheck,
        policy: &SpendPolicyRecord,
        held: U256,
    ) -> Result<Admitted, AdmissionRefusal> {
        check(&AdmissionContext {
            wallet_address: &EvmAddress::from_bytes([1; 20]),
            policy,
            held: Held {
                daily: held,
                ..Held::default()
            },
        })
    }

    const ONE_APPROVAL: Admitted = Admitted::AwaitsApprovals(domain::ApprovalCount::ONE);

    fn reading(ledger: Ledger) -> WalletService {
        service(MockIntentAdmission::new(), ledger, MockChainClient::new())
    }

    fn request(asset: &str, chain: &str) -> SendRequest {
        SendRequest {
            to: EvmAddress::from_bytes([9; 20]),
            amount: AtomicAmount::parse("100").expect("valid"),
            asset: asset.into(),
            chain: chain.into(),
            idempotency_key: None,
        }
    }

    fn intent_from(new: &NewTransferIntent) -> TransferIntentRecord {
        TransferIntentRecord {
            id: new.id,
            agent_id: new.agent_id,
            asset: new.terms.asset,
            chain: new.terms.chain,
            recipient: new.terms.recipient,
            amount: new.terms.amount,
            token_address: new.token_address,
            idempotency_key: new.idempotency_key.clone(),
            ..TransferIntentRecord::fixture()
        }
    }

    fn policy_with(limits: SpendLimits) -> SpendPolicyRecord {
        SpendPolicyRecord {
            rules: SpendRules {
                limits,
                ..SpendRules::default()
            },
            ..SpendPolicyRecord::fixture()
        }
    }

    #[tokio::test]
    async fn only_usdc_on_base_is_accepted_and_nothing_else_reaches_the_store() {
        let mut admission = MockIntentAdmission::new();
        admission.expect_admit().never();
        let service = sending(admission);
        for (asset, chain) in [("ETH", "base"), ("USDC", "ethereum"), ("DAI", "polygon")] {
            let refused = service
                .send(
                    &principal(profile_with(Some(WalletRecord::fixture()))),
                    request(asset, chain),
                )
                .await;
            assert!(
                matches!(
                    &refused,
                    Err(SendError::Unsupported {
                        asset: Asset::Usdc,
                        chain: Chain::Base
                    })
                ),
                "{refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn send_admits_through_the_domain_rules_over_the_daily_window() {
        let mut admission = MockIntentAdmission::new();
        admission
            .expect_admit()
            .times(1)
            .returning(|new, limits, check, _| {
                assert_eq!(
                    limits,
                    AdmissionLimits {
                        idempotency_key: IDEMPOTENCY_KEY_TTL,
                        rate: LIMITS.rate,
                    }
                );
                assert_eq!(
                    (new.terms.asset, new.terms.chain),
                    (Asset::Usdc, Chain::Base)
                );
                let per_tx_50 = policy_with(SpendLimits {
                    max_per_tx: Some(AtomicAmount::parse("50").expect("valid")),
                    max_daily: None,
                    ..SpendLimits::default()
                });
                assert!(matches!(
                    judged(check, &per_tx_50, U256::ZERO),
                    Err(AdmissionRefusal::Policy(
                        PolicyViolation::ExceedsPerTransactionMax { .. }
                    ))
                ));
                let unlimited = policy_with(SpendLimits::default());
                assert_eq!(judged(check, &unlimited, U256::ZERO), Ok(ONE_APPROVAL));
                assert_eq!(
                    judged(check, &unlimited, U256::MAX),
                    Ok(ONE_APPROVAL),
                    "without a daily limit the window does not matter"
                );
                assert_eq!(new.key_id, Some(principal(AgentProfile::fixture()).key.id));
                Ok(Admission::Created(intent_from(&new)))
            });
        let (intent, replayed) = sending(admission)
            .send(
                &principal(profile_with(Some(WalletRecord::fixture()))),
                request("usdc", "Base"),
            )
            .await
            .expect("admitted");
        assert!(!replayed);
        assert_eq!(intent.status, domain::IntentStatus::PendingConfirmation);
    }

    #[tokio::test]
    async fn the_check_refuses_the_wallet_itself_the_token_and_the_zero_address() {
        let mut admission = MockIntentAdmission::new();
        admission.expect_admit().returning(|new, _, check, _| {
            let policy = policy_with(SpendLimits::default());
            Err(AdmissionError::Refused(
                judged(check, &policy, U256::ZERO).expect_err("refused"),
            ))
            .map(|()| Admission::Created(intent_from(&new)))
        });
        let service = sending(admission);
        for (recipient, refused) in [
            (EvmAddress::from_bytes([1; 20]), RecipientRefused::OwnWallet),
            (
                EvmAddress::from_bytes([0xaa; 20]),
                RecipientRefused::TokenContract,
            ),
            (
                EvmAddress::from_bytes([0; 20]),
                RecipientRefused::ZeroAddress,
            ),
        ] {
            let request = SendRequest {
                to: recipient,
                ..request("USDC", "base")
            };
            assert!(
                matches!(
                    service.send(&principal(profile_with(Some(WalletRecord::fixture()))), request).await,
                    Err(SendError::Recipient(r)) if r == refused
                ),
                "{refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn an_amount_above_the_bound_never_reaches_the_store() {
        let mut admission = MockIntentAdmission::new();
        admission.expect_admit().never();
        let too_large = SendRequest {
            amount: AtomicAmount::new(domain::MAX_TRANSFER_ATOMIC + U256::from(1u8))
                .expect("non-zero"),
            ..request("USDC", "base")
        };
        assert!(matches!(
            sending(admission)
                .send(
                    &principal(profile_with(Some(WalletRecord::fixture()))),
                    too_large
                )
                .await,
            Err(SendError::TooLarge(_))
        ));
    }

    #[tokio::test]
    async fn admission_outcomes_map_to_send_outcomes() {
        let original = IntentId(Uuid::now_v7());
        let mut admission = MockIntentAdmission::new();
        let mut calls = 0;
        admission
            .expect_admit()
            .times(6)
            .returning(move |new, _, _, _| {
                calls += 1;
                match calls {
                    1 => Ok(Admission::Replayed(intent_from(&new))),
                    2 => Err(AdmissionError::NoWallet),
                    3 => Err(AdmissionError::Keyed(KeyedRefusal::IdempotencyMismatch {
                        original,
                    })),
                    4 => Err(AdmissionError::Keyed(KeyedRefusal::KeyInFlight)),
                    5 => Err(AdmissionError::Keyed(KeyedRefusal::RateLimited {
                        retry_after: Duration::from_millis(1500),
                    })),
                    _ => Err(AdmissionError::Refused(AdmissionRefusal::Policy(
                        PolicyViolation::RecipientNotAllowlisted {
                            recipient: new.terms.recipient,
                        },
                    ))),
                }
            });
        let service = sending(admission);
        let agent = &principal(profile_with(Some(WalletRecord::fixture())));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Ok((_, true))
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::NotProvisioned(NotProvisioned::Wallet))
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::IdempotencyMismatch { original: o }) if o == original
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::KeyInFlight)
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::RateLimited { retry_after }) if retry_after == Duration::from_millis(1500)
        ));
        assert!(matches!(
            service.send(agent, request("USDC", "base")).await,
            Err(SendError::Policy(
                PolicyViolation::RecipientNotAllowlisted { .. }
            ))
        ));
    }

    fn profile_with(wallet: Option<WalletRecord>) -> AgentProfile {
        AgentProfile {
            agent: AgentRecord {
                id: AgentId(Uuid::now_v7()),
                ..AgentRecord::fixture()
            },
            phone_number: None,
            email_inbox: None,
            wallet,
        }
    }

    #[tokio::test]
    async fn pages_carry_a_cursor_only_when_more_follow_and_it_reads_back() {
        let profile = profile_with(Some(WalletRecord::fixture()));
        let agent = profile.agent.id;
        let mut ledger = Ledger::default();
        ledger
            .records
            .expect_page()
            .returning(move |_, after, limit| {
                let count = if after.is_some() { 1 } else { limit };
                Ok((0..count)
                    .map(|_| TransferIntentRecord {
                        id: IntentId(Uuid::now_v7()),
                        agent_id: agent,
                        ..TransferIntentRecord::fixture()
                    })
                    .collect())
            });
        let service = reading(ledger);
        let first = service.intents(&profile, None, 2).await.expect("page");
        assert_eq!(first.items.len(), 2);
        let cursor = first.next_cursor.expect("more follow");
        let second = service
            .intents(&profile, Some(&cursor), 2)
            .await
            .expect("page");
        assert_eq!((second.items.len(), second.next_cursor), (1, None));
        let elsewhere = service
            .intents(
                &profile_with(Some(WalletRecord::fixture())),
                Some(&cursor),
                2,
            )
            .await;
        assert!(
            matches!(elsewhere, Err(ListIntentsError::InvalidCursor)),
            "a cursor is bound to its agent"
        );
    }

    #[tokio::test]
    async fn a_garbage_cursor_is_invalid_and_no_wallet_is_said() {
        let mut ledger = Ledger::default();
        ledger.records.expect_page().never();
        let service = reading(ledger);
        let walletless = profile_with(None);
        assert!(matches!(
            service
                .intents(
                    &profile_with(Some(WalletRecord::fixture())),
                    Some("nope"),
                    5
                )
                .await,
            Err(ListIntentsError::InvalidCursor)
        ));
        assert!(matches!(
            service.intents(&walletless, None, 5).await,
            Err(ListIntentsError::NotProvisioned(NotProvisioned::Wallet))
        ));
        assert!(matches!(
            service.balances(&walletless).await,
            Err(BalanceError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[tokio::test]
    async fn a_first_page_of_intents_is_read_only_when_the_agents_intents_changed() {
        let profile = profile_with(Some(WalletRecord::fixture()));
        let agent = profile.agent.id;
        let version = move |changes| ListingVersion {
            listing: Listing::Intents(agent),
            changes,
        };
        let mut ledger = Ledger::default();
        let mut versions = mockall::Sequence::new();
        for changes in [5, 6, 6] {
            ledger
                .records
                .expect_listing_version()
                .withf(move |asked| *asked == agent)
                .times(1)
                .in_sequence(&mut versions)
                .returning(move |_| Ok(version(changes)));
        }
        ledger
            .records
            .expect_page()
            .times(1)
            .returning(move |_, after, _| {
                assert!(after.is_none(), "a first page");
                Ok(vec![TransferIntentRecord {
                    agent_id: agent,
                    ..TransferIntentRecord::fixture()
                }])
            });
        let service = reading(ledger);
        let held = service
            .intents_first_page(&profile, 20, Some((version(5), "kept")))
            .await
            .expect("read");
        assert!(matches!(held, Kept::Unchanged("kept")));
        let read = service
            .intents_first_page(&profile, 20, Some((version(5), "kept")))
            .await
            .expect("read");
        let Kept::Read {
            value: page,
            version: read,
        } = read
        else {
            panic!("the intents changed: the page is read");
        };
        assert_eq!((page.items.len(), read), (1, Some(version(6))));
        assert!(matches!(
            service
                .intents_first_page::<()>(&profile_with(None), 20, None)
                .await,
            Err(ListIntentsError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[test]
    fn the_wallet_is_the_authenticated_profiles() {
        let wallet = WalletRecord::fixture();
        let mut agents = MockAgentStore::new();
        agents.expect_profile().never();
        let service = serving(
            agents,
            MockIntentAdmission::new(),
            Ledger::default(),
            MockChainClient::new(),
        );
        assert_eq!(
            service
                .wallet(&profile_with(Some(wallet.clone())))
                .expect("a wallet"),
            wallet
        );
        assert!(matches!(
            service.wallet(&profile_with(None)),
            Err(WalletError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[tokio::test]
    async fn the_policy_is_the_one_in_force_not_the_authenticated_profiles() {
        let in_force = policy_with(SpendLimits {
            max_per_tx: Some(AtomicAmount::parse("50").expect("valid")),
            max_daily: None,
            ..SpendLimits::default()
        });
        let authenticated = profile_with(Some(WalletRecord::fixture()));
        let service = serving(
            MockAgentStore::new(),
            MockIntentAdmission::new(),
            ledger_holding(in_force.clone(), Held::default()),
            MockChainClient::new(),
        );
        assert_eq!(
            service.usage(&authenticated).await.expect("usage").policy,
            in_force
        );
        let mut walletless = Ledger::default();
        walletless
            .usage
            .expect_wallet_and_held()
            .returning(|_, _| Ok(None));
        let service = serving(
            MockAgentStore::new(),
            MockIntentAdmission::new(),
            walletless,
            MockChainClient::new(),
        );
        assert!(matches!(
            service.usage(&profile_with(None)).await,
            Err(WalletError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[tokio::test]
    async fn balances_list_the_native_asset_and_the_token_from_the_chain() {
        let mut chain = MockChainClient::new();
        chain
            .expect_native_balance()
            .returning(|_| Ok(U256::from(7u64)));
        chain
            .expect_token_balance()
            .returning(|_, _| Ok(U256::from(1_500_000u64)));
        chain.expect_token_decimals().returning(|_| Ok(6));
        let service = service(MockIntentAdmission::new(), Ledger::default(), chain);
        let balances = service
            .balances(&profile_with(Some(WalletRecord::fixture())))
            .await
            .expect("balances");
        let summary: Vec<_> = balances
            .assets
            .iter()
            .map(|a| (a.asset, a.decimals, a.amount, a.token_address.is_some()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (Asset::Eth, 18, U256::from(7u64), false),
                (Asset::Usdc, 6, U256::from(1_500_000u64), true)
            ]
        );
    }

    #[tokio::test]
    async fn an_unreachable_chain_is_an_error_never_a_stale_figure() {
        let mut chain = MockChainClient::new();
        chain
            .expect_native_balance()
            .returning(|_| Err(ChainError::Unavailable("connection refused".into())));
        let service = service(MockIntentAdmission::new(), Ledger::default(), chain);
        assert!(matches!(
            service
                .balances(&profile_with(Some(WalletRecord::fixture())))
                .await,
            Err(BalanceError::Chain(ChainError::Unavailable(_)))
        ));
    }
    /// A ledger whose one reading of the wallet holds `policy` and `held`.
    fn ledger_holding(policy: SpendPolicyRecord, held: Held) -> Ledger {
        let stored = WalletRecord {
            spend_policy: Some(policy),
            ..WalletRecord::fixture()
        };
        let mut ledger = Ledger::default();
        ledger
            .usage
            .expect_wallet_and_held()
            .withf(|_, recipient| recipient.is_none())
            .times(1)
            .returning(move |_, _| Ok(Some((stored.clone(), held))));
        ledger
    }

    /// A daily cap of 50 of which the day holds 30: a service whose ledger reads that once, the
    /// limits and the window it shows.
    fn daily_50_holding_30() -> (WalletService, SpendLimits, WindowUsage) {
        let daily_50 = SpendLimits {
            max_daily: Some(AtomicAmount::parse("50").expect("valid")),
            ..SpendLimits::default()
        };
        let held = Held {
            daily: U256::from(30),
            ..Held::default()
        };
        let service = serving(
            MockAgentStore::new(),
            MockIntentAdmission::new(),
            ledger_holding(policy_with(daily_50), held),
            MockChainClient::new(),
        );
        let window = WindowUsage {
            window: SpendWindow::Daily,
            cap: AtomicAmount::parse("50").expect("valid"),
            spent: U256::from(30),
            remaining: U256::from(20),
        };
        (service, daily_50, window)
    }

    #[tokio::test]
    async fn usage_counts_the_daily_window_of_the_policy_in_force() {
        let (service, daily_50, window) = daily_50_holding_30();
        let usage = service
            .usage(&profile_with(Some(WalletRecord::fixture())))
            .await
            .expect("usage");
        assert_eq!(usage.policy.rules.limits, daily_50);
        assert_eq!(usage.windows, [window]);
    }

    #[tokio::test]
    async fn usage_of_a_policy_without_windows_shows_no_window() {
        let held = Held {
            daily: U256::from(30),
            ..Held::default()
        };
        let service = serving(
            MockAgentStore::new(),
            MockIntentAdmission::new(),
            ledger_holding(policy_with(SpendLimits::default()), held),
            MockChainClient::new(),
        );
        let usage = service
            .usage(&profile_with(Some(WalletRecord::fixture())))
            .await
            .expect("usage");
        assert_eq!(usage.windows, []);
    }

    #[tokio::test]
    async fn the_shown_policy_is_read_only_when_it_caps_a_window() {
        let uncapped = policy_with(SpendLimits::default());
        let service = serving(
            MockAgentStore::new(),
            MockIntentAdmission::new(),
            Ledger::default(),
            MockChainClient::new(),
        );
        let profile = profile_with(Some(WalletRecord {
            spend_policy: Some(uncapped.clone()),
            ..WalletRecord::fixture()
        }));
        let shown = service.shown_policy(&profile).await.expect("shown");
        assert_eq!(
            shown,
            Some(PolicyUsage {
                policy: uncapped,
                windows: Vec::new()
            })
        );
        let without_policy = profile_with(Some(WalletRecord::fixture()));
        assert_eq!(
            service.shown_policy(&without_policy).await.expect("shown"),
            None
        );
        assert_eq!(
            service
                .shown_policy(&profile_with(None))
                .await
                .expect("shown"),
            None
        );

        let (service, daily_50, window) = daily_50_holding_30();
        let profile = profile_with(Some(WalletRecord {
            spend_policy: Some(policy_with(daily_50)),
            ..WalletRecord::fixture()
        }));
        let shown = service
            .shown_policy(&profile)
            .await
            .expect("shown")
            .expect("a stored policy");
        assert_eq!(shown.policy.rules.limits, daily_50);
        assert_eq!(shown.windows, [window]);
    }

    fn usage_version(agent: AgentId, wallet: domain::WalletId, intents: i64) -> UsageVersion {
        UsageVersion::of(agent, wallet, intents, 1)
    }

    fn instant(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(seconds)
    }

    #[tokio::test]
    async fn a_kept_usage_is_read_again_only_when_its_version_moves_or_an_execution_departs() {
        let profile = profile_with(Some(WalletRecord::fixture()));
        let (agent, wallet) = (profile.agent.id, WalletRecord::fixture().id);
        let daily_50 = policy_with(SpendLimits {
            max_daily: Some(AtomicAmount::parse("50").expect("valid")),
            ..SpendLimits::default()
        });
        // Executed 1,000 s after the epoch: it leaves the day a day later.
        let executed = instant(1_000);
        let departs = executed + SpendWindow::Daily.length();
        let kept = UsageStamp {
            version: usage_version(agent, wallet, 7),
            departs: Some(departs),
        };
        let mut ledger = Ledger::default();
        let mut readings = mockall::Sequence::new();
        // Unchanged; then the intents moved; then the same version, but at the departure.
        for (intents, now) in [
            (7, departs - time::Duration::SECOND),
            (8, instant(2_000)),
            (7, departs),
        ] {
            ledger
                .usage
                .expect_usage_version()
                .withf(move |asked, of| (*asked, *of) == (agent, wallet))
                .times(1)
                .in_sequence(&mut readings)
                .returning(move |_, _| Ok((usage_version(agent, wallet, intents), now)));
            if intents == 7 && now < departs {
                continue;
            }
            let stored = WalletRecord {
                spend_policy: Some(daily_50.clone()),
                ..WalletRecord::fixture()
            };
            ledger
                .usage
                .expect_usage()
                .times(1)
                .in_sequence(&mut readings)
                .returning(move |_| {
                    Ok(Some(UsageReading {
                        wallet: stored.clone(),
                        held: Held {
                            daily: U256::from(30),
                            ..Held::default()
                        },
                        earliest: EarliestExecutions {
                            daily: Some(executed),
                            ..EarliestExecutions::default()
                        },
                        version: usage_version(agent, wallet, intents),
                    }))
                });
        }
        let service = reading(ledger);
        assert!(matches!(
            service
                .usage_against(&profile, Some((kept, "kept")))
                .await
                .expect("read"),
            Kept::Unchanged("kept")
        ));
        for expected in [8, 7] {
            let Kept::Read { value, version } = service
                .usage_against(&profile, Some((kept, "kept")))
                .await
                .expect("read")
            else {
                panic!("the usage is read again");
            };
            assert_eq!(value.windows[0].remaining, U256::from(20));
            assert_eq!(
                version,
                Some(UsageStamp {
                    version: usage_version(agent, wallet, expected),
                    departs: Some(departs),
                })
            );
        }
    }

    #[tokio::test]
    async fn a_usage_without_a_kept_answer_is_read_and_without_a_wallet_refused() {
        let mut ledger = Ledger::default();
        ledger.usage.expect_usage_version().never();
        ledger.usage.expect_usage().times(1).returning(|agent| {
            Ok(Some(UsageReading {
                wallet: WalletRecord::fixture(),
                held: Held::default(),
                earliest: EarliestExecutions::default(),
                version: usage_version(agent, WalletRecord::fixture().id, 0),
            }))
        });
        let service = reading(ledger);
        let read = service
            .usage_against::<()>(&profile_with(Some(WalletRecord::fixture())), None)
            .await
            .expect("read");
        assert!(
            matches!(
                read,
                Kept::Read {
                    version: Some(UsageStamp { departs: None, .. }),
                    ..
                }
            ),
            "no execution counted: only a change moves it"
        );
        assert!(matches!(
            service.usage_against::<()>(&profile_with(None), None).await,
            Err(WalletError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    #[tokio::test]
    async fn an_intent_is_found_only_among_the_agents_own() {
        let profile = profile_with(Some(WalletRecord::fixture()));
        let own = TransferIntentRecord {
            id: IntentId(Uuid::now_v7()),
            agent_id: profile.agent.id,
            ..TransferIntentRecord::fixture()
        };
        let others = TransferIntentRecord {
            id: IntentId(Uuid::now_v7()),
            agent_id: AgentId(Uuid::now_v7()),
            ..TransferIntentRecord::fixture()
        };
        let mut ledger = Ledger::default();
        let stored = [own.clone(), others.clone()];
        ledger
            .records
            .expect_find()
            .returning(move |id| Ok(stored.iter().find(|intent| intent.id == id).cloned()));
        let service = reading(ledger);
        assert_eq!(
            service
                .intent(&profile, &own.id.to_string())
                .await
                .expect("its own"),
            own
        );
        for id in [
            others.id.to_string(),
            Uuid::now_v7().to_string(),
            "nope".into(),
        ] {
            assert!(
                matches!(
                    service.intent(&profile, &id).await,
                    Err(IntentLookupError::NotFound)
                ),
                "{id}"
            );
        }
        assert!(matches!(
            service
                .intent(&profile_with(None), &own.id.to_string())
                .await,
            Err(IntentLookupError::NotProvisioned(NotProvisioned::Wallet))
        ));
    }

    use domain::x402::PaymentChallenge;

    /// A version 2 challenge for `amount` atomic units of the test token, to `0x22…22`.
    /// A version 2 challenge for `amount` of the service's token, as JSON.
    fn challenge_json(amount: &str) -> String {
        let token = format!("0x{}", "aa".repeat(20));
        let pay_to = format!("0x{}", "22".repeat(20));
        format!(
            r#"{{"x402Version": 2, "resource": {{"url": "https://api.example.com/report"}},
                "accepts": [{{"scheme": "exact", "network": "eip155:8453",
                "amount": "{amount}", "asset": "{token}", "payTo": "{pay_to}",
                "maxTimeoutSeconds": 60, "extra": {{"name": "USDC", "version": "2"}}}}]}}"#
        )
    }

    fn challenge(amount: &str) -> PaymentChallenge {
        PaymentChallenge::from_json(challenge_json(amount).as_bytes()).expect("a challenge")
    }

    /// An agent with the fixture wallet.
    fn payer() -> Principal {
        principal(profile_with(Some(WalletRecord::fixture())))
    }

    fn paying(amount: &str, max_amount: Option<&str>) -> X402Request {
        X402Request {
            challenge: challenge(amount),
            resource_url: None,
            max_amount: max_amount.map(|max| AtomicAmount::parse(max).expect("valid")),
            idempotency_key: IdempotencyKey::parse("pay-1").expect("valid"),
        }
    }

    /// An x402 intent as admission makes it from `new`, in `status`.
    fn payment_from(new: &NewTransferIntent, status: IntentStatus) -> TransferIntentRecord {
        let offer = new.x402.as_ref().expect("an x402 intent carries its offer");
        TransferIntentRecord {
            status,
            kind: domain::IntentKind::X402,
            x402: Some(domain::X402Payment {
                resource: domain::X402Resource {
                    network: offer.network.clone(),
                    resource_url: offer.resource_url.clone(),
                },
                nonce: None,
                valid_before: None,
                payment_response: None,
            }),
            ..intent_from(new)
        }
    }

    /// Admission that admits the payment it is given in `status`.
    fn admitting(status: IntentStatus, replayed: bool) -> MockIntentAdmission {
        let mut admission = MockIntentAdmission::new();
        admission
            .expect_admit()
            .times(1)
            .returning(move |new, _, _, _| {
                let intent = payment_from(&new, status);
                Ok(if replayed {
                    Admission::Replayed(intent)
                } else {
                    Admission::Created(intent)
                })
            });
        admission
    }

    fn x402_service(admission: MockIntentAdmission, mut x402: X402Mocks) -> WalletService {
        let mut chain = std::mem::take(&mut x402.chain);
        // The token signs under the domain the challenges name: USDC, version 2, on Base.
        chain.expect_token_domain_separator().returning(|token| {
            Ok(TokenDomain {
                name: "USDC".into(),
                version: "2".into(),
                chain_id: 8453,
                verifying_contract: *token,
            }
            .separator())
        });
        serving_x402(
            MockAgentStore::new(),
            admission,
            Ledger::default(),
            chain,
            x402,
        )
    }

    #[tokio::test]
    async fn a_payment_is_admitted_as_an_x402_intent_of_the_offer_under_the_policy() {
        let mut admission = MockIntentAdmission::new();
        admission
            .expect_admit()
            .withf(|new, _, _, _| {
                let offer = new.x402.as_ref().expect("the offer");
                new.terms.recipient == EvmAddress::from_bytes([0x22; 20])
                    && new.terms.amount == AtomicAmount::parse("1500").expect("valid")
                    && offer.resource_url.as_deref() == Some("https://api.example.com/report")
                    && new.idempotency_key.as_ref().map(IdempotencyKey::as_str) == Some("pay-1")
            })
            .times(1)
            .returning(|new, _, check, _| {
                let policy = SpendPolicyRecord {
                    rules: SpendRules {
                        limits: SpendLimits {
                            max_per_tx: Some(AtomicAmount::parse("1000").expect("valid")),
                            ..SpendLimits::default()
                        },
                        ..SpendRules::default()
                    },
                    ..SpendPolicyRecord::fixture()
                };
                let context = AdmissionContext {
                    wallet_address: &EvmAddress::from_bytes([0x01; 20]),
                    policy: &policy,
                    held: Held::default(),
                };
                check(&context).map_err(AdmissionError::Refused)?;
                Ok(Admission::Created(payment_from(
                    &new,
                    IntentStatus::Confirmed,
                )))
            });
        let refused = x402_service(admission, X402Mocks::default())
            .authorize_x402(&payer(), paying("1500", None))
            .await;
        assert!(
            matches!(
                refused,
                Err(X402Error::Send(SendError::Policy(
                    PolicyViolation::ExceedsPerTransactionMax { .. }
                )))
            ),
            "the policy judges the payment as it judges a send: {refused:?}"
        );
    }

    #[tokio::test]
    async fn a_payment_above_the_agents_ceiling_is_refused_before_the_policy_is_asked() {
        let mut admission = MockIntentAdmission::new();
        admission.expect_admit().never();
        let refused = x402_service(admission, X402Mocks::default())
            .authorize_x402(&payer(), paying("1500", Some("1499")))
            .await;
        assert!(
            matches!(refused, Err(X402Error::AboveCeiling { .. })),
            "{refused:?}"
        );
    }

    /// Pays an intent approved since it was asked for, whose signing basis knows `known_head`,
    /// the chain mocked as `chain`; the outcome, and the block its use is searched from.
    async fn signed_then_recorded(
        known_head: Option<u64>,
        chain: MockChainClient,
    ) -> (X402Outcome, u64) {
        let mut sequence = mockall::Sequence::new();
        let mut x402 = X402Mocks {
            chain,
            ..X402Mocks::default()
        };
        let searched_from = Arc::new(std::sync::Mutex::new(None));
        let recorded_from = searched_from.clone();
        let wallet = EvmAddress::from_bytes([0x01; 20]);
        x402.payments
            .expect_signing_basis()
            .times(1)
            .in_sequence(&mut sequence)
            .withf(|_, chain_id| *chain_id == 8453)
            .returning(move |_, _| {
                Ok(Some(ports::SigningBasis {
                    wallet_address: wallet,
                    sealed_key: vec![7],
                    known_head,
                }))
            });
        x402.vault
            .expect_sign_transfer_authorization()
            .withf(move |sealed, authorization, domain| {
                sealed == [7]
                    && authorization.from == wallet
                    && authorization.to == EvmAddress::from_bytes([0x22; 20])
                    && authorization.value == AtomicAmount::parse("1500").expect("valid")
                    && authorization.window.valid_before - authorization.window.valid_after
                        == 600 + 60
                    && domain.name == "USDC"
                    && domain.version == "2"
                    && domain.chain_id == 8453
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _, _| Ok([0x11; 65]));
        x402.payments
            .expect_record_authorization()
            .withf(|_, signed| signed.payment.len() > 100 && signed.nonce != [0u8; 32])
            .times(1)
            .in_sequence(&mut sequence)
            .returning(move |id, signed| {
                *recorded_from.lock().expect("unpoisoned") = Some(signed.watch_from_block);
                Ok(RecordedAuthorization {
                    intent: TransferIntentRecord {
                        id,
                        status: IntentStatus::Authorized,
                        ..TransferIntentRecord::fixture()
                    },
                    payment: signed.payment.clone(),
                })
            });
        // Confirmed since it was asked for: an operator approved it.
        let outcome = x402_service(admitting(IntentStatus::Confirmed, true), x402)
            .authorize_x402(&payer(), paying("1500", Some("1500")))
            .await
            .expect("authorized");
        let searched_from = searched_from
            .lock()
            .expect("unpoisoned")
            .expect("an authorization recorded");
        (outcome, searched_from)
    }

    #[tokio::test]
    async fn an_approved_payment_is_signed_then_recorded_then_handed_out() {
        let (outcome, searched_from) = signed_then_recorded(Some(77), MockChainClient::new()).await;
        assert_eq!(
            searched_from, 77,
            "its use is searched from the head the watch saw, no chain call"
        );
        let X402Outcome::Authorized {
            authorization,
            header,
        } = outcome
        else {
            panic!("not authorized: {outcome:?}");
        };
        assert_eq!(header, "PAYMENT-SIGNATURE");
        assert_eq!(authorization.intent.status, IntentStatus::Authorized);
    }

    /// Admission that confirms the payment by its policy and signs it with the signer it is
    /// given, as the store does under the wallet's lock: `authorized` when the signer signs.
    fn confirming_and_signing(basis: ports::SigningBasis) -> MockIntentAdmission {
        let mut admission = MockIntentAdmission::new();
        admission
            .expect_admit()
            .times(1)
            .returning(move |new, _, _, signer| {
                let signer = signer.expect("a payment comes with its signer");
                assert_eq!(signer.chain_id(), 8453);
                let signed = tokio::task::block_in_place(|| {
                    tokio::runtime::Handle::current().block_on(signer.sign(basis.clone()))
                })?;
                assert_eq!(signed.watch_from_block, 31);
                let mut intent = payment_from(&new, IntentStatus::Authorized);
                if let Some(payment) = intent.x402.as_mut() {
                    payment.nonce = Some(signed.nonce);
                }
                Ok(Admission::Created(intent))
            });
        admission
    }

    fn basis() -> ports::SigningBasis {
        ports::SigningBasis {
            wallet_address: EvmAddress::from_bytes([0x01; 20]),
            sealed_key: vec![7],
            known_head: Some(31),
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_payment_the_policy_confirms_is_signed_within_its_admission_and_recorded_there() {
        let mut x402 = X402Mocks::default();
        x402.payments.expect_signing_basis().never();
        x402.payments.expect_record_authorization().never();
        x402.vault
            .expect_sign_transfer_authorization()
            .times(1)
            .returning(|_, _, _| Ok([0x11; 65]));
        let outcome = x402_service(confirming_and_signing(basis()), x402)
            .authorize_x402(&payer(), paying("1500", None))
            .await
            .expect("authorized");
        let X402Outcome::Authorized { authorization, .. } = outcome else {
            panic!("not authorized: {outcome:?}");
        };
        assert_eq!(authorization.intent.status, IntentStatus::Authorized);
        assert!(
            authorization.payment.len() > 100,
            "the header signed under the admission: {}",
            authorization.payment
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_payment_its_wallet_cannot_sign_is_not_admitted_and_says_why() {
        let mut x402 = X402Mocks::default();
        x402.vault
            .expect_sign_transfer_authorization()
            .times(1)
            .returning(|_, _, _| Err(ProviderError::Refused("the key does not open".into())));
        let refused = x402_service(confirming_and_signing(basis()), x402)
            .authorize_x402(&payer(), paying("1500", None))
            .await;
        assert!(
            matches!(&refused, Err(X402Error::Signing(ProviderError::Refused(why))) if why == "the key does not open"),
            "{refused:?}"
        );
    }

    /// A chain whose token signs under the domain named `name`, version 2.
    fn token_signing_as(name: &'static str) -> MockChainClient {
        let mut chain = MockChainClient::new();
        chain
            .expect_token_domain_separator()
            .times(1)
            .returning(move |token| {
                Ok(TokenDomain {
                    name: name.into(),
                    version: "2".into(),
                    chain_id: 8453,
                    verifying_contract: *token,
                }
                .separator())
            });
        chain
    }

    #[tokio::test]
    async fn an_offer_naming_a_domain_the_token_does_not_sign_under_is_refused_before_admission() {
        let service = serving_x402(
            MockAgentStore::new(),
            MockIntentAdmission::new(),
            Ledger::default(),
            token_signing_as("USD Coin"),
            X402Mocks::default(),
        );
        let refused = service.authorize_x402(&payer(), paying("1500", None)).await;
        assert!(
            matches!(&refused, Err(X402Error::TokenDomain { name, .. }) if name == "USDC"),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn a_challenge_is_checked_as_a_payment_under_the_policy_with_nothing_admitted() {
        let no_payments = SpendPolicyRecord {
            rules: domain::SpendRules {
                x402_enabled: false,
                ..domain::SpendRules::default()
            },
            ..SpendPolicyRecord::fixture()
        };
        let stored = WalletRecord {
            spend_policy: Some(no_payments),
            ..WalletRecord::fixture()
        };
        let mut ledger = Ledger::default();
        ledger
            .usage
            .expect_wallet_and_held()
            .withf(|_, recipient| *recipient == Some(EvmAddress::from_bytes([0x22; 20])))
            .times(1)
            .returning(move |_, _| Ok(Some((stored.clone(), Held::default()))));
        let service = serving_x402(
            MockAgentStore::new(),
            MockIntentAdmission::new(),
            ledger,
            token_signing_as("USDC"),
            X402Mocks::default(),
        );
        let checked = service
            .check_x402(
                &payer().profile,
                X402Check {
                    challenge: challenge("1500"),
                    max_amount: None,
                },
            )
            .await
            .expect("judged");
        assert_eq!(checked.verdict, Err(PolicyViolation::X402Disabled));
    }

    fn fetching(max_amount: &str) -> X402Fetch {
        X402Fetch {
            url: domain::WebhookUrl::parse("https://api.example.com/report", Targets::PublicOnly)
                .expect("a URL"),
            method: domain::x402::FetchMethod::Get,
            headers: vec![("accept".into(), "application/json".into())],
            body: None,
            max_amount: AtomicAmount::parse(max_amount).expect("valid"),
            idempotency_key: IdempotencyKey::parse("fetch-1").expect("valid"),
        }
    }

    fn answer(status: u16, headers: &[(&str, String)], body: &str) -> ports::ResourceResponse {
        ports::ResourceResponse {
            status,
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.clone()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[tokio::test]
    async fn a_402_is_paid_then_asked_again_with_the_payment_header_and_its_settlement_kept() {
        use base64::Engine as _;
        let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let mut x402 = X402Mocks::default();
        let wallet = EvmAddress::from_bytes([0x01; 20]);
        x402.payments.expect_signing_basis().returning(move |_, _| {
            Ok(Some(ports::SigningBasis {
                wallet_address: wallet,
                sealed_key: vec![7],
                known_head: Some(5),
            }))
        });
        x402.vault
            .expect_sign_transfer_authorization()
            .returning(|_, _, _| Ok([0x11; 65]));
        x402.payments
            .expect_record_authorization()
            .times(1)
            .returning(|id, signed| {
                Ok(RecordedAuthorization {
                    intent: TransferIntentRecord {
                        id,
                        status: IntentStatus::Authorized,
                        ..TransferIntentRecord::fixture()
                    },
                    payment: signed.payment.clone(),
                })
            });
        let mut sequence = mockall::Sequence::new();
        let required = encode(&challenge_json("1500"));
        x402.fetcher
            .expect_fetch()
            .withf(|request| {
                request.url == "https://api.example.com/report"
                    && !request
                        .headers
                        .iter()
                        .any(|(name, _)| name == "payment-signature")
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(move |_| Ok(answer(402, &[("payment-required", required.clone())], "{}")));
        let settled = encode(&format!(
            r#"{{"success": true, "transaction": "0x{}", "network": "eip155:8453"}}"#,
            "ab".repeat(32)
        ));
        x402.fetcher
            .expect_fetch()
            .withf(|request| {
                request
                    .headers
                    .contains(&("accept".into(), "application/json".into()))
                    && request
                        .headers
                        .iter()
                        .any(|(name, value)| name == "payment-signature" && value.len() > 100)
            })
            .times(1)
            .in_sequence(&mut sequence)
            .returning(move |_| {
                Ok(answer(
                    200,
                    &[("payment-response", settled.clone())],
                    "the report",
                ))
            });
        x402.payments
            .expect_record_payment_response()
            .withf(|_, settlement| settlement.success)
            .times(1)
            .returning(|id, _| {
                Ok(TransferIntentRecord {
                    id,
                    status: IntentStatus::Authorized,
                    ..TransferIntentRecord::fixture()
                })
            });
        let outcome = x402_service(admitting(IntentStatus::Confirmed, false), x402)
            .fetch_x402(&payer(), fetching("2000"))
            .await
            .expect("fetched");
        let FetchOutcome::Paid {
            response,
            settlement,
            ..
        } = outcome
        else {
            panic!("not paid: {outcome:?}");
        };
        assert_eq!(response.body, b"the report");
        assert!(settlement.is_some_and(|settlement| settlement.success));
    }

    #[tokio::test]
    async fn a_resource_that_asks_no_payment_is_answered_free_and_nothing_is_admitted() {
        let mut x402 = X402Mocks::default();
        x402.fetcher
            .expect_fetch()
            .times(1)
            .returning(|_| Ok(answer(200, &[], "open data")));
        let outcome = x402_service(MockIntentAdmission::new(), x402)
            .fetch_x402(&payer(), fetching("2000"))
            .await
            .expect("fetched");
        assert!(
            matches!(&outcome, FetchOutcome::Free(response) if response.body == b"open data"),
            "{outcome:?}"
        );
    }

    #[tokio::test]
    async fn a_private_target_is_refused_before_any_request_where_only_public_ones_are_allowed() {
        let mut x402 = X402Mocks::default();
        x402.fetcher.expect_fetch().never();
        let mut private = fetching("2000");
        private.url = domain::WebhookUrl::parse("http://10.0.0.7/report", Targets::PrivateAllowed)
            .expect("well formed");
        let refused = x402_service(MockIntentAdmission::new(), x402)
            .fetch_x402(&payer(), private)
            .await;
        assert!(
            matches!(refused, Err(FetchFailure::TargetRefused(_))),
            "{refused:?}"
        );
    }

    /// A service reading `ledger` whose receipts `signer` signs.
    fn signing_receipts(ledger: Ledger, signer: ports::MockReceiptSigner) -> WalletService {
        let mut service = serving(
            MockAgentStore::new(),
            MockIntentAdmission::new(),
            ledger,
            MockChainClient::new(),
        );
        service.receipts = Arc::new(signer);
        service
    }

    #[tokio::test]
    async fn an_executed_intents_receipt_is_signed_over_its_canonical_json_and_others_have_none() {
        let profile = payer().profile;
        let agent_id = profile.agent.id;
        let executed = TransferIntentRecord {
            agent_id,
            status: IntentStatus::Executed,
            tx_hash: Some(format!("0x{}", "ab".repeat(32))),
            confirmed_at: Some(TransferIntentRecord::fixture().created_at),
            block_number: Some(9),
            ..TransferIntentRecord::fixture()
        };
        let pending = TransferIntentRecord {
            agent_id,
            ..TransferIntentRecord::fixture()
        };
        let mut ledger = Ledger::default();
        let (executed_id, found) = (executed.id, executed.clone());
        ledger.records.expect_find().returning(move |id| {
            Ok(Some(if id == executed_id {
                found.clone()
            } else {
                pending.clone()
            }))
        });
        let mut signer = ports::MockReceiptSigner::new();
        signer
            .expect_current_key_id()
            .returning(|| "rk_0000000000000000".into());
        let expected = domain::receipts::Receipt::of(
            &executed,
            &WalletRecord::fixture().address,
            8453,
            "rk_0000000000000000",
        )
        .expect("a receipt")
        .canonical_json()
        .expect("canonical");
        signer
            .expect_sign()
            .withf(move |message| message == expected.as_slice())
            .times(1)
            .returning(|_| [9; 64]);
        let service = signing_receipts(ledger, signer);
        let signed = service
            .receipt(&profile, &executed.id.to_string())
            .await
            .expect("a receipt");
        assert_eq!(signed.signature, [9; 64]);
        assert_eq!(signed.receipt.block_number, Some(9));
        let other = IntentId(Uuid::from_u128(77)).to_string();
        assert!(matches!(
            service.receipt(&profile, &other).await,
            Err(ReceiptError::NotExecuted(_))
        ));
    }

    #[tokio::test]
    async fn an_export_signs_the_agents_executions_within_the_range_in_their_order() {
        let profile = payer().profile;
        let agent_id = profile.agent.id;
        let range = ExportRange::parse("2026-11-01", "2026-11-30").expect("a range");
        let executed = |n: u128| TransferIntentRecord {
            id: IntentId(Uuid::from_u128(n)),
            agent_id,
            status: IntentStatus::Executed,
            tx_hash: Some(format!("0x{n:064x}")),
            confirmed_at: Some(range.from),
            ..TransferIntentRecord::fixture()
        };
        let listed = vec![executed(1), executed(2)];
        let mut ledger = Ledger::default();
        ledger
            .records
            .expect_list()
            .withf(move |filter| {
                *filter
                    == IntentFilter {
                        agent: Some(agent_id),
                        status: Some(IntentStatus::Executed),
                        executed_from: Some(range.from),
                        executed_before: Some(range.to),
                        oldest_first: true,
                        limit: Some(MAX_EXPORT_ROWS + 1),
                        ..IntentFilter::default()
                    }
            })
            .times(1)
            .returning(move |_| Ok(listed.clone()));
        let mut signer = ports::MockReceiptSigner::new();
        signer
            .expect_current_key_id()
            .returning(|| "rk_0000000000000000".into());
        signer.expect_sign().times(2).returning(|message| {
            let mut signature = [0; 64];
            signature[0] = u8::try_from(message.len() % 256).expect("a byte");
            signature
        });
        let service = signing_receipts(ledger, signer);
        let exported = service
            .export_receipts(&profile, range)
            .await
            .expect("exported");
        let ids: Vec<&str> = exported
            .iter()
            .map(|signed| signed.receipt.intent_id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                IntentId(Uuid::from_u128(1)).to_string(),
                IntentId(Uuid::from_u128(2)).to_string()
            ]
        );
        assert_eq!(exported[0].receipt.tx_hash, format!("0x{:064x}", 1));
    }

    #[tokio::test]
    async fn an_export_over_the_row_bound_is_refused_rather_than_cut_short() {
        let profile = payer().profile;
        let many = vec![
            TransferIntentRecord {
                status: IntentStatus::Executed,
                ..TransferIntentRecord::fixture()
            };
            MAX_EXPORT_ROWS + 1
        ];
        let mut ledger = Ledger::default();
        ledger
            .records
            .expect_list()
            .times(1)
            .returning(move |_| Ok(many.clone()));
        let mut signer = ports::MockReceiptSigner::new();
        signer.expect_sign().never();
        let service = signing_receipts(ledger, signer);
        let range = ExportRange::parse("2026-01-01", "2026-12-31").expect("a range");
        assert!(matches!(
            service.export_receipts(&profile, range).await,
            Err(ReceiptError::TooMany)
        ));
    }

    #[tokio::test]
    async fn a_payment_signed_before_the_watch_saw_a_block_is_searched_from_the_chains_head() {
        let mut chain = MockChainClient::new();
        chain
            .expect_block_head()
            .with(mockall::predicate::eq(None))
            .times(1)
            .returning(|_| {
                Ok(domain::x402::BlockHead {
                    number: 12,
                    timestamp: 1_000,
                })
            });
        let (outcome, searched_from) = signed_then_recorded(None, chain).await;
        assert!(
            matches!(outcome, X402Outcome::Authorized { .. }),
            "{outcome:?}"
        );
        assert_eq!(searched_from, 12);
    }

    #[tokio::test]
    async fn a_payment_waiting_for_operators_signs_nothing() {
        let mut x402 = X402Mocks::default();
        x402.vault.expect_sign_transfer_authorization().never();
        x402.payments.expect_record_authorization().never();
        let outcome = x402_service(admitting(IntentStatus::PendingConfirmation, false), x402)
            .authorize_x402(&payer(), paying("1500", None))
            .await
            .expect("admitted");
        assert!(
            matches!(&outcome, X402Outcome::Pending(intent) if intent.status == IntentStatus::PendingConfirmation),
            "{outcome:?}"
        );
    }

    #[tokio::test]
    async fn a_retry_of_an_authorized_payment_is_answered_its_recorded_authorization() {
        let mut x402 = X402Mocks::default();
        x402.vault.expect_sign_transfer_authorization().never();
        x402.payments
            .expect_recorded_authorization()
            .times(1)
            .returning(|id| {
                Ok(Some(RecordedAuthorization {
                    intent: TransferIntentRecord {
                        id,
                        status: IntentStatus::Authorized,
                        ..TransferIntentRecord::fixture()
                    },
                    payment: "the recorded header".into(),
                }))
            });
        let outcome = x402_service(admitting(IntentStatus::Authorized, true), x402)
            .authorize_x402(&payer(), paying("1500", None))
            .await
            .expect("answered");
        assert!(
            matches!(&outcome, X402Outcome::Authorized { authorization, .. } if authorization.payment == "the recorded header"),
            "{outcome:?}"
        );
    }

    #[tokio::test]
    async fn a_rejected_or_expired_payment_under_the_key_signs_nothing_more() {
        for status in [IntentStatus::Rejected, IntentStatus::Expired] {
            let mut x402 = X402Mocks::default();
            x402.vault.expect_sign_transfer_authorization().never();
            let ended = x402_service(admitting(status, true), x402)
                .authorize_x402(&payer(), paying("1500", None))
                .await;
            assert!(
                matches!(ended, Err(X402Error::Ended { status: ended, .. }) if ended == status),
                "{status}: {ended:?}"
            );
        }
    }
}
