//! A receiver's `Retry-After` (RFC 9110, 10.2.3): delta-seconds or an HTTP-date.

use std::time::{Duration, SystemTime};

/// How long `value` asks to wait, seen at `now`: its seconds, or the time until its date (zero
/// for a date already past). `None` when it is neither.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than a u64 holds is a wait longer than any schedule: the longest there is.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sun, 06 Nov 1994 08:49:37 GMT, the RFC's example date.
    fn rfc_example() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777)
    }

    #[test]
    fn seconds_are_the_wait() {
        let now = rfc_example();
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after(" 120 ", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("99999999999999999999999", now),
            Some(Duration::from_secs(u64::MAX))
        );
    }

    #[test]
    fn a_date_is_the_time_until_it() {
        let before = rfc_example() - Duration::from_secs(90);
        for form in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                parse_retry_after(form, before),
                Some(Duration::from_secs(90)),
                "{form}"
            );
        }
    }

    #[test]
    fn a_date_already_past_is_no_wait() {
        let after = rfc_example() + Duration::from_secs(3600);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", after),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn anything_else_is_no_answer() {
        let now = rfc_example();
        for value in ["", "soon", "-5", "1.5", "7 seconds", "Sun, 06 Nov 1994"] {
            assert_eq!(parse_retry_after(value, now), None, "{value:?}");
        }
    }
}
