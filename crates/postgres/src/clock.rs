//! Spans of time to and from SQL, always against the database's clock (`now()`), so instances
//! with drifting clocks agree.

use std::time::Duration;

use diesel::data_types::PgInterval;
use diesel::dsl::sql;
use diesel::expression::{SqlLiteral, TypedExpressionType};
use domain::CursorPosition;
use ports::StoreError;
use time::OffsetDateTime;

use crate::errors::corrupt;

/// A span as a PostgreSQL interval, for comparisons with `now()`.
pub(crate) fn interval(span: Duration) -> PgInterval {
    PgInterval::from_microseconds(i64::try_from(span.as_micros()).unwrap_or(i64::MAX))
}

/// The seconds from the time `expression` (SQL) until `now()`, as a float8 of type `ST`
/// (`Double`, or `Nullable<Double>` for a time that may be NULL).
pub(crate) fn seconds_since<ST: TypedExpressionType>(expression: &str) -> SqlLiteral<ST> {
    sql::<ST>(&format!("EXTRACT(EPOCH FROM now() - {expression})::float8"))
}

/// Seconds read from SQL as a duration; negative ones are none.
pub(crate) fn duration_from_secs(seconds: f64) -> Duration {
    Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::MAX)
}

/// The creation time a page cursor points at, as the timestamp its keyset compares.
pub(crate) fn cursor_time(position: &CursorPosition) -> Result<OffsetDateTime, StoreError> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(position.created_at_micros) * 1000)
        .map_err(|_| corrupt("cursor time out of range"))
}
