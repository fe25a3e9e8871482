//! Expiry of transfer intents nobody confirmed in time: their amount returns to the daily limit.

use std::sync::Arc;
use std::time::Duration;

use ports::{IntentStore, StoreError, TransferIntentRecord};

/// How many intents one transaction expires; a sweep repeats until none are left.
const BATCH: usize = 500;

pub struct IntentExpiry {
    intents: Arc<dyn IntentStore>,
    pending_for: Duration,
}

impl IntentExpiry {
    pub fn new(intents: Arc<dyn IntentStore>, pending_for: Duration) -> Self {
        Self {
            intents,
            pending_for,
        }
    }

    /// Expires every intent pending longer than the configured time; returns those expired.
    pub async fn sweep(&self) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut expired = Vec::new();
        loop {
            let batch = self.intents.expire_pending(self.pending_for, BATCH).await?;
            let done = batch.len() < BATCH;
            expired.extend(batch);
            if done {
                return Ok(expired);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::{AgentId, AtomicAmount, EvmAddress, IntentStatus};
    use mockall::predicate::eq;
    use ports::MockIntentStore;
    use time::OffsetDateTime;
    use uuid::Uuid;

    fn expired() -> TransferIntentRecord {
        let now = OffsetDateTime::now_utc();
        TransferIntentRecord {
            id: Uuid::now_v7(),
            agent_id: AgentId(Uuid::now_v7()),
            wallet_id: Uuid::now_v7(),
            status: IntentStatus::Expired,
            asset: "USDC".into(),
            chain: "base".into(),
            token_address: None,
            recipient: EvmAddress::from_bytes([1; 20]),
            amount: AtomicAmount::parse("1").expect("valid"),
            idempotency_key: None,
            tx_hash: None,
            failure_reason: None,
            created_at: now,
            updated_at: now,
            confirmed_at: None,
        }
    }

    #[tokio::test]
    async fn a_sweep_repeats_full_batches_until_a_short_one() {
        let pending_for = Duration::from_secs(60);
        let mut intents = MockIntentStore::new();
        let mut sequence = mockall::Sequence::new();
        intents
            .expect_expire_pending()
            .with(eq(pending_for), eq(BATCH))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, limit| Ok(vec![expired(); limit]));
        intents
            .expect_expire_pending()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _| Ok(vec![expired(); 3]));
        let expiry = IntentExpiry::new(Arc::new(intents), pending_for);
        assert_eq!(expiry.sweep().await.expect("swept").len(), BATCH + 3);
    }
}
