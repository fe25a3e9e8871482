//! The origin-bound one-time code format (WICG "Origin-bound one-time codes delivered via
//! SMS"): the last line of a message is `@host #code`, maybe followed by ` %embedded.host` or
//! other text. Sites write it so browsers can fill the code in; it names the code outright.
//! Many senders write it at the end of their last line of text instead, most SMS being one
//! line ("Use 4821 to sign in @app.example.com #4821"); it names the code just as well.

/// The code of the origin-bound line, or line ending, that ends `text`, if it has one and
/// the code is shaped like the others this extractor returns.
///
/// Two rules go beyond the format, to keep social handles and hashtags out (`@acme #Sale`):
/// the host must be a domain name (labels joined by dots) and the code must hold a digit.
/// Trailing blank lines are skipped, as mail bodies often end with a newline.
pub(super) fn origin_bound_code(text: &str) -> Option<String> {
    let line = text.trim_end().rsplit(['\n', '\r']).next()?;
    let marked = line_code(line).or_else(|| ending_code(line))?;
    Some(marked.replace('-', ""))
}

/// The code of a line that is `@host #code`, with anything after it.
fn line_code(line: &str) -> Option<&str> {
    let (host, rest) = line.strip_prefix('@')?.split_once(' ')?;
    let code = rest
        .strip_prefix('#')?
        .split(|c: char| c.is_ascii_whitespace())
        .next()?;
    (is_domain(host) && is_code(code)).then_some(code)
}

/// The code of a line of text that ends with ` @host #code`, maybe followed by one embedded
/// host (` @pay.example.net`, ` %store.example`). Only an embedded host may follow here: text
/// after the code would leave `@host #code` in the middle of a sentence ("Contact @acme.com
/// #4821 for help").
fn ending_code(line: &str) -> Option<&str> {
    let mut words = line.rsplit(' ');
    let mut last = words.next()?;
    if is_host_mark(last) {
        last = words.next()?;
    }
    let code = last.strip_prefix('#')?;
    // Any space may end the text before the host: the host is the rest of the word.
    let host = words.next()?.rsplit(char::is_whitespace).next()?;
    let host = host.strip_prefix('@')?;
    (is_domain(host) && is_code(code)).then_some(code)
}

/// `@pay.example.net` or `%store.example`: an embedded host after the code.
fn is_host_mark(word: &str) -> bool {
    word.strip_prefix(['@', '%']).is_some_and(is_domain)
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
    fn the_end_of_a_line_of_text_names_host_and_code() {
        let code = Some("4821".to_owned());
        assert_eq!(bound("Use 4821 to sign in @app.example.com #4821"), code);
        assert_eq!(bound("Your code is 4821.\u{a0}@example.com #4821\n"), code);
        assert_eq!(
            bound("Hi\nUse 4821. @example.com #4821 @pay.example.net"),
            code
        );
        assert_eq!(bound("Sign in @example.com #4821 %store.example"), code);
        assert_eq!(
            bound("Sign in @example.com #48-21 @pay.example.net"),
            Some("4821".to_owned())
        );
    }

    #[test]
    fn anything_else_is_no_origin_bound_line() {
        assert_eq!(
            bound("something @example.com #747723 more"),
            None,
            "text before and after"
        );
        assert_eq!(bound("help@example.com #747723"), None, "an email address");
        assert_eq!(
            bound("Use it @example.com #747723 #747724"),
            None,
            "a code after the code"
        );
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
