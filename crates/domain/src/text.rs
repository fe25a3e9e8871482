//! Rules of the free text the service keeps: subjects, bodies, header values, request ids.

/// Text holding U+0000, which neither mail (RFC 5322 allows no NUL in a message) nor
/// PostgreSQL's `text` can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must not contain the NUL character (U+0000)")]
pub struct NulCharacter;

/// Refuses text holding a NUL character; every other character may be kept.
pub fn check_no_nul(text: &str) -> Result<(), NulCharacter> {
    if text.contains('\0') {
        Err(NulCharacter)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_nul_character_is_refused() {
        assert_eq!(check_no_nul(""), Ok(()));
        assert_eq!(check_no_nul("tab\t, bell\u{7}, é, 🙂"), Ok(()));
        assert_eq!(check_no_nul("a\0b"), Err(NulCharacter));
        assert_eq!(check_no_nul("\0"), Err(NulCharacter));
    }
}
