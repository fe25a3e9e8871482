//! What the text of a verification message (mail or SMS) says: the codes in it
//! ([`extract_verification_codes`]) and the service that sent it ([`recognise_service`]), and
//! whether a message is from a service a wait names ([`matches_service`], [`sender_may_be`]).
//! Pure functions of text: no IO, no workspace crate, no business record.

pub mod codes;
pub mod service_name;

pub use codes::extract_verification_codes;
pub use service_name::{matches_service, recognise_service, sender_may_be, Sender};

/// The text a mail's codes and service are read from: its subject, then its text.
pub fn mail_text(subject: Option<&str>, text: Option<&str>) -> String {
    format!(
        "{}\n{}",
        subject.unwrap_or_default(),
        text.unwrap_or_default()
    )
}
