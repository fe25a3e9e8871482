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
            if info.message().contains("statement timeout") =>
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
