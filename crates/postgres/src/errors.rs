//! Translation of diesel and pool failures into the ports' `StoreError`.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use ports::{Conflict, StoreError};
use tokio_postgres::error::SqlState;

/// Constraint names whose violation the core handles, with what it knows them as.
const KNOWN_CONFLICTS: &[(&str, Conflict)] = &[
    ("phone_numbers_number_key", Conflict::PhoneNumber),
    ("email_inboxes_address_key", Conflict::EmailAddress),
    ("wallets_address_key", Conflict::WalletAddress),
    ("agent_keys_key_hash_key", Conflict::AgentKey),
];

/// diesel's error information has no SQLSTATE: diesel-async holds PostgreSQL's error, code and
/// all, but hands out only its text (decision 0048). So the code is read back from the server's
/// untranslated words, which every pooled session speaks (`database::speak_untranslated`): each
/// entry starts the messages PostgreSQL raises with that code, of the codes classified below.
const SQLSTATE_OF_WORDS: &[(&str, SqlState)] = &[
    (
        "canceling statement due to lock timeout",
        SqlState::LOCK_NOT_AVAILABLE,
    ),
    ("could not obtain lock on ", SqlState::LOCK_NOT_AVAILABLE),
    (STATEMENT_TIMEOUT, SqlState::QUERY_CANCELED),
    (
        "canceling statement due to user request",
        SqlState::QUERY_CANCELED,
    ),
    (
        "terminating connection due to administrator command",
        SqlState::ADMIN_SHUTDOWN,
    ),
    (
        "terminating connection because of crash of another server process",
        SqlState::CRASH_SHUTDOWN,
    ),
    (
        "terminating connection due to unexpected postmaster exit",
        SqlState::ADMIN_SHUTDOWN,
    ),
    ("the database system is ", SqlState::CANNOT_CONNECT_NOW),
];

/// The words of a write refused by a node that takes none: a standby, or a primary being
/// demoted (`cannot execute INSERT in a read-only transaction`, `… during recovery`).
const READ_ONLY_ENDINGS: &[&str] = &[" in a read-only transaction", " during recovery"];

/// How the server says a statement ran past `statement_timeout`.
const STATEMENT_TIMEOUT: &str = "canceling statement due to statement timeout";

fn sqlstate_of(message: &str) -> Option<&'static SqlState> {
    if message.starts_with("cannot execute ")
        && READ_ONLY_ENDINGS
            .iter()
            .any(|ending| message.ends_with(ending))
    {
        return Some(&SqlState::READ_ONLY_SQL_TRANSACTION);
    }
    SQLSTATE_OF_WORDS
        .iter()
        .find(|(words, _)| message.starts_with(words))
        .map(|(_, sqlstate)| sqlstate)
}

/// What an error with `sqlstate` is to the core, where it is more than a failure.
fn by_sqlstate(sqlstate: &SqlState, message: &str) -> Option<StoreError> {
    match *sqlstate {
        // A lock wait outlasted `lock_timeout`: others hold the lock; retry shortly.
        SqlState::LOCK_NOT_AVAILABLE => Some(StoreError::Busy(message.to_owned())),
        // A statement past `statement_timeout`: the database is slow or the work too large.
        SqlState::QUERY_CANCELED if message.starts_with(STATEMENT_TIMEOUT) => {
            Some(StoreError::TimedOut(message.to_owned()))
        }
        // A statement cancelled otherwise, or a server that stops, restarts or recovers: the
        // database is unavailable for a while, not broken.
        // A write reaching a node that has become a standby: the primary is elsewhere, or
        // about to be.
        SqlState::QUERY_CANCELED
        | SqlState::ADMIN_SHUTDOWN
        | SqlState::CRASH_SHUTDOWN
        | SqlState::CANNOT_CONNECT_NOW
        | SqlState::READ_ONLY_SQL_TRANSACTION => Some(StoreError::Unavailable(message.to_owned())),
        _ => None,
    }
}

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
        // The driver names this code (25006) itself: a write reaching a node turned standby.
        DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, info) => {
            StoreError::Unavailable(info.message().to_owned())
        }
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info) => sqlstate_of(info.message())
            .and_then(|sqlstate| by_sqlstate(sqlstate, info.message()))
            .unwrap_or_else(|| StoreError::Internal(info.message().to_owned())),
        other => StoreError::Internal(other.to_string()),
    }
}

/// Whether `error` is a write refused by a node that takes none: its connections, and every
/// other opened to it, are of no use for writing any more.
pub(crate) fn refused_as_standby(error: &DieselError) -> bool {
    match error {
        DieselError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, _) => true,
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info) => {
            sqlstate_of(info.message()) == Some(&SqlState::READ_ONLY_SQL_TRANSACTION)
        }
        _ => false,
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
    use diesel::result::DatabaseErrorInformation;

    use super::*;

    fn server_said(message: &str) -> StoreError {
        from_diesel(DieselError::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new(message.to_owned()),
        ))
    }

    /// A violated uniqueness rule as the driver reports it: by its constraint's name.
    struct Violated(&'static str);

    impl DatabaseErrorInformation for Violated {
        fn message(&self) -> &str {
            "duplicate key value violates unique constraint"
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            None
        }
        fn column_name(&self) -> Option<&str> {
            None
        }
        fn constraint_name(&self) -> Option<&str> {
            Some(self.0)
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
    }

    #[test]
    fn a_lock_not_granted_is_busy_a_statement_past_its_time_timed_out_and_a_server_going_away_unavailable(
    ) {
        // As tokio-postgres reads the code field of the server's error.
        let busy = SqlState::from_code("55P03");
        assert!(matches!(by_sqlstate(&busy, "m"), Some(StoreError::Busy(_))));
        for unavailable in ["57014", "57P01", "57P02", "57P03", "25006"] {
            assert!(
                matches!(
                    by_sqlstate(&SqlState::from_code(unavailable), "m"),
                    Some(StoreError::Unavailable(_))
                ),
                "{unavailable}"
            );
        }
        // division_by_zero, deadlock_detected, too_many_connections, an unknown code.
        for other in ["22012", "40P01", "53300", "ZZ999"] {
            assert_eq!(
                by_sqlstate(&SqlState::from_code(other), "m"),
                None,
                "{other}"
            );
        }
    }

    #[test]
    fn the_servers_untranslated_words_give_back_their_sqlstate() {
        for (message, code) in [
            ("canceling statement due to lock timeout", "55P03"),
            (
                "could not obtain lock on row in relation \"wallets\"",
                "55P03",
            ),
            ("canceling statement due to statement timeout", "57014"),
            ("canceling statement due to user request", "57014"),
            (
                "terminating connection due to administrator command",
                "57P01",
            ),
            (
                "terminating connection because of crash of another server process",
                "57P02",
            ),
            (
                "terminating connection due to unexpected postmaster exit",
                "57P01",
            ),
            ("cannot execute INSERT in a read-only transaction", "25006"),
            ("cannot execute UPDATE during recovery", "25006"),
            ("the database system is shutting down", "57P03"),
            ("the database system is starting up", "57P03"),
            ("the database system is in recovery mode", "57P03"),
            (
                "the database system is not yet accepting connections",
                "57P03",
            ),
        ] {
            assert_eq!(
                sqlstate_of(message).map(SqlState::code),
                Some(code),
                "{message}"
            );
        }
        assert_eq!(sqlstate_of("division by zero"), None);
        assert_eq!(
            sqlstate_of("cannot execute SELECT within security-restricted operation"),
            None
        );
    }

    #[test]
    fn a_server_stopping_or_recovering_is_unavailable_not_a_failure() {
        for message in [
            "terminating connection due to administrator command",
            "terminating connection because of crash of another server process",
            "the database system is shutting down",
            "the database system is starting up",
            "the database system is in recovery mode",
            "canceling statement due to user request",
            "terminating connection due to unexpected postmaster exit",
            "cannot execute INSERT in a read-only transaction",
            "cannot execute nextval() in a read-only transaction",
        ] {
            assert!(
                matches!(server_said(message), StoreError::Unavailable(_)),
                "{message}"
            );
        }
        assert!(matches!(
            server_said("canceling statement due to statement timeout"),
            StoreError::TimedOut(_)
        ));
        assert!(matches!(
            server_said("canceling statement due to lock timeout"),
            StoreError::Busy(_)
        ));
        assert!(matches!(
            server_said("division by zero"),
            StoreError::Internal(_)
        ));
    }

    #[test]
    fn a_unique_violation_is_a_conflict_only_for_a_constraint_the_core_knows() {
        let violated = |constraint| {
            from_diesel(DieselError::DatabaseError(
                DatabaseErrorKind::UniqueViolation,
                Box::new(Violated(constraint)),
            ))
        };
        assert_eq!(
            violated("wallets_address_key"),
            StoreError::Conflict(Conflict::WalletAddress)
        );
        assert!(matches!(
            violated("some_other_key"),
            StoreError::Internal(_)
        ));
    }
}
