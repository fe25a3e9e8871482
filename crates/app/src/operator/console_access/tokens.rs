//! The personal token an operator issues themselves from a session, and by which they prove to be
//! that operator on the control plane.

use domain::{
    named_decider, Actor, AuditTarget, NamedDecisionRefused, Operator, OperatorId, OperatorName,
    OperatorToken,
};
use ports::{StoreError, TokenRecord};

use super::{random_bytes, ConsoleAccess, ConsoleSession};

/// Why a personal token proves no operator who may decide.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    #[error(
        "this operator token proves nobody: it was revoked or replaced by a newer one, or its \
         operator was disabled"
    )]
    Invalid,
    #[error(transparent)]
    Refused(#[from] NamedDecisionRefused),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why no personal token was revoked.
#[derive(Debug, thiserror::Error)]
pub enum RevokeTokenError {
    #[error("no operator is named {0}")]
    NotFound(OperatorName),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why no personal token was issued.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("Viewers approve nothing: they have no token for agentctl.")]
    Viewer,
    #[error("This operator was disabled: no token is issued.")]
    Disabled,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ConsoleAccess {
    /// The operator whose personal token `token` is, as the principal of a decision on
    /// `target`: the token's use is audited, and only an active operator whose role decides is
    /// proven (`domain::named_decider`).
    pub async fn prove(
        &self,
        token: &str,
        target: AuditTarget<'_>,
    ) -> Result<Operator, ProofError> {
        let token = OperatorToken::parse(token).ok_or(ProofError::Invalid)?;
        let account = self
            .tokens
            .use_token(token.hash(), Some(target.to_string()))
            .await?
            .ok_or(ProofError::Invalid)?;
        Ok(named_decider(&account)?)
    }

    /// Issues the signed-in operator a personal token for `agentctl`, replacing the one they
    /// had: shown once, kept only hashed, audited as theirs from `address`.
    pub async fn issue_token(
        &self,
        session: &ConsoleSession,
        address: Option<String>,
    ) -> Result<OperatorToken, TokenError> {
        if !session.operator.role.may_decide() {
            return Err(TokenError::Viewer);
        }
        let token = OperatorToken::from_random_bytes(random_bytes());
        let issued = self
            .tokens
            .issue_token(session.operator.id, token.hash(), &session.actor(address))
            .await?;
        if !issued {
            return Err(TokenError::Disabled);
        }
        Ok(token)
    }

    /// Revokes the personal token of the operator named `name`, audited as `actor`'s: whether
    /// they had one.
    pub async fn revoke_token(
        &self,
        name: OperatorName,
        actor: &Actor,
    ) -> Result<bool, RevokeTokenError> {
        self.tokens
            .revoke_token(&name, actor)
            .await?
            .ok_or(RevokeTokenError::NotFound(name))
    }

    /// The operator's live personal token, when they have one.
    pub async fn token_of(&self, operator: OperatorId) -> Result<Option<TokenRecord>, StoreError> {
        self.tokens.token_of(operator).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::fixtures::{access, account, name, Stores};
    use super::*;
    use domain::{IntentId, OperatorRole};
    use ports::MockPasskeys;
    use uuid::Uuid;

    #[tokio::test]
    async fn a_token_proves_only_an_active_operator_whose_role_decides() {
        let mut operators = Stores::default();
        let mut answers = vec![
            None,
            Some(account(OperatorRole::Viewer, false)),
            Some(account(OperatorRole::Approver, false)),
        ]
        .into_iter();
        let intent = IntentId(Uuid::now_v7());
        operators
            .tokens
            .expect_use_token()
            .withf(move |_, target| target.as_deref() == Some(&format!("intent:{intent}")))
            .times(3)
            .returning(move |_, _| Ok(answers.next().flatten()));
        let access = access(operators, MockPasskeys::new());
        let token = OperatorToken::from_random_bytes([4; 32]).expose();
        let target = AuditTarget::Intent(intent);
        assert!(matches!(
            access.prove("aro_not-a-token", target).await,
            Err(ProofError::Invalid)
        ));
        assert!(matches!(
            access.prove(&token, target).await,
            Err(ProofError::Invalid)
        ));
        assert!(matches!(
            access.prove(&token, target).await,
            Err(ProofError::Refused(NamedDecisionRefused::Viewer(_)))
        ));
        assert_eq!(
            access.prove(&token, target).await.expect("proven"),
            Operator::Named(name("alice"))
        );
    }

    #[tokio::test]
    async fn a_viewer_is_issued_no_token_and_an_issued_one_is_kept_only_hashed() {
        let mut operators = Stores::default();
        let kept = Arc::new(std::sync::Mutex::new(None));
        let keeping = kept.clone();
        operators
            .tokens
            .expect_issue_token()
            .times(1)
            .returning(move |_, hash, _| {
                *keeping.lock().expect("lock") = Some(hash);
                Ok(true)
            });
        let access = access(operators, MockPasskeys::new());
        let session = |role| ConsoleSession {
            operator: account(role, false),
            csrf: String::new(),
        };
        assert!(matches!(
            access
                .issue_token(&session(OperatorRole::Viewer), None)
                .await,
            Err(TokenError::Viewer)
        ));
        let token = access
            .issue_token(&session(OperatorRole::Approver), None)
            .await
            .expect("issued");
        assert_eq!(*kept.lock().expect("lock"), Some(token.hash()));
    }
}
