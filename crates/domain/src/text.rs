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

/// Whether `c` shows nothing or changes how the text around it reads: a control character, or a
/// mark that reorders or hides text (bidirectional embeddings, overrides and isolates, zero-width
/// spaces, joiners and marks, the word joiner, the byte-order mark, soft hyphens, variation
/// selectors, fillers, the replacement character). `invoice` U+202E `fdp.exe` reads as
/// `invoiceexe.pdf`, and a key of zero-width spaces looks blank.
pub fn hidden_or_control(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fffd}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_that_hide_or_reorder_text_are_hidden_and_letters_are_not() {
        for hidden in [
            '\0', '\n', '\u{200b}', '\u{202e}', '\u{2066}', '\u{feff}', '\u{ad}',
        ] {
            assert!(hidden_or_control(hidden), "{hidden:?}");
        }
        for shown in ['a', 'é', ' ', '\u{a0}', '🙂', '中'] {
            assert!(!hidden_or_control(shown), "{shown:?}");
        }
    }

    #[test]
    fn only_the_nul_character_is_refused() {
        assert_eq!(check_no_nul(""), Ok(()));
        assert_eq!(check_no_nul("tab\t, bell\u{7}, é, 🙂"), Ok(()));
        assert_eq!(check_no_nul("a\0b"), Err(NulCharacter));
        assert_eq!(check_no_nul("\0"), Err(NulCharacter));
    }
}
