//! Rotation of the wallet master key: every stored wallet key sealed under the previous master
//! key is sealed anew under the current one, a batch at a time. Safe to run again, and beside
//! servers that keep signing: each key is replaced only if nobody changed it meanwhile.

use std::sync::Arc;

use domain::EvmAddress;
use ports::{KeyVault, ProviderError, StoreError, WalletKeyStore};

/// Wallets read per round trip.
const BATCH: usize = 200;

/// What one pass over every wallet found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResealReport {
    /// Keys now sealed under the current master key that were not before.
    pub resealed: usize,
    /// Keys that already were.
    pub already_current: usize,
    /// Keys that another run replaced between this run's read and its write.
    pub changed_meanwhile: usize,
    /// Wallets whose key neither master key opens: they cannot sign until the right key is given.
    pub unopenable: Vec<EvmAddress>,
}

#[derive(Debug, thiserror::Error)]
pub enum ResealError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("key vault: {0}")]
    Vault(ProviderError),
}

/// Whether `vault` opens the keys already stored, judged by the oldest wallet (true when there is
/// none). A vault configured with another master key would seal new wallets under a key that
/// opens nothing else here, e.g. the public sandbox key in a database of real wallets.
pub async fn vault_opens_stored_keys(
    keys: &dyn WalletKeyStore,
    vault: &dyn KeyVault,
) -> Result<bool, ResealError> {
    let Some(oldest) = keys.sealed_keys_after(None, 1).await?.into_iter().next() else {
        return Ok(true);
    };
    match vault
        .reseal_wallet_key(&oldest.sealed_key, &oldest.address)
        .await
    {
        Ok(_) => Ok(true),
        Err(ProviderError::Refused(_)) => Ok(false),
        Err(unavailable) => Err(ResealError::Vault(unavailable)),
    }
}

pub struct WalletKeyRotation {
    keys: Arc<dyn WalletKeyStore>,
    vault: Arc<dyn KeyVault>,
}

impl WalletKeyRotation {
    pub fn new(keys: Arc<dyn WalletKeyStore>, vault: Arc<dyn KeyVault>) -> Self {
        Self { keys, vault }
    }

    /// Whether the configured master keys open the keys already stored.
    pub async fn vault_opens_stored_keys(&self) -> Result<bool, ResealError> {
        vault_opens_stored_keys(self.keys.as_ref(), self.vault.as_ref()).await
    }

    pub async fn reseal_all(&self) -> Result<ResealReport, ResealError> {
        let mut report = ResealReport::default();
        let mut after = None;
        loop {
            let batch = self.keys.sealed_keys_after(after, BATCH).await?;
            for wallet in &batch {
                match self
                    .vault
                    .reseal_wallet_key(&wallet.sealed_key, &wallet.address)
                    .await
                {
                    Ok(None) => report.already_current += 1,
                    Ok(Some(resealed)) => {
                        let replaced = self
                            .keys
                            .replace_sealed_key(wallet.wallet_id, &wallet.sealed_key, &resealed)
                            .await?;
                        match replaced {
                            true => report.resealed += 1,
                            false => report.changed_meanwhile += 1,
                        }
                    }
                    Err(ProviderError::Refused(_)) => report.unopenable.push(wallet.address),
                    Err(error @ ProviderError::Unavailable(_)) => {
                        return Err(ResealError::Vault(error))
                    }
                }
            }
            match batch.last() {
                Some(last) if batch.len() == BATCH => after = Some(last.wallet_id),
                _ => return Ok(report),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::WalletId;
    use mockall::predicate::{always, eq};
    use mockall::Sequence;
    use ports::{MockKeyVault, MockWalletKeyStore, SealedKeyRecord};
    use uuid::Uuid;

    fn wallet(byte: u8) -> SealedKeyRecord {
        SealedKeyRecord {
            wallet_id: WalletId(Uuid::from_bytes([byte; 16])),
            address: EvmAddress::from_bytes([byte; 20]),
            sealed_key: vec![byte],
        }
    }

    #[tokio::test]
    async fn old_keys_are_replaced_current_ones_kept_and_unopenable_ones_reported() {
        let (old, current, foreign, raced) = (wallet(1), wallet(2), wallet(3), wallet(4));
        let mut keys = MockWalletKeyStore::new();
        let listed = vec![old.clone(), current.clone(), foreign.clone(), raced.clone()];
        keys.expect_sealed_keys_after()
            .with(eq(None), eq(BATCH))
            .return_once(move |_, _| Ok(listed));
        keys.expect_replace_sealed_key()
            .with(eq(old.wallet_id), eq(vec![1u8]), eq(vec![10u8]))
            .return_once(|_, _, _| Ok(true));
        keys.expect_replace_sealed_key()
            .with(eq(raced.wallet_id), eq(vec![4u8]), eq(vec![40u8]))
            .return_once(|_, _, _| Ok(false));
        let mut vault = MockKeyVault::new();
        vault
            .expect_reseal_wallet_key()
            .returning(|sealed, _| match sealed {
                [1] => Ok(Some(vec![10])),
                [2] => Ok(None),
                [4] => Ok(Some(vec![40])),
                _ => Err(ProviderError::Refused("cannot open".into())),
            });
        let report = WalletKeyRotation::new(Arc::new(keys), Arc::new(vault))
            .reseal_all()
            .await
            .expect("resealed");
        assert_eq!(
            report,
            ResealReport {
                resealed: 1,
                already_current: 1,
                changed_meanwhile: 1,
                unopenable: vec![foreign.address],
            }
        );
    }

    #[tokio::test]
    async fn full_batches_continue_after_the_last_wallet_seen() {
        let first: Vec<_> = (0..BATCH).map(|i| wallet(i as u8)).collect();
        let last_id = first.last().expect("non-empty").wallet_id;
        let mut keys = MockWalletKeyStore::new();
        let mut sequence = Sequence::new();
        keys.expect_sealed_keys_after()
            .with(eq(None), eq(BATCH))
            .times(1)
            .in_sequence(&mut sequence)
            .return_once(move |_, _| Ok(first));
        keys.expect_sealed_keys_after()
            .with(eq(Some(last_id)), eq(BATCH))
            .times(1)
            .in_sequence(&mut sequence)
            .return_once(|_, _| Ok(vec![]));
        let mut vault = MockKeyVault::new();
        vault
            .expect_reseal_wallet_key()
            .with(always(), always())
            .returning(|_, _| Ok(None));
        let report = WalletKeyRotation::new(Arc::new(keys), Arc::new(vault))
            .reseal_all()
            .await
            .expect("resealed");
        assert_eq!(report.already_current, BATCH);
    }

    #[tokio::test]
    async fn the_vault_must_open_the_oldest_stored_key() {
        for (opens, expected) in [(true, true), (false, false)] {
            let mut keys = MockWalletKeyStore::new();
            keys.expect_sealed_keys_after()
                .with(eq(None), eq(1))
                .return_once(|_, _| Ok(vec![wallet(1)]));
            let mut vault = MockKeyVault::new();
            vault.expect_reseal_wallet_key().return_once(move |_, _| {
                if opens {
                    Ok(None)
                } else {
                    Err(ProviderError::Refused("sealed under another key".into()))
                }
            });
            let rotation = WalletKeyRotation::new(Arc::new(keys), Arc::new(vault));
            assert_eq!(
                rotation.vault_opens_stored_keys().await.expect("checked"),
                expected
            );
        }
        let mut empty = MockWalletKeyStore::new();
        empty
            .expect_sealed_keys_after()
            .return_once(|_, _| Ok(vec![]));
        let rotation = WalletKeyRotation::new(Arc::new(empty), Arc::new(MockKeyVault::new()));
        assert!(rotation.vault_opens_stored_keys().await.expect("checked"));
    }

    #[tokio::test]
    async fn an_unavailable_vault_stops_the_run() {
        let mut keys = MockWalletKeyStore::new();
        keys.expect_sealed_keys_after()
            .return_once(|_, _| Ok(vec![wallet(1)]));
        keys.expect_replace_sealed_key().never();
        let mut vault = MockKeyVault::new();
        vault
            .expect_reseal_wallet_key()
            .returning(|_, _| Err(ProviderError::Unavailable("down".into())));
        let error = WalletKeyRotation::new(Arc::new(keys), Arc::new(vault))
            .reseal_all()
            .await
            .err();
        assert!(matches!(error, Some(ResealError::Vault(_))), "{error:?}");
    }
}
