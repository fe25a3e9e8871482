//! `ChainClient` and `ChainWriter` on an EVM node's JSON-RPC, through alloy. Every call has a
//! deadline: a node that does not answer is unavailable, never waited on forever.

use std::future::{Future, IntoFuture};
use std::ops::RangeInclusive;
use std::time::Duration;

use alloy_primitives::{Address, Bytes, TxHash};
use alloy_provider::{Provider, RootProvider};
use alloy_rpc_types_eth::{BlockId, BlockNumberOrTag, Filter, TransactionRequest};
use alloy_sol_types::{sol, SolCall, SolEvent};
use async_trait::async_trait;
use domain::x402::{BlockHead, UsedAuthorization};
use domain::{EvmAddress, FeeQuote, U256};
use ports::{BroadcastError, ChainClient, ChainError, ChainWriter, ReceiptStatus, SignedTransfer};

sol! {
    function balanceOf(address owner) returns (uint256);
    function decimals() returns (uint8);
    function DOMAIN_SEPARATOR() returns (bytes32);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
}

pub struct RpcChain {
    provider: RootProvider,
    timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
#[error("EVM_RPC_URL is not a valid URL: {0}")]
pub struct InvalidRpcUrl(String);

/// How a failed call is to be read: the node answered with an error, or it could not be reached.
enum Failure {
    Refused(String),
    Unreachable(String),
}

fn classify(error: alloy_provider::transport::TransportError) -> Failure {
    match error {
        alloy_provider::transport::RpcError::ErrorResp(payload) => {
            Failure::Refused(payload.message.to_string())
        }
        other => Failure::Unreachable(other.to_string()),
    }
}

impl From<Failure> for ChainError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Refused(message) => ChainError::Unexpected(message),
            Failure::Unreachable(message) => ChainError::Unavailable(message),
        }
    }
}

fn address(evm: &EvmAddress) -> Address {
    Address::from(*evm.as_bytes())
}

impl RpcChain {
    pub fn connect(url: &str, timeout: Duration) -> Result<Self, InvalidRpcUrl> {
        let url = url::Url::parse(url).map_err(|error| InvalidRpcUrl(error.to_string()))?;
        Ok(Self {
            provider: RootProvider::new_http(url),
            timeout,
        })
    }

    async fn within<T>(
        &self,
        call: impl Future<Output = Result<T, alloy_provider::transport::TransportError>>,
    ) -> Result<T, Failure> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(result) => result.map_err(classify),
            Err(_) => Err(Failure::Unreachable(format!(
                "no answer within {:?}",
                self.timeout
            ))),
        }
    }

    /// How many transactions `sender` has sent as of `block` (pending or latest).
    async fn transaction_count(
        &self,
        sender: &EvmAddress,
        block: BlockId,
    ) -> Result<u64, ChainError> {
        Ok(self
            .within(
                self.provider
                    .get_transaction_count(address(sender))
                    .block_id(block)
                    .into_future(),
            )
            .await?)
    }

    async fn call(&self, token: &EvmAddress, input: Vec<u8>) -> Result<Bytes, ChainError> {
        let request = TransactionRequest::default()
            .to(address(token))
            .input(input.into());
        Ok(self
            .within(self.provider.call(request).into_future())
            .await?)
    }
}

#[async_trait]
impl ChainClient for RpcChain {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn native_balance(&self, owner: &EvmAddress) -> Result<U256, ChainError> {
        Ok(self
            .within(self.provider.get_balance(address(owner)).into_future())
            .await?)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn token_balance(
        &self,
        token: &EvmAddress,
        owner: &EvmAddress,
    ) -> Result<U256, ChainError> {
        let output = self
            .call(
                token,
                balanceOfCall {
                    owner: address(owner),
                }
                .abi_encode(),
            )
            .await?;
        balanceOfCall::abi_decode_returns(&output)
            .map_err(|error| ChainError::Unexpected(format!("balanceOf: {error}")))
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn token_decimals(&self, token: &EvmAddress) -> Result<u8, ChainError> {
        let output = self.call(token, decimalsCall {}.abi_encode()).await?;
        decimalsCall::abi_decode_returns(&output)
            .map_err(|error| ChainError::Unexpected(format!("decimals: {error}")))
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn token_domain_separator(&self, token: &EvmAddress) -> Result<[u8; 32], ChainError> {
        let output = self
            .call(token, DOMAIN_SEPARATORCall {}.abi_encode())
            .await?;
        DOMAIN_SEPARATORCall::abi_decode_returns(&output)
            .map(|separator| separator.0)
            .map_err(|error| ChainError::Unexpected(format!("DOMAIN_SEPARATOR: {error}")))
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn block_head(&self, number: Option<u64>) -> Result<BlockHead, ChainError> {
        let tag = number.map_or(BlockNumberOrTag::Latest, BlockNumberOrTag::Number);
        let block = self
            .within(self.provider.get_block_by_number(tag).into_future())
            .await?
            .ok_or_else(|| ChainError::Unexpected(format!("no block {tag}")))?;
        Ok(BlockHead {
            number: block.header.number,
            timestamp: block.header.timestamp,
        })
    }

    #[tracing::instrument(level = "debug", skip(self, authorizers), fields(authorizers = authorizers.len()))]
    async fn authorizations_used(
        &self,
        token: &EvmAddress,
        authorizers: &[EvmAddress],
        blocks: RangeInclusive<u64>,
    ) -> Result<Vec<UsedAuthorization>, ChainError> {
        let filter = Filter::new()
            .address(address(token))
            .event_signature(AuthorizationUsed::SIGNATURE_HASH)
            .topic1(
                authorizers
                    .iter()
                    .map(|authorizer| address(authorizer).into_word())
                    .collect::<Vec<_>>(),
            )
            .from_block(*blocks.start())
            .to_block(*blocks.end());
        let logs = self
            .within(self.provider.get_logs(&filter).into_future())
            .await?;
        logs.into_iter()
            // A log of a block the chain reorganised away moved nothing.
            .filter(|log| !log.removed)
            .map(|log| {
                let (Some(tx_hash), Some(block_number)) = (log.transaction_hash, log.block_number)
                else {
                    return Err(ChainError::Unexpected(
                        "an AuthorizationUsed log without its transaction".into(),
                    ));
                };
                let used = AuthorizationUsed::decode_log(&log.inner).map_err(|error| {
                    ChainError::Unexpected(format!("an AuthorizationUsed log: {error}"))
                })?;
                Ok(UsedAuthorization {
                    authorizer: EvmAddress::from_bytes(used.authorizer.into_array()),
                    nonce: used.nonce.0,
                    tx_hash: tx_hash.to_string(),
                    block_number,
                })
            })
            .collect()
    }
}

#[async_trait]
impl ChainWriter for RpcChain {
    #[tracing::instrument(level = "debug", skip(self))]
    async fn chain_id(&self) -> Result<u64, ChainError> {
        Ok(self
            .within(self.provider.get_chain_id().into_future())
            .await?)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn pending_nonce(&self, sender: &EvmAddress) -> Result<u64, ChainError> {
        self.transaction_count(sender, BlockId::pending()).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn mined_nonce(&self, sender: &EvmAddress) -> Result<u64, ChainError> {
        self.transaction_count(sender, BlockId::latest()).await
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn fee_quote(&self) -> Result<FeeQuote, ChainError> {
        let estimate = self.within(self.provider.estimate_eip1559_fees()).await?;
        Ok(FeeQuote {
            max_fee_per_gas: estimate.max_fee_per_gas,
            max_priority_fee_per_gas: estimate.max_priority_fee_per_gas,
        })
    }

    #[tracing::instrument(level = "debug", skip_all, fields(tx_hash = %transfer.hash, nonce = transfer.nonce))]
    async fn broadcast(&self, transfer: &SignedTransfer) -> Result<(), BroadcastError> {
        match self
            .within(self.provider.send_raw_transaction(&transfer.raw))
            .await
        {
            Ok(_) => Ok(()),
            // The node has these very bytes already: sending them again changed nothing.
            Err(Failure::Refused(message)) if message.to_ascii_lowercase().contains("already") => {
                Ok(())
            }
            Err(Failure::Refused(message)) => Err(BroadcastError::Rejected(message)),
            Err(Failure::Unreachable(message)) => Err(BroadcastError::Unavailable(message)),
        }
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn receipt(&self, tx_hash: &str) -> Result<ReceiptStatus, ChainError> {
        let hash: TxHash = tx_hash.parse().map_err(|error| {
            ChainError::Unexpected(format!("transaction hash {tx_hash}: {error}"))
        })?;
        let receipt = self
            .within(self.provider.get_transaction_receipt(hash).into_future())
            .await?;
        Ok(match receipt {
            None => ReceiptStatus::Pending,
            Some(receipt) if receipt.status() => ReceiptStatus::Succeeded {
                block_number: receipt.block_number.ok_or_else(|| {
                    ChainError::Unexpected(format!("receipt of {tx_hash} without its block"))
                })?,
            },
            Some(_) => ReceiptStatus::Reverted,
        })
    }
}
