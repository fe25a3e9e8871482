//! Translation of diesel and pool failures into the ports' `StoreError`.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use ports::StoreError;

/// Constraint names whose violation the core handles, mapped to the name it knows them by.
const KNOWN_CONFLICTS: &[(&str, &str)] = &[
    ("phone_numbers_number_key", "phone_number"),
    ("email_inboxes_address_key", "email_address"),
    ("wallets_address_key", "wallet_address"),
    ("agents_key_hash_key", "agent_key"),
];

pub(crate) fn from_diesel(error: DieselError) -> StoreError {
    match error {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            let constraint = info.constraint_name().unwrap_or_default();
            let known = KNOWN_CONFLICTS
                .iter()
                .find(|(name, _)| *name == constraint)
                .map_or(constraint, |(_, known)| known);
            StoreError::Conflict(known.to_owned())
        }
        DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, info) => {
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

impl From<TxError<StoreError>> for StoreError {
    fn from(error: TxError<StoreError>) -> Self {
        match error {
            TxError::Diesel(error) => from_diesel(error),
            TxError::Abort(error) => error,
        }
    }
}
