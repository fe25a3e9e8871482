//! Passkeys for the operator console on webauthn-rs (decision 0065): registration of a
//! discoverable credential with user verification, and sign-in that asks for no name. The
//! ceremonies' options, states and the browser's answers cross the port as JSON.

use domain::OperatorAccount;
use ports::{PasskeyError, Passkeys, StoredPasskey};
use url::Url;
use webauthn_rs::prelude::{
    DiscoverableAuthentication, Passkey, PasskeyRegistration, PublicKeyCredential,
    RegisterPublicKeyCredential, Webauthn, WebauthnBuilder, WebauthnError,
};

/// The relying party the console is: its origin, and its host as the passkeys' RP id.
pub struct WebauthnPasskeys {
    webauthn: Webauthn,
}

impl WebauthnPasskeys {
    /// The console reached at `public_base_url` (`https://console.example.com`, or
    /// `http://localhost:8080`): passkeys are bound to its host, which must be a name, not an
    /// address.
    pub fn new(public_base_url: &str) -> Result<Self, String> {
        let origin = Url::parse(public_base_url)
            .map_err(|error| format!("{public_base_url} is no URL: {error}"))?;
        let host = match origin.host() {
            Some(url::Host::Domain(host)) => host.to_owned(),
            Some(_) => {
                return Err(format!(
                    "{public_base_url} names its host by address: passkeys need a host name \
                     (localhost for a console on this machine)"
                ))
            }
            None => return Err(format!("{public_base_url} has no host")),
        };
        let webauthn = WebauthnBuilder::new(&host, &origin)
            .and_then(|builder| builder.rp_name("agent-runtime console").build())
            .map_err(|error| format!("passkeys for {public_base_url}: {error}"))?;
        Ok(Self { webauthn })
    }
}

fn refused(what: &str) -> impl Fn(serde_json::Error) -> PasskeyError + '_ {
    move |error| PasskeyError::Refused(format!("{what}: {error}"))
}

fn internal(error: impl std::fmt::Display) -> PasskeyError {
    PasskeyError::Internal(error.to_string())
}

fn to_json(value: &impl serde::Serialize) -> Result<String, PasskeyError> {
    serde_json::to_string(value).map_err(internal)
}

/// A state this adapter wrote; one it cannot read back is no answer to any ceremony.
fn state<T: serde::de::DeserializeOwned>(state: &str) -> Result<T, PasskeyError> {
    serde_json::from_str(state).map_err(internal)
}

impl Passkeys for WebauthnPasskeys {
    fn start_registration(
        &self,
        operator: &OperatorAccount,
    ) -> Result<(String, String), PasskeyError> {
        let name = operator.name.as_str();
        let (options, registration) = self
            .webauthn
            .start_passkey_registration(operator.id.0, name, name, None)
            .map_err(internal)?;
        let mut options = serde_json::to_value(&options).map_err(internal)?;
        // A console passkey is discoverable: sign-in then asks for no name (console.md). The
        // library asks for none; the options say so to the browser, which is where it is decided.
        let selection = &mut options["publicKey"]["authenticatorSelection"];
        selection["residentKey"] = serde_json::json!("required");
        selection["requireResidentKey"] = serde_json::json!(true);
        Ok((to_json(&options)?, to_json(&registration)?))
    }

    fn finish_registration(
        &self,
        answer: &str,
        registration: &str,
    ) -> Result<StoredPasskey, PasskeyError> {
        let answer: RegisterPublicKeyCredential =
            serde_json::from_str(answer).map_err(refused("the browser's answer"))?;
        let registration: PasskeyRegistration = state(registration)?;
        let passkey = self
            .webauthn
            .finish_passkey_registration(&answer, &registration)
            .map_err(|error| PasskeyError::Refused(error.to_string()))?;
        Ok(StoredPasskey {
            credential_id: AsRef::<[u8]>::as_ref(passkey.cred_id()).to_vec(),
            record: to_json(&passkey)?,
        })
    }

    fn start_authentication(&self) -> Result<(String, String), PasskeyError> {
        let (mut options, authentication) = self
            .webauthn
            .start_discoverable_authentication()
            .map_err(internal)?;
        // Asked for by a button, not offered in a form's autofill.
        options.mediation = None;
        Ok((to_json(&options)?, to_json(&authentication)?))
    }

    fn identify(&self, answer: &str) -> Result<Vec<u8>, PasskeyError> {
        let answer: PublicKeyCredential =
            serde_json::from_str(answer).map_err(refused("the browser's answer"))?;
        let (_, credential) = self
            .webauthn
            .identify_discoverable_authentication(&answer)
            .map_err(|error| PasskeyError::Refused(error.to_string()))?;
        Ok(credential.to_vec())
    }

    fn finish_authentication(
        &self,
        answer: &str,
        authentication: &str,
        passkey: &StoredPasskey,
    ) -> Result<StoredPasskey, PasskeyError> {
        let answer: PublicKeyCredential =
            serde_json::from_str(answer).map_err(refused("the browser's answer"))?;
        let authentication: DiscoverableAuthentication = state(authentication)?;
        let mut stored: Passkey = state(&passkey.record)?;
        let result = self
            .webauthn
            .finish_discoverable_authentication_v2(&answer, authentication, &stored)
            .map_err(|error| match error {
                WebauthnError::CredentialPossibleCompromise => PasskeyError::CounterWentBack,
                other => PasskeyError::Refused(other.to_string()),
            })?;
        stored.update_credential(&result);
        Ok(StoredPasskey {
            credential_id: passkey.credential_id.clone(),
            record: to_json(&stored)?,
        })
    }
}

/// The passkeys of a console whose URL cannot carry them (an address for a host): every ceremony
/// says why, and the rest of the service runs.
pub struct NoPasskeys {
    why: String,
}

impl NoPasskeys {
    pub fn new(why: String) -> Self {
        Self { why }
    }

    fn refuse<T>(&self) -> Result<T, PasskeyError> {
        Err(PasskeyError::Internal(self.why.clone()))
    }
}

impl Passkeys for NoPasskeys {
    fn start_registration(&self, _: &OperatorAccount) -> Result<(String, String), PasskeyError> {
        self.refuse()
    }

    fn finish_registration(&self, _: &str, _: &str) -> Result<StoredPasskey, PasskeyError> {
        self.refuse()
    }

    fn start_authentication(&self) -> Result<(String, String), PasskeyError> {
        self.refuse()
    }

    fn identify(&self, _: &str) -> Result<Vec<u8>, PasskeyError> {
        self.refuse()
    }

    fn finish_authentication(
        &self,
        _: &str,
        _: &str,
        _: &StoredPasskey,
    ) -> Result<StoredPasskey, PasskeyError> {
        self.refuse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_console_is_a_host_name_with_its_origin() {
        assert!(WebauthnPasskeys::new("http://localhost:8080").is_ok());
        assert!(WebauthnPasskeys::new("https://console.example.com").is_ok());
        let refused = WebauthnPasskeys::new("http://127.0.0.1:8080").err();
        assert!(
            refused
                .as_deref()
                .is_some_and(|why| why.contains("host name")),
            "{refused:?}"
        );
        assert!(WebauthnPasskeys::new("not a url").is_err());
    }
}
