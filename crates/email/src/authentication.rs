//! The sender's authentication, read from the `Authentication-Results` (RFC 8601) the receiving
//! side wrote above its `Received`, once, when a delivery is parsed: intake stores what it says.

use domain::SenderAuthentication;

/// Whether the sender of a message with these headers (in the order they came) and this From
/// address was authenticated. Only `Authentication-Results` written above the first `Received`
/// count: every server on the way writes its `Received` above what it got, so results below it
/// may be the sender's own. DMARC passing for the From domain, or a DKIM signature of that domain
/// or of one it is under verifying, authenticates it.
pub fn sender_authentication(
    headers: &[(String, String)],
    from: Option<&str>,
) -> SenderAuthentication {
    let Some(first_received) = headers
        .iter()
        .position(|(name, _)| name.eq_ignore_ascii_case("Received"))
    else {
        return SenderAuthentication::Unreported;
    };
    let from_domain = from
        .and_then(|from| from.rsplit_once('@'))
        .map(|(_, domain)| domain.trim_end_matches('>').to_ascii_lowercase());
    let mut reported = false;
    for (_, results) in headers[..first_received]
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("Authentication-Results"))
    {
        for result in method_results(results) {
            if !matches!(result.method.as_str(), "dkim" | "dmarc") {
                continue;
            }
            reported = true;
            let (Some(from_domain), "pass") = (&from_domain, result.result.as_str()) else {
                continue;
            };
            let aligned = result.domain.as_deref().is_some_and(|signed| {
                from_domain == signed
                    || (result.method == "dkim" && from_domain.ends_with(&format!(".{signed}")))
            });
            if aligned {
                return SenderAuthentication::Passed {
                    domain: from_domain.clone(),
                };
            }
        }
    }
    match reported {
        true => SenderAuthentication::Failed,
        false => SenderAuthentication::Unreported,
    }
}

/// One `method=result` of an `Authentication-Results` value, with the domain it speaks of:
/// `header.from` for DMARC, `header.d` (or the domain of `header.i`) for DKIM.
struct MethodResult {
    method: String,
    result: String,
    domain: Option<String>,
}

/// The results of an `Authentication-Results` value, comments left out; its first part, the
/// authenticating server's id, is not one.
fn method_results(value: &str) -> Vec<MethodResult> {
    let mut plain = String::with_capacity(value.len());
    let mut depth = 0_usize;
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split(';')
        .skip(1)
        .filter_map(|part| {
            let mut words = part.split_whitespace();
            let (method, result) = words.next()?.split_once('=')?;
            let method = method.to_ascii_lowercase();
            let property = match method.as_str() {
                "dmarc" => "header.from",
                _ => "header.d",
            };
            let mut domain = None;
            for word in words {
                let Some((name, value)) = word.split_once('=') else {
                    continue;
                };
                let value = value.trim_matches('"').to_ascii_lowercase();
                if name.eq_ignore_ascii_case(property) {
                    domain = Some(value);
                } else if name.eq_ignore_ascii_case("header.i") && domain.is_none() {
                    domain = value.rsplit_once('@').map(|(_, domain)| domain.to_owned());
                }
            }
            Some(MethodResult {
                method,
                result: result.to_ascii_lowercase(),
                domain,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(name: &str, value: &str) -> (String, String) {
        (name.to_owned(), value.to_owned())
    }

    fn authenticated(headers: &[(&str, &str)], from: &str) -> SenderAuthentication {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(name, value)| pair(name, value))
            .collect();
        sender_authentication(&headers, Some(from))
    }

    #[test]
    fn dmarc_or_an_aligned_dkim_pass_written_by_the_receiving_side_authenticates_the_sender() {
        let google = "mx.example.net; dkim=pass header.i=@accounts.google.com header.s=s1 \
                      header.b=abc; spf=pass (sender is ok) smtp.mailfrom=google.com; \
                      dmarc=pass (p=REJECT) header.from=google.com";
        let received = ("Received", "by mx.example.net");
        assert_eq!(
            authenticated(
                &[("Authentication-Results", google), received],
                "no-reply@accounts.google.com"
            ),
            SenderAuthentication::Passed {
                domain: "accounts.google.com".into()
            },
            "DKIM of google.com signs for accounts.google.com"
        );
        assert_eq!(
            authenticated(
                &[
                    (
                        "Authentication-Results",
                        "mx; dmarc=pass header.from=bank.example"
                    ),
                    received
                ],
                "Bank <alerts@bank.example>"
            ),
            SenderAuthentication::Passed {
                domain: "bank.example".into()
            }
        );
    }

    #[test]
    fn results_for_another_domain_failing_or_written_by_the_sender_authenticate_nothing() {
        let received = ("Received", "by mx.example.net");
        let evil = "mx; dkim=pass header.d=evil.example; dmarc=fail header.from=google.com";
        assert_eq!(
            authenticated(
                &[("Authentication-Results", evil), received],
                "no-reply@google.com"
            ),
            SenderAuthentication::Failed
        );
        let forged = "mx; dkim=pass header.d=google.com; dmarc=pass header.from=google.com";
        assert_eq!(
            authenticated(
                &[received, ("Authentication-Results", forged)],
                "no-reply@google.com"
            ),
            SenderAuthentication::Unreported,
            "below the receiving side's Received: the sender's own"
        );
        assert_eq!(
            authenticated(&[("Authentication-Results", forged)], "no-reply@google.com"),
            SenderAuthentication::Unreported,
            "no Received at all: no receiving side wrote it"
        );
        assert_eq!(
            authenticated(
                &[
                    ("Authentication-Results", "mx; spf=pass smtp.mailfrom=x"),
                    received
                ],
                "a@x"
            ),
            SenderAuthentication::Unreported,
            "SPF alone says nothing of the From address"
        );
        assert_eq!(
            authenticated(
                &[
                    (
                        "Authentication-Results",
                        "mx; dkim=pass header.d=google.com.evil.example"
                    ),
                    received
                ],
                "a@google.com"
            ),
            SenderAuthentication::Failed
        );
    }
}
