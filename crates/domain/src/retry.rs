//! How a leased queue times the attempts at a job the far side could not take: waits doubling
//! until the job is too old (outbound mail, `DeliveryRetry`), or attempts at fixed times after
//! the first (webhooks, `RetryOffsets`).

use std::time::Duration;

use crate::mail::email::{DeliveryRetry, MAX_HONOURED_RETRY_AFTER, RETRY_JITTER};

/// Attempt times after the first try, first included, to the millisecond; at most `MAX` of them,
/// so the rule stays `Copy` like the queue settings that hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryOffsets {
    millis: [u32; Self::MAX],
    len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetryOffsetsError {
    #[error("a schedule needs at least one attempt")]
    Empty,
    #[error("a schedule holds at most {} attempts", RetryOffsets::MAX)]
    TooMany,
    #[error("{0:?} is not a number of seconds (at most three decimals, under 4,294,967)")]
    NotSeconds(String),
    #[error("attempt times must not go back: {0} after {1}")]
    Decreasing(String, String),
}

impl RetryOffsets {
    pub const MAX: usize = 16;

    /// Reads comma-separated seconds after the first try, e.g. `0,5,300`; a time may have up to
    /// three decimals (`0,0.2,0.4`), so that tests wait milliseconds.
    pub fn parse(list: &str) -> Result<Self, RetryOffsetsError> {
        let mut millis = [0u32; Self::MAX];
        let mut len = 0;
        let mut previous: Option<&str> = None;
        for item in list.split(',').map(str::trim) {
            let value =
                millis_of(item).ok_or_else(|| RetryOffsetsError::NotSeconds(item.to_owned()))?;
            if len == Self::MAX {
                return Err(RetryOffsetsError::TooMany);
            }
            if let Some(earlier) = previous.filter(|_| value < millis[len - 1]) {
                return Err(RetryOffsetsError::Decreasing(
                    item.to_owned(),
                    earlier.to_owned(),
                ));
            }
            millis[len] = value;
            len += 1;
            previous = Some(item);
        }
        match len {
            0 => Err(RetryOffsetsError::Empty),
            _ => Ok(Self { millis, len }),
        }
    }

    pub fn attempts(&self) -> usize {
        self.len
    }

    fn offset(&self, attempt: usize) -> Option<Duration> {
        self.millis[..self.len]
            .get(attempt)
            .map(|&millis| Duration::from_millis(u64::from(millis)))
    }

    /// The wait before the next attempt after `attempts` made since the first try `since_first`
    /// ago, or `None` after the last. The step to the next time is spread by `spread` (-1 to 1)
    /// over ±10 %; the wait is never shorter than the far side's `retry_after` (honoured up to
    /// an hour).
    pub fn after_transient(
        &self,
        attempts: u32,
        since_first: Duration,
        retry_after: Option<Duration>,
        spread: f64,
    ) -> Option<Duration> {
        let next = usize::try_from(attempts).ok()?;
        let due = self.offset(next)?;
        let previous = next
            .checked_sub(1)
            .and_then(|last| self.offset(last))
            .unwrap_or_default();
        let step = due.saturating_sub(previous);
        let jitter = step.mul_f64(bounded_spread(spread).abs() * RETRY_JITTER);
        let spread_due = match spread < 0.0 {
            true => due.saturating_sub(jitter),
            false => due + jitter,
        };
        let asked = retry_after
            .unwrap_or_default()
            .min(MAX_HONOURED_RETRY_AFTER);
        Some(spread_due.saturating_sub(since_first).max(asked))
    }
}

/// Milliseconds in `seconds`: digits, then at most three decimals after a point.
fn millis_of(seconds: &str) -> Option<u32> {
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || (seconds.contains('.') && !digits(fraction)) || fraction.len() > 3 {
        return None;
    }
    let fraction_millis = format!("{fraction:0<3}").parse::<u32>().ok()?;
    whole
        .parse::<u32>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(fraction_millis)
}

/// A spread that is no number spreads nothing (`mul_f64` would panic on it).
pub(crate) fn bounded_spread(spread: f64) -> f64 {
    match spread.is_nan() {
        true => 0.0,
        false => spread.clamp(-1.0, 1.0),
    }
}

/// Which of the two ways a queue retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryRule {
    Doubling(DeliveryRetry),
    AtOffsets(RetryOffsets),
}

impl RetryRule {
    /// The wait before the next attempt after `attempts` made, the job queued `age` ago; `None`
    /// to give up.
    pub fn after_transient(
        &self,
        attempts: u32,
        age: Duration,
        retry_after: Option<Duration>,
        spread: f64,
    ) -> Option<Duration> {
        match self {
            Self::Doubling(retry) => retry.after_transient(attempts, age, retry_after, spread),
            Self::AtOffsets(offsets) => offsets.after_transient(attempts, age, retry_after, spread),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(seconds: u64) -> Duration {
        Duration::from_secs(seconds)
    }

    #[test]
    fn schedules_read_as_seconds_that_never_go_back() {
        let offsets = RetryOffsets::parse("0, 5,300").expect("valid");
        assert_eq!(offsets.attempts(), 3);
        assert_eq!(
            RetryOffsets::parse(""),
            Err(RetryOffsetsError::NotSeconds(String::new()))
        );
        assert_eq!(
            RetryOffsets::parse("0,-5"),
            Err(RetryOffsetsError::NotSeconds("-5".into()))
        );
        assert_eq!(
            RetryOffsets::parse("0,5,1"),
            Err(RetryOffsetsError::Decreasing("1".into(), "5".into()))
        );
        for bad in ["1.", ".5", "0.0001", "1e3", "-1", "4294968"] {
            assert!(RetryOffsets::parse(&format!("0,{bad}")).is_err(), "{bad}");
        }
        let seventeen = vec!["1"; 17].join(",");
        assert_eq!(
            RetryOffsets::parse(&seventeen),
            Err(RetryOffsetsError::TooMany)
        );
    }

    #[test]
    fn times_may_be_given_to_the_millisecond() {
        let offsets = RetryOffsets::parse("0,0.2,0.45,1,1.5").expect("valid");
        assert_eq!(offsets.attempts(), 5);
        assert_eq!(
            offsets.after_transient(1, secs(0), None, 0.0),
            Some(Duration::from_millis(200))
        );
        assert_eq!(
            offsets.after_transient(2, Duration::from_millis(200), None, 0.0),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            offsets.after_transient(4, secs(1), None, 0.0),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            RetryOffsets::parse("0,0.5,0.25"),
            Err(RetryOffsetsError::Decreasing("0.25".into(), "0.5".into()))
        );
    }

    #[test]
    fn attempts_come_at_their_times_after_the_first_then_stop() {
        let offsets = RetryOffsets::parse("0,5,300,1800").expect("valid");
        assert_eq!(
            offsets.after_transient(1, secs(0), None, 0.0),
            Some(secs(5))
        );
        assert_eq!(
            offsets.after_transient(2, secs(6), None, 0.0),
            Some(secs(294))
        );
        assert_eq!(
            offsets.after_transient(3, secs(301), None, 0.0),
            Some(secs(1499))
        );
        assert_eq!(offsets.after_transient(4, secs(1801), None, 0.0), None);
        // An attempt made late (an outage) is followed by the next one at once.
        assert_eq!(
            offsets.after_transient(2, secs(400), None, 0.0),
            Some(secs(0))
        );
    }

    #[test]
    fn the_step_to_the_next_time_is_spread_by_a_tenth_either_way() {
        let offsets = RetryOffsets::parse("0,100,300").expect("valid");
        assert_eq!(
            offsets.after_transient(1, secs(0), None, 1.0),
            Some(secs(110))
        );
        assert_eq!(
            offsets.after_transient(1, secs(0), None, -1.0),
            Some(secs(90))
        );
        assert_eq!(
            offsets.after_transient(2, secs(100), None, -1.0),
            Some(secs(180))
        );
        assert_eq!(
            offsets.after_transient(2, secs(100), None, 7.0),
            Some(secs(220))
        );
        assert_eq!(
            offsets.after_transient(1, secs(0), None, f64::NAN),
            Some(secs(100))
        );
    }

    #[test]
    fn a_later_retry_after_is_honoured_up_to_an_hour() {
        let offsets = RetryOffsets::parse("0,5,300").expect("valid");
        assert_eq!(
            offsets.after_transient(1, secs(0), Some(secs(60)), 0.0),
            Some(secs(60))
        );
        assert_eq!(
            offsets.after_transient(1, secs(0), Some(secs(2)), 0.0),
            Some(secs(5))
        );
        assert_eq!(
            offsets.after_transient(1, secs(0), Some(secs(86_400)), 0.0),
            Some(secs(3600))
        );
        assert_eq!(
            offsets.after_transient(3, secs(0), Some(secs(60)), 0.0),
            None
        );
    }
}
