//! Expiry of transfer intents nobody confirmed in time: their amount returns to the daily limit.

use std::sync::Arc;
use std::time::Duration;

use domain::TransferIntentRecord;
use ports::{IntentSweeper, StoreError};

/// How many intents one transaction expires; a sweep repeats until none are left.
const BATCH: usize = 500;

pub struct IntentExpiry {
    sweeper: Arc<dyn IntentSweeper>,
    pending_for: Duration,
}

impl IntentExpiry {
    pub fn new(sweeper: Arc<dyn IntentSweeper>, pending_for: Duration) -> Self {
        Self {
            sweeper,
            pending_for,
        }
    }

    /// Expires every intent pending longer than the configured time; returns those expired.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn sweep(&self) -> Result<Vec<TransferIntentRecord>, StoreError> {
        let mut expired = Vec::new();
        loop {
            let batch = self.sweeper.expire_pending(self.pending_for, BATCH).await?;
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
    use domain::IntentStatus;
    use mockall::predicate::eq;
    use ports::MockIntentSweeper;

    fn expired() -> TransferIntentRecord {
        TransferIntentRecord {
            status: IntentStatus::Expired,
            ..TransferIntentRecord::fixture()
        }
    }

    #[tokio::test]
    async fn a_sweep_repeats_full_batches_until_a_short_one() {
        let pending_for = Duration::from_secs(60);
        let mut sweeper = MockIntentSweeper::new();
        let mut sequence = mockall::Sequence::new();
        sweeper
            .expect_expire_pending()
            .with(eq(pending_for), eq(BATCH))
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, limit| Ok(vec![expired(); limit]));
        sweeper
            .expect_expire_pending()
            .times(1)
            .in_sequence(&mut sequence)
            .returning(|_, _| Ok(vec![expired(); 3]));
        let expiry = IntentExpiry::new(Arc::new(sweeper), pending_for);
        assert_eq!(expiry.sweep().await.expect("swept").len(), BATCH + 3);
    }
}
