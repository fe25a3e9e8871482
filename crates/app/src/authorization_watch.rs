//! The settlement watch of x402 payments: an authorization handed out is settled by the payee,
//! not by this service, so the token's `AuthorizationUsed` logs are searched, with one query per
//! token for every authorization watched, until each is used (`executed`, with the settling
//! transaction) or a block reaches its `validBefore` unused (`expired`, its amount released).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use domain::x402::{search_range, settlement_seen, SettlementSeen, WatchedAuthorization};
use domain::{EvmAddress, IntentId, TransferIntentRecord};
use ports::{
    AuthorizationSettled, AuthorizationWatch, ChainClient, ChainError, ChainWriter, StoreError,
    TransitionError,
};

use crate::chain_id::KnownChainId;

/// How the watch searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchSettings {
    /// Authorizations searched in one round.
    pub batch: usize,
    /// Blocks one log query covers at most: nodes refuse wide ranges.
    pub max_blocks: u64,
    /// How long a round holds its authorizations from other instances' watches.
    pub hold_for: Duration,
}

impl Default for WatchSettings {
    fn default() -> Self {
        Self {
            batch: 200,
            max_blocks: 2_000,
            hold_for: Duration::from_secs(60),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(transparent)]
    Chain(#[from] ChainError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What one round settled.
#[derive(Debug, Default)]
pub struct WatchRound {
    pub executed: Vec<TransferIntentRecord>,
    pub expired: Vec<TransferIntentRecord>,
}

pub struct AuthorizationWatcher {
    store: Arc<dyn AuthorizationWatch>,
    chain: Arc<dyn ChainClient>,
    writer: Arc<dyn ChainWriter>,
    chain_id: KnownChainId,
    settings: WatchSettings,
}

impl AuthorizationWatcher {
    pub fn new(
        store: Arc<dyn AuthorizationWatch>,
        chain: Arc<dyn ChainClient>,
        writer: Arc<dyn ChainWriter>,
        settings: WatchSettings,
    ) -> Self {
        Self {
            store,
            chain,
            writer,
            chain_id: KnownChainId::default(),
            settings,
        }
    }

    /// Notes the chain's head, then searches the blocks not yet searched for a batch of
    /// authorizations and settles each one found used or expired.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn watch(&self) -> Result<WatchRound, WatchError> {
        let chain_id = self.chain_id.of(self.writer.as_ref()).await?;
        let head = self.chain.block_head(None).await?;
        self.store.record_head(chain_id, head).await?;
        let watched = self
            .store
            .watched_authorizations(self.settings.batch, self.settings.hold_for)
            .await?;
        let Some(range) = search_range(&watched, head.number, self.settings.max_blocks) else {
            self.put_back(&watched, None).await?;
            return Ok(WatchRound::default());
        };
        let through = *range.end();
        let searched = match self.search(&watched, range, head).await {
            Ok(searched) => searched,
            Err(error) => {
                self.put_back(&watched, None).await?;
                return Err(error);
            }
        };
        let mut round = WatchRound::default();
        let mut unsettled = Vec::new();
        for (authorization, seen) in searched {
            let settled = match seen {
                SettlementSeen::Unseen => {
                    unsettled.push(authorization.intent);
                    continue;
                }
                SettlementSeen::Used {
                    tx_hash,
                    block_number,
                } => AuthorizationSettled::Used {
                    tx_hash,
                    block_number,
                },
                SettlementSeen::Expired => AuthorizationSettled::Expired,
            };
            match self
                .store
                .settle_authorization(authorization.intent, settled)
                .await
            {
                Ok(intent) if intent.tx_hash.is_some() => round.executed.push(intent),
                Ok(intent) => round.expired.push(intent),
                // Another instance's watch, or an operator, ended it first.
                Err(TransitionError::Refused(refused)) => {
                    tracing::debug!(intent = %authorization.intent, %refused, "already settled");
                }
                Err(TransitionError::NotFound(_) | TransitionError::Judged(_)) => {}
                Err(TransitionError::Store(error)) => {
                    unsettled.push(authorization.intent);
                    self.store.put_back(&unsettled, None).await?;
                    return Err(error.into());
                }
            }
        }
        let unsearched = watched
            .iter()
            .filter(|authorization| authorization.from_block > through)
            .map(|authorization| authorization.intent);
        unsettled.extend(unsearched);
        if !unsettled.is_empty() {
            self.store.put_back(&unsettled, Some(through)).await?;
        }
        Ok(round)
    }

    /// What the blocks of `range` tell of each authorization they cover: one log query per token
    /// for all their signers, and the time of the range's last block.
    async fn search(
        &self,
        watched: &[WatchedAuthorization],
        range: std::ops::RangeInclusive<u64>,
        head: domain::x402::BlockHead,
    ) -> Result<Vec<(WatchedAuthorization, SettlementSeen)>, WatchError> {
        let through = *range.end();
        let through_time = match through == head.number {
            true => head.timestamp,
            false => self.chain.block_head(Some(through)).await?.timestamp,
        };
        let mut by_token: HashMap<EvmAddress, Vec<&WatchedAuthorization>> = HashMap::new();
        for authorization in watched
            .iter()
            .filter(|watched| watched.from_block <= through)
        {
            by_token
                .entry(authorization.token)
                .or_default()
                .push(authorization);
        }
        let mut searched = Vec::new();
        for (token, authorizations) in by_token {
            let mut authorizers: Vec<EvmAddress> = Vec::new();
            for authorization in &authorizations {
                if !authorizers.contains(&authorization.authorizer) {
                    authorizers.push(authorization.authorizer);
                }
            }
            let from = authorizations
                .iter()
                .map(|authorization| authorization.from_block)
                .min()
                .unwrap_or(*range.start());
            let used = self
                .chain
                .authorizations_used(&token, &authorizers, from..=through)
                .await?;
            searched.extend(authorizations.into_iter().map(|authorization| {
                let seen = settlement_seen(authorization, &used, through_time);
                (authorization.clone(), seen)
            }));
        }
        Ok(searched)
    }

    async fn put_back(
        &self,
        watched: &[WatchedAuthorization],
        searched_through: Option<u64>,
    ) -> Result<(), StoreError> {
        if watched.is_empty() {
            return Ok(());
        }
        let ids: Vec<IntentId> = watched
            .iter()
            .map(|authorization| authorization.intent)
            .collect();
        self.store.put_back(&ids, searched_through).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::x402::{BlockHead, UsedAuthorization};
    use domain::{IntentStatus, TransitionRefused};
    use mockall::predicate::{always, eq};
    use ports::{MockAuthorizationWatch, MockChainClient, MockChainWriter};

    const TOKEN: &str = "0x3333333333333333333333333333333333333333";
    const PAYER: &str = "0x1111111111111111111111111111111111111111";
    const OTHER_PAYER: &str = "0x2222222222222222222222222222222222222222";
    const CHAIN_ID: u64 = 31_337;
    const HEAD: BlockHead = BlockHead {
        number: 500,
        timestamp: 10_000,
    };

    fn address(text: &str) -> EvmAddress {
        EvmAddress::parse(text).expect("an address")
    }

    fn watched(n: u128, payer: &str, from_block: u64, valid_before: u64) -> WatchedAuthorization {
        WatchedAuthorization {
            intent: IntentId(uuid::Uuid::from_u128(n)),
            token: address(TOKEN),
            authorizer: address(payer),
            nonce: [u8::try_from(n).expect("a small n"); 32],
            valid_before,
            from_block,
        }
    }

    fn tx_hash(n: u8) -> String {
        format!("0x{}", format!("{n:02x}").repeat(32))
    }

    fn used(authorization: &WatchedAuthorization, block_number: u64) -> UsedAuthorization {
        UsedAuthorization {
            authorizer: authorization.authorizer,
            nonce: authorization.nonce,
            tx_hash: tx_hash(authorization.nonce[0]),
            block_number,
        }
    }

    fn ended(id: IntentId, settled: &AuthorizationSettled) -> TransferIntentRecord {
        let (status, tx_hash) = match settled {
            AuthorizationSettled::Used { tx_hash, .. } => {
                (IntentStatus::Executed, Some(tx_hash.clone()))
            }
            AuthorizationSettled::Expired => (IntentStatus::Expired, None),
        };
        TransferIntentRecord {
            id,
            status,
            tx_hash,
            ..TransferIntentRecord::fixture()
        }
    }

    /// A chain at `HEAD` whose id is `CHAIN_ID`, and a store that records that head.
    fn at_head() -> (MockChainClient, MockChainWriter, MockAuthorizationWatch) {
        let mut chain = MockChainClient::new();
        chain
            .expect_block_head()
            .with(eq(None))
            .times(1)
            .returning(|_| Ok(HEAD));
        let mut writer = MockChainWriter::new();
        writer.expect_chain_id().returning(|| Ok(CHAIN_ID));
        let mut store = MockAuthorizationWatch::new();
        store
            .expect_record_head()
            .with(eq(CHAIN_ID), eq(HEAD))
            .times(1)
            .returning(|_, _| Ok(()));
        (chain, writer, store)
    }

    fn watcher(
        chain: MockChainClient,
        writer: MockChainWriter,
        store: MockAuthorizationWatch,
        settings: WatchSettings,
    ) -> AuthorizationWatcher {
        AuthorizationWatcher::new(Arc::new(store), Arc::new(chain), Arc::new(writer), settings)
    }

    #[tokio::test]
    async fn one_log_query_per_token_settles_the_used_expires_the_lapsed_and_keeps_the_rest() {
        let paid = watched(1, PAYER, 400, 20_000);
        let lapsed = watched(2, PAYER, 450, 9_000);
        let waiting = watched(3, OTHER_PAYER, 420, 20_000);
        let (mut chain, writer, mut store) = at_head();
        let batch = vec![paid.clone(), lapsed.clone(), waiting.clone()];
        store
            .expect_watched_authorizations()
            .with(eq(WatchSettings::default().batch), always())
            .times(1)
            .returning(move |_, _| Ok(batch.clone()));
        let log = used(&paid, 480);
        chain
            .expect_authorizations_used()
            .withf(|token, authorizers, blocks| {
                *token == address(TOKEN)
                    && authorizers == [address(PAYER), address(OTHER_PAYER)]
                    && *blocks == (400..=500)
            })
            .times(1)
            .returning(move |_, _, _| Ok(vec![log.clone()]));
        store
            .expect_settle_authorization()
            .with(
                eq(paid.intent),
                eq(AuthorizationSettled::Used {
                    tx_hash: tx_hash(1),
                    block_number: 480,
                }),
            )
            .times(1)
            .returning(|id, settled| Ok(ended(id, &settled)));
        store
            .expect_settle_authorization()
            .with(eq(lapsed.intent), eq(AuthorizationSettled::Expired))
            .times(1)
            .returning(|id, settled| Ok(ended(id, &settled)));
        store
            .expect_put_back()
            .withf(move |intents, through| intents == [waiting.intent] && *through == Some(500))
            .times(1)
            .returning(|_, _| Ok(()));

        let round = watcher(chain, writer, store, WatchSettings::default())
            .watch()
            .await
            .expect("a round");
        assert_eq!(round.executed.len(), 1);
        assert_eq!(round.executed[0].tx_hash, Some(tx_hash(1)));
        assert_eq!(round.expired.len(), 1);
        assert_eq!(round.expired[0].id, lapsed.intent);
    }

    #[tokio::test]
    async fn a_capped_search_judges_expiry_by_its_last_block_and_leaves_later_ones_unsearched() {
        let behind = watched(1, PAYER, 100, 5_000);
        let ahead = watched(2, PAYER, 300, 5_000);
        let (mut chain, writer, mut store) = at_head();
        let batch = vec![behind.clone(), ahead.clone()];
        store
            .expect_watched_authorizations()
            .returning(move |_, _| Ok(batch.clone()));
        chain
            .expect_block_head()
            .with(eq(Some(149)))
            .times(1)
            .returning(|number| {
                Ok(BlockHead {
                    number: number.expect("a number"),
                    timestamp: 4_999,
                })
            });
        chain
            .expect_authorizations_used()
            .withf(|_, authorizers, blocks| {
                authorizers == [address(PAYER)] && *blocks == (100..=149)
            })
            .times(1)
            .returning(|_, _, _| Ok(Vec::new()));
        store.expect_settle_authorization().never();
        store
            .expect_put_back()
            .withf(move |intents, through| {
                intents == [behind.intent, ahead.intent] && *through == Some(149)
            })
            .times(1)
            .returning(|_, _| Ok(()));
        let settings = WatchSettings {
            max_blocks: 50,
            ..WatchSettings::default()
        };
        let round = watcher(chain, writer, store, settings)
            .watch()
            .await
            .expect("a round");
        assert!(round.executed.is_empty() && round.expired.is_empty());
    }

    #[tokio::test]
    async fn with_no_new_block_nothing_is_queried_and_the_batch_is_given_back() {
        let fresh = watched(1, PAYER, HEAD.number + 1, 20_000);
        let (mut chain, writer, mut store) = at_head();
        let batch = vec![fresh.clone()];
        store
            .expect_watched_authorizations()
            .returning(move |_, _| Ok(batch.clone()));
        chain.expect_authorizations_used().never();
        store
            .expect_put_back()
            .withf(move |intents, through| intents == [fresh.intent] && through.is_none())
            .times(1)
            .returning(|_, _| Ok(()));
        watcher(chain, writer, store, WatchSettings::default())
            .watch()
            .await
            .expect("a round");
    }

    #[tokio::test]
    async fn a_node_that_fails_the_log_query_gives_the_batch_back_unsearched() {
        let waiting = watched(1, PAYER, 400, 20_000);
        let (mut chain, writer, mut store) = at_head();
        let batch = vec![waiting.clone()];
        store
            .expect_watched_authorizations()
            .returning(move |_, _| Ok(batch.clone()));
        chain
            .expect_authorizations_used()
            .returning(|_, _, _| Err(ChainError::Unavailable("timed out".into())));
        store.expect_settle_authorization().never();
        store
            .expect_put_back()
            .withf(move |intents, through| intents == [waiting.intent] && through.is_none())
            .times(1)
            .returning(|_, _| Ok(()));
        let failed = watcher(chain, writer, store, WatchSettings::default())
            .watch()
            .await;
        assert!(matches!(failed, Err(WatchError::Chain(_))), "{failed:?}");
    }

    #[tokio::test]
    async fn an_authorization_another_watch_settled_first_is_no_error() {
        let paid = watched(1, PAYER, 400, 20_000);
        let (mut chain, writer, mut store) = at_head();
        let batch = vec![paid.clone()];
        store
            .expect_watched_authorizations()
            .returning(move |_, _| Ok(batch.clone()));
        let log = used(&paid, 450);
        chain
            .expect_authorizations_used()
            .returning(move |_, _, _| Ok(vec![log.clone()]));
        store.expect_settle_authorization().returning(|_, _| {
            Err(TransitionError::Refused(TransitionRefused {
                from: IntentStatus::Executed,
                event: domain::IntentEvent::Execute,
            }))
        });
        store.expect_put_back().never();
        let round = watcher(chain, writer, store, WatchSettings::default())
            .watch()
            .await
            .expect("a round");
        assert!(round.executed.is_empty());
    }
}
