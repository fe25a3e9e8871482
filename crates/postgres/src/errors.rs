//! Translation of diesel and pool failures into the ports' `StoreError`.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use ports::{Conflict, StoreError};

/// Constraint names whose violation the core handles, with what it knows them as.
const KNOWN_CONFLICTS: &[(&str, Conflict)] = &[
    ("phone_numbers_number_key", Conflict::PhoneNumber),
    ("email_inboxes_address_key", Conflict::EmailAddress),
    ("wallets_address_key", Conflict::WalletAddress),
    ("agents_key_hash_key", Conflict::AgentKey),
];

/// The server's words when it ends a session or refuses one while it stops, restarts or
/// recovers: SQLSTATE 57P01 (admin_shutdown), 57P02 (crash_shutdown) and 57P03
/// (cannot_connect_now). The database is unavailable for a while, not broken.
const SERVER_GOING_AWAY: &[&str] = &[
    "terminating connection due to administrator command",
    "terminating connection because of crash of another server process",
    "the database system is",
];

pub(crate) fn from_diesel(error: DieselError) -> StoreError {
    match error {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            let constraint = info.constraint_name().unwrap_or_default();
            match KNOWN_CONFLICTS.iter().find(|(name, _)| *name == constraint) {
                Some((_, conflict)) => StoreError::Conflict(*conflict),
                // A rule nothing above handles is a bug here, not a caller's conflict.
                None => StoreError::Internal(format!(
                    "unique constraint {constraint:?} violated: {}",
                    info.message()
                )),
            }
        }
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            info,
        ) => StoreError::Unavailable(info.message().to_owned()),
        // diesel-async does not pass PostgreSQL's error codes on; these are the server's words
        // for SQLSTATE 55P03 (lock_not_available) and 57014 (query_canceled).
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().contains("lock timeout") =>
        {
            StoreError::Busy(info.message().to_owned())
        }
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().contains("statement timeout")
                || SERVER_GOING_AWAY
                    .iter()
                    .any(|words| info.message().starts_with(words)) =>
        {
            StoreError::Unavailable(info.message().to_owned())
        }
        other => StoreError::Internal(other.to_string()),
    }
}

pub(crate) fn from_pool(error: diesel_async::pooled_connection::deadpool::PoolError) -> StoreError {
    StoreError::Unavailable(error.to_string())
}

/// A row that violates an invariant the schema cannot express.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(format!("corrupt row: {what}"))
}

/// Failure inside a transaction: diesel's own, or a rule of the caller's that aborts it.
pub(crate) enum TxError<E> {
    Diesel(DieselError),
    Abort(E),
}

impl<E> From<DieselError> for TxError<E> {
    fn from(error: DieselError) -> Self {
        Self::Diesel(error)
    }
}

impl<E: From<StoreError>> TxError<E> {
    /// The one conversion out of a transaction: the caller's own error, or diesel's as a store
    /// error.
    pub(crate) fn into_error(self) -> E {
        match self {
            Self::Diesel(error) => from_diesel(error).into(),
            Self::Abort(error) => error,
        }
    }

    /// A store error raised inside a transaction, e.g. a row that does not convert.
    pub(crate) fn store(error: StoreError) -> Self {
        Self::Abort(error.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_said(message: &str) -> StoreError {
        from_diesel(DieselError::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new(message.to_owned()),
        ))
    }

    #[test]
    fn a_server_stopping_or_recovering_is_unavailable_not_a_failure() {
        for message in [
            "terminating connection due to administrator command",
            "terminating connection because of crash of another server process",
            "the database system is shutting down",
            "the database system is starting up",
            "the database system is in recovery mode",
            "canceling statement due to statement timeout",
        ] {
            assert!(
                matches!(server_said(message), StoreError::Unavailable(_)),
                "{message}"
            );
        }
        assert!(matches!(
            server_said("division by zero"),
            StoreError::Internal(_)
        ));
    }
}
