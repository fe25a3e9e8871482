//! The barrier a revocation passes before it answers, so that no instance serves the revoked
//! keys from memory after the answer (decision 0084).

use std::time::Duration;

use ports::InstanceBarrier;

/// The longest a revocation waits for every instance to answer its barrier. An instance that
/// does not answer by then (its hub's connection dying unnoticed) still lets the key go within
/// its cache's `max_age`.
pub(crate) const BARRIER_WITHIN: Duration = Duration::from_secs(2);

/// Passes a barrier after a revocation committed. The revocation stands whatever the barrier
/// does, so a barrier that fails or is not answered by every instance is said in the log, not
/// to the caller.
pub(crate) async fn pass_after_revocation(barrier: &dyn InstanceBarrier) {
    match barrier.pass(BARRIER_WITHIN).await {
        Ok(passed) if passed.by_all() => {}
        Ok(passed) => tracing::warn!(
            asked = passed.asked,
            answered = passed.answered,
            within = ?BARRIER_WITHIN,
            "not every instance answered a revocation's barrier; the others let the key go when their cache entry ages"
        ),
        Err(error) => tracing::warn!(
            %error,
            "could not pass a revocation's barrier; other instances let the key go when their cache entry ages"
        ),
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use mockall::Sequence;
    use ports::{BarrierPassed, MockInstanceBarrier};

    /// Expects one barrier, next in `order`, which both instances answer.
    pub(crate) fn expect_one_answered(barrier: &mut MockInstanceBarrier, order: &mut Sequence) {
        barrier
            .expect_pass()
            .with(mockall::predicate::eq(super::BARRIER_WITHIN))
            .times(1)
            .in_sequence(order)
            .returning(|_| {
                Ok(BarrierPassed {
                    asked: 2,
                    answered: 2,
                })
            });
    }
}
