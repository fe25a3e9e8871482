//! Operators invited by the control plane, each enrolling a passkey through a one-time link, and
//! disabled when they leave.

use domain::{
    Actor, OneTimeSecret, OperatorAccount, OperatorId, OperatorName, OperatorRole, CEREMONY_TTL,
    ENROLLMENT_TTL,
};
use ports::{Ceremony, NewOperator, OperatorStoreError, StoreError};
use uuid::Uuid;

use super::{random_secret, store_error, AccessError, CeremonyStart, ConsoleAccess};

/// A new operator and the link that enrolls them, which holds the one-time secret: shown once.
#[derive(Debug, Clone)]
pub struct Invitation {
    pub operator: OperatorAccount,
    pub enroll_url: String,
}

#[derive(Debug, thiserror::Error)]
pub enum InviteError {
    #[error("an operator named {0} exists already")]
    NameTaken(OperatorName),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum DisableError {
    #[error("no operator is named {0}")]
    NotFound(OperatorName),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ConsoleAccess {
    /// Registers an operator and makes the one-time link that enrolls them, valid 24 hours.
    #[tracing::instrument(level = "debug", skip(self, actor))]
    pub async fn invite(
        &self,
        name: OperatorName,
        role: OperatorRole,
        actor: &Actor,
    ) -> Result<Invitation, InviteError> {
        let token = random_secret();
        let operator = self
            .accounts
            .invite(
                NewOperator {
                    id: OperatorId(Uuid::now_v7()),
                    name,
                    role,
                    enrollment: token.hash(),
                    enrollment_ttl: ENROLLMENT_TTL,
                },
                actor,
            )
            .await
            .map_err(|error| match error {
                OperatorStoreError::NameTaken(name) => InviteError::NameTaken(name),
                other => InviteError::Store(store_error(other)),
            })?;
        Ok(Invitation {
            operator,
            enroll_url: format!("{}/console/enroll/{}", self.public_base_url, token.expose()),
        })
    }

    pub async fn list(&self) -> Result<Vec<OperatorAccount>, StoreError> {
        self.accounts.list().await
    }

    /// Disables the operator: their sessions end at once and nothing of theirs opens the
    /// console again.
    pub async fn disable(
        &self,
        name: OperatorName,
        actor: &Actor,
    ) -> Result<OperatorAccount, DisableError> {
        self.accounts
            .disable(&name, actor)
            .await?
            .ok_or(DisableError::NotFound(name))
    }

    /// The operator an enrollment link (its secret, as the URL carries it) is for, while open.
    pub async fn enrollment(&self, token: &str) -> Result<OperatorAccount, AccessError> {
        let token = OneTimeSecret::parse(token).ok_or(AccessError::LinkClosed)?;
        self.accounts
            .enrollment(token.hash())
            .await?
            .ok_or(AccessError::LinkClosed)
    }

    /// Begins registering a passkey through the enrollment link `token`.
    pub async fn registration_options(&self, token: &str) -> Result<CeremonyStart, AccessError> {
        let operator = self.enrollment(token).await?;
        let enrollment = OneTimeSecret::parse(token)
            .ok_or(AccessError::LinkClosed)?
            .hash();
        let (options, state) = self.passkeys.start_registration(&operator)?;
        let id = Uuid::now_v7();
        self.accounts
            .begin_ceremony(
                Ceremony {
                    id,
                    enrollment,
                    state,
                },
                CEREMONY_TTL,
            )
            .await?;
        Ok(CeremonyStart {
            ceremony: id.to_string(),
            options,
        })
    }

    /// Registers the passkey the browser's `answer` created in the registration `ceremony`, and
    /// uses the enrollment link up.
    #[tracing::instrument(level = "debug", skip(self, answer))]
    pub async fn register(
        &self,
        ceremony: &str,
        answer: &str,
        address: Option<String>,
    ) -> Result<OperatorAccount, AccessError> {
        let id = ceremony
            .parse::<Uuid>()
            .map_err(|_| AccessError::CeremonyGone)?;
        let Some(Ceremony {
            enrollment, state, ..
        }) = self.accounts.take_ceremony(id).await?
        else {
            return Err(AccessError::CeremonyGone);
        };
        let passkey = self.passkeys.finish_registration(answer, &state)?;
        self.accounts
            .enroll(enrollment, passkey, address)
            .await
            .map_err(|error| match error {
                OperatorStoreError::EnrollmentClosed => AccessError::LinkClosed,
                OperatorStoreError::PasskeyTaken => AccessError::PasskeyTaken,
                other => AccessError::Store(store_error(other)),
            })
    }
}
