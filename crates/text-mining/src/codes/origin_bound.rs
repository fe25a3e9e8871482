//! The origin-bound one-time code format (WICG "Origin-bound one-time codes delivered via
//! SMS"): the last line of a message is `@host #code`, maybe followed by ` %embedded.host` or
//! other text. Sites write it so browsers can fill the code in; it names the code outright.

/// The code of the origin-bound line ending `text`, if it has one and the code is shaped like
/// the others this extractor returns.
///
/// Two rules go beyond the format, to keep social handles and hashtags out (`@acme #Sale`):
/// the host must be a domain name (labels joined by dots) and the code must hold a digit.
/// Trailing blank lines are skipped, as mail bodies often end with a newline.
pub(super) fn origin_bound_code(text: &str) -> Option<String> {
    let line = text.trim_end().rsplit(['\n', '\r']).next()?;
    let (host, rest) = line.strip_prefix('@')?.split_once(' ')?;
    let marked = rest.strip_prefix('#')?;
    let code = marked.split(|c: char| c.is_ascii_whitespace()).next()?;
    (is_domain(host) && is_code(code)).then(|| code.replace('-', ""))
}

/// Labels of letters, digits and dashes, two or more, joined by dots: `example.com`.
fn is_domain(host: &str) -> bool {
    let label_ok =
        |label: &str| !label.is_empty() && label.chars().all(|c| c.is_alphanumeric() || c == '-');
    host.contains('.') && host.split('.').all(label_ok)
}

/// 4 to 8 ASCII letters and digits, with a digit, maybe in pieces joined by single dashes
/// that are dropped as elsewhere (`123-446` gives `123446`).
fn is_code(code: &str) -> bool {
    let pieces_ok = code
        .split('-')
        .all(|piece| !piece.is_empty() && piece.bytes().all(|b| b.is_ascii_alphanumeric()));
    let len = code.bytes().filter(|&b| b != b'-').count();
    pieces_ok && (4..=8).contains(&len) && code.bytes().any(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::origin_bound_code;

    fn bound(text: &str) -> Option<String> {
        origin_bound_code(text)
    }

    #[test]
    fn the_last_line_names_host_and_code() {
        let code = Some("747723".to_owned());
        assert_eq!(bound("747723 is your code.\n\n@example.com #747723"), code);
        assert_eq!(bound("@example.com #747723"), code);
        assert_eq!(bound("Hi\r\n\r\n@example.com #747723\r\n"), code);
        assert_eq!(bound("@example.com #747723 %ecommerce.example"), code);
        assert_eq!(bound("@example.com #747723 $future"), code);
        assert_eq!(
            bound("@login.example.com #AB12-CD"),
            Some("AB12CD".to_owned())
        );
    }

    #[test]
    fn anything_else_is_no_origin_bound_line() {
        assert_eq!(bound("something @example.com #747723"), None, "text before");
        assert_eq!(
            bound("#747723 %ecommerce.example @example.com"),
            None,
            "order"
        );
        assert_eq!(bound("@example.com code #747723"), None, "a word between");
        assert_eq!(bound("@example.com  #747723"), None, "two spaces");
        assert_eq!(
            bound("@example.com #747723\nThanks"),
            None,
            "not the last line"
        );
        assert_eq!(bound("@example.com #"), None, "no code");
        assert_eq!(bound("@example.com #7477239123"), None, "too long");
        assert_eq!(bound("@example.com #747,723"), None, "not code-shaped");
        assert_eq!(
            bound("@acmestore #Summer26"),
            None,
            "a handle, not a domain"
        );
        assert_eq!(bound("@acme.events #Summit"), None, "no digit");
        assert_eq!(bound("@.com #747723"), None);
        assert_eq!(bound(""), None);
    }
}
