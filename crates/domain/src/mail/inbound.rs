//! What the service keeps of what outside senders write (mail and SMS): text without NUL, and
//! every size and count bounded, so that one message can neither fail its own storing nor make
//! every page of its inbox heavy.

use sha2::{Digest, Sha256};

use super::attachments::split_extension;
use crate::{content_digest, AttachmentId, AttachmentMeta};

/// Headers kept of an inbound message: the first ones, in the order they came.
pub const MAX_KEPT_HEADERS: usize = 100;
/// Characters kept of one header value.
pub const MAX_KEPT_HEADER_VALUE_CHARS: usize = 2048;
/// Bytes kept of all headers' names and values together.
pub const MAX_KEPT_HEADER_BYTES: usize = 32 * 1024;
/// Characters of a header name (RFC 5322 keeps a header's line within 998).
pub const MAX_KEPT_HEADER_NAME_CHARS: usize = 128;
/// Attachments listed for an inbound message: the first ones.
pub const MAX_KEPT_ATTACHMENTS: usize = 50;
/// Characters of an attachment's filename, content type or content id.
pub const MAX_ATTACHMENT_FIELD_CHARS: usize = 255;
/// Addresses kept of each of To, Cc and Reply-To.
pub const MAX_KEPT_ADDRESSES: usize = 100;
/// References kept: the nearest ones, which threading looks at first.
pub const MAX_KEPT_REFERENCES: usize = 50;
/// The longest Message-ID (and In-Reply-To, and reference) kept: one header line of RFC 5322.
pub const MAX_MESSAGE_ID_CHARS: usize = 998;
/// Characters kept of a subject.
pub const MAX_SUBJECT_CHARS: usize = 2048;
/// Characters kept of each body, text and HTML: 1 MiB of ASCII.
pub const MAX_KEPT_BODY_CHARS: usize = 1024 * 1024;
/// Characters of a provider's delivery id kept as it is; a longer one is kept as its digest.
pub const MAX_DELIVERY_KEY_CHARS: usize = 256;

/// How many headers and attachments an inbox page shows of each message; a message read shows
/// every one kept.
pub const PREVIEW_HEADERS: usize = 20;
pub const PREVIEW_ATTACHMENTS: usize = 10;
/// Characters of each header value an inbox page shows.
pub const PREVIEW_HEADER_VALUE_CHARS: usize = 256;

/// What stands in for a NUL character, which neither mail nor PostgreSQL's text can carry.
const NUL_REPLACEMENT: char = char::REPLACEMENT_CHARACTER;

/// `text` without NUL characters (each replaced by U+FFFD), cut to `max_chars` characters.
pub fn kept_text(text: &str, max_chars: usize) -> String {
    text.chars()
        .take(max_chars)
        .map(|c| if c == '\0' { NUL_REPLACEMENT } else { c })
        .collect()
}

/// An attachment's filename as kept: [`kept_text`], but a name cut to fit keeps its extension
/// (what the file opens with), cutting its stem instead.
pub fn kept_filename(name: &str, max_chars: usize) -> String {
    match split_extension(name) {
        (stem, extension) if !extension.is_empty() && name.chars().count() > max_chars => {
            let extension = kept_text(extension, max_chars);
            kept_text(stem, max_chars.saturating_sub(extension.chars().count())) + &extension
        }
        _ => kept_text(name, max_chars),
    }
}

/// Like [`kept_text`], for an optional field.
pub fn kept_optional(text: Option<&str>, max_chars: usize) -> Option<String> {
    text.map(|text| kept_text(text, max_chars))
}

/// A message id (Message-ID, In-Reply-To, a reference) as kept: `None` when it is too long or
/// holds a control character or white space, which no id has and which, reused in a reply's
/// headers, would end the header early.
pub fn kept_message_id(id: &str) -> Option<String> {
    let usable = !id.is_empty()
        && id.chars().count() <= MAX_MESSAGE_ID_CHARS
        && !id.chars().any(|c| c.is_control() || c.is_whitespace());
    usable.then(|| id.to_owned())
}

/// The references kept: usable ids only, the nearest `MAX_KEPT_REFERENCES` of them.
pub fn kept_references(references: &[String]) -> Vec<String> {
    let usable: Vec<String> = references
        .iter()
        .filter_map(|id| kept_message_id(id))
        .collect();
    let skipped = usable.len().saturating_sub(MAX_KEPT_REFERENCES);
    usable.into_iter().skip(skipped).collect()
}

/// The first `MAX_KEPT_ADDRESSES` addresses, without NUL.
pub fn kept_addresses(addresses: &[String]) -> Vec<String> {
    addresses
        .iter()
        .take(MAX_KEPT_ADDRESSES)
        .map(|address| kept_text(address, crate::MAX_ADDRESS_CHARS))
        .collect()
}

/// The headers kept, in the order they came: at most `MAX_KEPT_HEADERS`, each name and value
/// cut, and no more than `MAX_KEPT_HEADER_BYTES` of them in all (the first that would pass it and
/// every later one are left out).
pub fn kept_headers(headers: &[(String, String)]) -> Vec<(String, String)> {
    let mut kept = Vec::new();
    let mut bytes = 0;
    for (name, value) in headers.iter().take(MAX_KEPT_HEADERS) {
        let name = kept_text(name, MAX_KEPT_HEADER_NAME_CHARS);
        let value = kept_text(value, MAX_KEPT_HEADER_VALUE_CHARS);
        bytes += name.len() + value.len();
        if bytes > MAX_KEPT_HEADER_BYTES {
            break;
        }
        kept.push((name, value));
    }
    kept
}

/// An inbound attachment as kept, at `index` of its message (only the first
/// `MAX_KEPT_ATTACHMENTS` are): its text fields cut, and its bytes kept (`stored`, with their
/// size and digest) when they came and weigh at most `max_bytes`.
pub fn kept_attachment(
    index: usize,
    given: &AttachmentMeta,
    content: Option<&[u8]>,
    max_bytes: u64,
) -> AttachmentMeta {
    let content = content.filter(|bytes| bytes.len() as u64 <= max_bytes);
    AttachmentMeta {
        id: AttachmentId::at_index(index),
        filename: given
            .filename
            .as_deref()
            .map(|name| kept_filename(name, MAX_ATTACHMENT_FIELD_CHARS)),
        content_type: kept_text(&given.content_type, MAX_ATTACHMENT_FIELD_CHARS),
        size: content.map_or(given.size, |bytes| bytes.len() as u64),
        content_id: kept_optional(given.content_id.as_deref(), MAX_ATTACHMENT_FIELD_CHARS),
        stored: content.is_some(),
        sha256: content.map(content_digest),
    }
}

/// What a message is known by against redelivery: the provider's delivery id as it is, or
/// `sha256:` and its digest when it is longer than `MAX_DELIVERY_KEY_CHARS` (or holds a NUL), so
/// that any id the provider sends can be stored and looked up through an index.
pub fn delivery_key(id: &str) -> String {
    if id.chars().count() <= MAX_DELIVERY_KEY_CHARS && !id.contains('\0') {
        return id.to_owned();
    }
    format!("sha256:{}", hex::encode(Sha256::digest(id.as_bytes())))
}

/// The headers an inbox page shows of a message: the first `PREVIEW_HEADERS`, values cut to
/// `PREVIEW_HEADER_VALUE_CHARS`.
pub fn preview_headers(headers: Vec<(String, String)>) -> Vec<(String, String)> {
    headers
        .into_iter()
        .take(PREVIEW_HEADERS)
        .map(|(name, value)| {
            let value = match value.char_indices().nth(PREVIEW_HEADER_VALUE_CHARS) {
                Some((cut, _)) => value[..cut].to_owned(),
                None => value,
            };
            (name, value)
        })
        .collect()
}

/// The attachments an inbox page lists of a message: the first `PREVIEW_ATTACHMENTS`.
pub fn preview_attachments(mut attachments: Vec<AttachmentMeta>) -> Vec<AttachmentMeta> {
    attachments.truncate(PREVIEW_ATTACHMENTS);
    attachments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(name: &str, value: &str) -> (String, String) {
        (name.to_owned(), value.to_owned())
    }

    #[test]
    fn nul_characters_are_replaced_and_text_is_cut_by_characters() {
        assert_eq!(kept_text("a\0b", 10), "a\u{fffd}b");
        assert_eq!(kept_text("ééé", 2), "éé");
        assert_eq!(kept_optional(None, 3), None);
    }

    #[test]
    fn message_ids_with_controls_spaces_or_over_a_line_are_not_kept() {
        assert_eq!(kept_message_id("<a@x>").as_deref(), Some("<a@x>"));
        for bad in ["", "<a\r\nBcc: v@x>", "<a b@x>", "<a\0@x>", "<a\u{85}@x>"] {
            assert_eq!(kept_message_id(bad), None, "{bad:?}");
        }
        let long = format!("<{}@x>", "a".repeat(MAX_MESSAGE_ID_CHARS));
        assert_eq!(kept_message_id(&long), None);
    }

    #[test]
    fn the_nearest_usable_references_are_kept() {
        let references: Vec<String> = (0..MAX_KEPT_REFERENCES + 5)
            .map(|n| format!("<{n}@x>"))
            .chain(["<bad id>".to_owned()])
            .collect();
        let kept = kept_references(&references);
        assert_eq!(kept.len(), MAX_KEPT_REFERENCES);
        assert_eq!(kept[0], "<5@x>");
        assert_eq!(
            kept.last().map(String::as_str),
            Some(format!("<{}@x>", MAX_KEPT_REFERENCES + 4).as_str())
        );
    }

    #[test]
    fn headers_are_kept_up_to_their_count_and_their_bytes() {
        let many: Vec<_> = (0..MAX_KEPT_HEADERS * 2)
            .map(|n| pair(&format!("X-{n}"), "v"))
            .collect();
        assert_eq!(kept_headers(&many).len(), MAX_KEPT_HEADERS);
        let huge = vec![
            pair("Subject", "s"),
            pair("X-Big", &"v".repeat(30 * 1024 * 1024)),
        ];
        let kept = kept_headers(&huge);
        assert_eq!(kept[1].1.chars().count(), MAX_KEPT_HEADER_VALUE_CHARS);
        let heavy: Vec<_> = (0..MAX_KEPT_HEADERS)
            .map(|n| pair(&format!("X-{n}"), &"v".repeat(MAX_KEPT_HEADER_VALUE_CHARS)))
            .collect();
        let kept = kept_headers(&heavy);
        let bytes: usize = kept.iter().map(|(n, v)| n.len() + v.len()).sum();
        assert!(bytes <= MAX_KEPT_HEADER_BYTES, "{bytes}");
        assert_eq!(
            kept.len(),
            MAX_KEPT_HEADER_BYTES / (MAX_KEPT_HEADER_VALUE_CHARS + 4)
        );
        assert_eq!(
            kept_headers(&[pair("X-\0", "a\0")]),
            vec![pair("X-\u{fffd}", "a\u{fffd}")]
        );
    }

    fn listed(filename: Option<String>, size: u64) -> AttachmentMeta {
        AttachmentMeta {
            id: AttachmentId::at_index(0),
            filename,
            content_type: "text/plain".into(),
            size,
            content_id: None,
            stored: false,
            sha256: None,
        }
    }

    #[test]
    fn an_attachment_is_kept_with_its_id_its_names_cut_and_its_bytes_within_the_bound() {
        let given = listed(Some(format!("a\0{}", "b".repeat(1000))), 999);
        let kept = kept_attachment(6, &given, Some(b"abc"), 3);
        assert_eq!(kept.id.to_string(), "att_7");
        let name = kept.filename.as_deref().expect("a name");
        assert!(name.starts_with("a\u{fffd}b"));
        assert_eq!(name.chars().count(), MAX_ATTACHMENT_FIELD_CHARS);
        assert!(kept.stored);
        assert_eq!((kept.size, kept.sha256), (3, Some(content_digest(b"abc"))));

        let invoice = listed(Some(format!("{}.pdf", "a".repeat(300))), 1);
        let kept_invoice = kept_attachment(0, &invoice, None, 3);
        let name = kept_invoice.filename.as_deref().expect("a name");
        assert_eq!(name.chars().count(), MAX_ATTACHMENT_FIELD_CHARS);
        assert!(name.ends_with("a.pdf"), "the extension stays: {name}");

        let over = kept_attachment(0, &given, Some(b"abcd"), 3);
        assert!(!over.stored && over.sha256.is_none());
        assert_eq!(over.size, 999, "the size the sender declared");
        assert!(!kept_attachment(0, &given, None, 3).stored);
    }

    #[test]
    fn long_delivery_ids_are_kept_as_their_digest() {
        assert_eq!(delivery_key("msg_123"), "msg_123");
        let long = "x".repeat(3000);
        let key = delivery_key(&long);
        assert!(key.starts_with("sha256:") && key.len() == 7 + 64, "{key}");
        assert_eq!(key, delivery_key(&long), "the same id, the same key");
        assert_ne!(key, delivery_key(&"x".repeat(3001)));
        assert!(delivery_key("a\0b").starts_with("sha256:"));
    }

    #[test]
    fn previews_show_the_first_headers_and_attachments_cut_short() {
        let headers: Vec<_> = (0..50)
            .map(|n| pair(&format!("X-{n}"), &"é".repeat(1000)))
            .collect();
        let preview = preview_headers(headers);
        assert_eq!(preview.len(), PREVIEW_HEADERS);
        assert_eq!(preview[0].1.chars().count(), PREVIEW_HEADER_VALUE_CHARS);
        assert_eq!(
            preview_attachments(vec![listed(None, 1); 30]).len(),
            PREVIEW_ATTACHMENTS
        );
    }
}
