//! Comparing a secret a caller presents with the one kept.

use subtle::ConstantTimeEq;

/// Whether `presented` is `kept`, in a time that tells neither where they differ nor how much
/// of a guess was right (only whether the lengths differ, which a secret's format tells anyway).
pub fn same_secret(presented: &str, kept: &str) -> bool {
    presented.as_bytes().ct_eq(kept.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_bytes_are_the_same_secret() {
        assert!(same_secret("abc", "abc"));
        assert!(same_secret("", ""));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
        assert!(!same_secret("", "a"));
    }
}
