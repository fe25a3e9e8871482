//! Rate limits as token buckets: `burst` requests at once, refilled at `per_minute`.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub per_minute: u32,
    pub burst: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateDecision {
    Allowed,
    /// Over the limit: the next request is allowed after `retry_after`.
    Limited {
        retry_after: Duration,
    },
}

impl RateLimit {
    fn per_second(self) -> f64 {
        f64::from(self.per_minute) / 60.0
    }

    /// Takes one request from a bucket that held `tokens` `elapsed` ago (a new bucket holds
    /// `burst`). Returns what the bucket holds now and whether the request may go.
    pub fn take(self, tokens: f64, elapsed: Duration) -> (f64, RateDecision) {
        let now = (tokens + elapsed.as_secs_f64() * self.per_second()).min(f64::from(self.burst));
        if now >= 1.0 {
            return (now - 1.0, RateDecision::Allowed);
        }
        let missing = 1.0 - now;
        let retry_after = match self.per_second() {
            rate if rate > 0.0 => {
                Duration::try_from_secs_f64(missing / rate).unwrap_or(Duration::MAX)
            }
            _ => Duration::MAX,
        };
        (now, RateDecision::Limited { retry_after })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: RateLimit = RateLimit {
        per_minute: 60,
        burst: 3,
    };

    #[test]
    fn a_new_bucket_allows_a_burst_then_refuses_until_it_refills() {
        let (tokens, decision) = LIMIT.take(f64::from(LIMIT.burst), Duration::ZERO);
        assert_eq!((tokens, decision), (2.0, RateDecision::Allowed));
        let (tokens, _) = LIMIT.take(tokens, Duration::ZERO);
        let (tokens, _) = LIMIT.take(tokens, Duration::ZERO);
        assert_eq!(tokens, 0.0);
        let (tokens, decision) = LIMIT.take(tokens, Duration::from_millis(250));
        assert_eq!(tokens, 0.25);
        assert_eq!(
            decision,
            RateDecision::Limited {
                retry_after: Duration::from_millis(750)
            }
        );
        let (_, decision) = LIMIT.take(tokens, Duration::from_millis(750));
        assert_eq!(decision, RateDecision::Allowed);
    }

    #[test]
    fn a_bucket_never_holds_more_than_its_burst() {
        let (tokens, _) = LIMIT.take(0.0, Duration::from_secs(3600));
        assert_eq!(tokens, 2.0);
    }
}
