//! Attachments of mail: what is known of each, the id it is downloaded by, and how a download
//! names and types it. The bytes live behind `ports::AttachmentContent`, in pieces of
//! `ATTACHMENT_PIECE_BYTES`, so a download holds one piece at a time whatever the size.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::text::hidden_or_control;

/// The bytes of each piece an attachment is kept and read in; the last piece may be shorter.
pub const ATTACHMENT_PIECE_BYTES: usize = 256 * 1024;

/// The largest inbound attachment whose bytes are kept unless configured otherwise
/// (`EMAIL_ATTACHMENT_MAX_BYTES`); a larger one keeps its metadata, `stored: false`.
pub const DEFAULT_ATTACHMENT_MAX_BYTES: u64 = 25 * 1024 * 1024;

/// The longest name a download is saved as, in bytes of UTF-8 (what file systems allow).
pub const MAX_DOWNLOAD_NAME_BYTES: usize = 255;

/// The longest extension, its dot included, kept whole when a name is cut to fit.
const MAX_KEPT_EXTENSION_BYTES: usize = 16;

/// A filename's stem and its extension (from its last dot, which starts no name, to its end, at
/// most `MAX_KEPT_EXTENSION_BYTES`): what a name cut to fit keeps whole. No extension: empty.
pub fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(dot) if dot > 0 && name.len() - dot <= MAX_KEPT_EXTENSION_BYTES => name.split_at(dot),
        _ => (name, ""),
    }
}

/// What a download is typed as when the stored type is absent or not a valid media type.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// The name a download is saved as when the attachment gives none (or nothing of it is left).
const UNNAMED: &str = "attachment";

/// An attachment's id within its message: `att_` and its position, from 1. Stable: kept with
/// the message's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttachmentId(u32);

impl AttachmentId {
    /// The id of the attachment at `index` (from 0) of its message.
    pub fn at_index(index: usize) -> Self {
        Self(u32::try_from(index).map_or(u32::MAX, |index| index.saturating_add(1)))
    }

    /// Its position in the message, from 1: what the store keys its pieces by.
    pub fn position(self) -> u32 {
        self.0
    }

    /// The id kept at `position` (from 1); `None` for 0.
    pub fn from_position(position: u32) -> Option<Self> {
        (position > 0).then_some(Self(position))
    }
}

impl fmt::Display for AttachmentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "att_{}", self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an attachment id")]
pub struct InvalidAttachmentId;

impl FromStr for AttachmentId {
    type Err = InvalidAttachmentId;

    /// Only the id's own spelling: `att_` and a position without sign or leading zero.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let digits = text.strip_prefix("att_").ok_or(InvalidAttachmentId)?;
        if digits.is_empty()
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(InvalidAttachmentId);
        }
        digits
            .parse::<u32>()
            .map(Self)
            .map_err(|_| InvalidAttachmentId)
    }
}

/// What is known of an attachment, and whether its bytes are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentMeta {
    pub id: AttachmentId,
    pub filename: Option<String>,
    pub content_type: String,
    pub size: u64,
    pub content_id: Option<String>,
    /// Whether its bytes are kept: only then can it be downloaded.
    pub stored: bool,
    /// SHA-256 of its bytes, when they are kept: a download's entity tag.
    pub sha256: Option<[u8; 32]>,
}

impl AttachmentMeta {
    /// The `ETag` of its download: the digest of its bytes, quoted; `None` when not stored.
    pub fn etag(&self) -> Option<String> {
        self.sha256
            .filter(|_| self.stored)
            .map(|digest| format!("\"{}\"", hex::encode(digest)))
    }
}

/// At most this many attachments go with one send, reply or forward of an agent.
pub const MAX_OUTBOUND_ATTACHMENTS: usize = 10;

/// The decoded bytes of the attachments an agent gives one send, reply or forward, in all.
pub const MAX_OUTBOUND_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;

/// The largest body any request of an agent may have, on any way in: a send, reply or forward
/// with its attachments at their limit in base64 (13.4 MiB) beside a `body_text` at its limit.
/// A body declared larger is refused before a byte of it is read.
pub const MAX_REQUEST_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Whether `count` attachments of `bytes` in all (decoded) may go with one message: a forward's
/// carried from the original with those the agent gives.
pub fn outbound_attachments_fit(count: usize, bytes: u64) -> bool {
    count <= MAX_OUTBOUND_ATTACHMENTS
        && usize::try_from(bytes).is_ok_and(|bytes| bytes <= MAX_OUTBOUND_ATTACHMENT_BYTES)
}

/// The longest name of an attachment an agent sends, in characters.
pub const MAX_OUTBOUND_FILENAME_CHARS: usize = 255;

/// An attachment an agent sends: its name and type valid, its bytes decoded.
#[derive(Clone, PartialEq, Eq)]
pub struct NewAttachment {
    filename: String,
    content_type: String,
    content: Arc<[u8]>,
}

/// Why an attachment an agent gave cannot be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NewAttachmentError {
    #[error("the filename must not be empty")]
    EmptyFilename,
    #[error("the filename must be at most {MAX_OUTBOUND_FILENAME_CHARS} characters")]
    LongFilename,
    #[error("the filename must not contain control characters or marks that reorder or hide text")]
    HiddenCharacters,
    #[error("content_type must be a media type, `type/subtype` with optional parameters")]
    ContentType,
}

/// The media type an attachment named `filename` is sent as when its sender gives none: the
/// type its extension commonly stands for (`note.txt` is `text/plain`), else
/// `application/octet-stream`. Receivers open a file by its type; octets they only offer to save.
pub fn media_type_of_name(filename: &str) -> &'static str {
    let (_, extension) = split_extension(filename);
    extension
        .strip_prefix('.')
        .and_then(|extension| mime_guess::from_ext(extension).first_raw())
        .unwrap_or(OCTET_STREAM)
}

impl NewAttachment {
    /// The attachment, typed by its name's extension when no type is given
    /// (`media_type_of_name`).
    pub fn new(
        filename: String,
        content_type: Option<String>,
        content: Arc<[u8]>,
    ) -> Result<Self, NewAttachmentError> {
        if filename.is_empty() {
            return Err(NewAttachmentError::EmptyFilename);
        }
        if filename.chars().count() > MAX_OUTBOUND_FILENAME_CHARS {
            return Err(NewAttachmentError::LongFilename);
        }
        if filename.chars().any(hidden_or_control) {
            return Err(NewAttachmentError::HiddenCharacters);
        }
        let content_type = content_type.unwrap_or_else(|| media_type_of_name(&filename).to_owned());
        if !is_media_type(&content_type) {
            return Err(NewAttachmentError::ContentType);
        }
        Ok(Self {
            filename,
            content_type,
            content,
        })
    }

    pub fn filename(&self) -> &str {
        &self.filename
    }

    pub fn content_type(&self) -> &str {
        &self.content_type
    }

    pub fn content(&self) -> &Arc<[u8]> {
        &self.content
    }

    /// What is kept of it as the `index`-th attachment of its message: stored, with its digest.
    pub fn meta(&self, index: usize) -> AttachmentMeta {
        AttachmentMeta {
            id: AttachmentId::at_index(index),
            filename: Some(self.filename.clone()),
            content_type: self.content_type.clone(),
            size: self.content.len() as u64,
            content_id: None,
            stored: true,
            sha256: Some(content_digest(&self.content)),
        }
    }
}

/// The bytes are left out: they may weigh megabytes, and a log has no use for them.
impl fmt::Debug for NewAttachment {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("NewAttachment")
            .field("filename", &self.filename)
            .field("content_type", &self.content_type)
            .field("bytes", &self.content.len())
            .finish()
    }
}

/// SHA-256 of an attachment's bytes.
pub fn content_digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// How many pieces of `ATTACHMENT_PIECE_BYTES` hold `size` bytes.
pub fn piece_count(size: u64) -> u64 {
    size.div_ceil(ATTACHMENT_PIECE_BYTES as u64)
}

/// The `Content-Type` a download is served with: the stored type when it is a valid media type
/// (RFC 9110: `type/subtype` tokens, then parameters of a token or a quoted string), in ASCII;
/// else `application/octet-stream`, which no browser renders.
pub fn download_content_type(stored: &str) -> &str {
    match is_media_type(stored) {
        true => stored,
        false => OCTET_STREAM,
    }
}

fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

fn is_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(is_tchar)
}

fn is_quoted_string(text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    else {
        return false;
    };
    let mut bytes = inner.bytes();
    while let Some(byte) = bytes.next() {
        let usable = match byte {
            b'\\' => bytes
                .next()
                .is_some_and(|quoted| quoted == b'\t' || (b' '..=b'~').contains(&quoted)),
            b'"' => false,
            b'\t' | b' '..=b'~' => true,
            _ => false,
        };
        if !usable {
            return false;
        }
    }
    true
}

fn is_media_type(text: &str) -> bool {
    let mut parts = text.split(';');
    let essence = parts.next().unwrap_or_default();
    let valid_essence = essence
        .split_once('/')
        .is_some_and(|(kind, subtype)| is_token(kind) && is_token(subtype));
    // A quoted value holding `;` is refused: served as octets, which is always safe.
    valid_essence
        && parts.all(|parameter| {
            parameter
                .trim_matches([' ', '\t'])
                .split_once('=')
                .is_some_and(|(name, value)| {
                    is_token(name) && (is_token(value) || is_quoted_string(value))
                })
        })
}

/// The name a download is saved as: the last segment of the name given (after any `/` or `\`),
/// without controls or the marks that reorder text, trimmed of spaces and leading dots, at most
/// `MAX_DOWNLOAD_NAME_BYTES` of UTF-8; `attachment` when nothing is left.
pub fn download_filename(filename: Option<&str>) -> String {
    let given = filename.unwrap_or_default();
    let last = given.rsplit(['/', '\\']).next().unwrap_or_default();
    let visible: String = last.chars().filter(|&c| !hidden_or_control(c)).collect();
    let trimmed = visible.trim().trim_start_matches('.').trim();
    // A name too long is cut in its stem: the extension says what opens the file.
    let (stem, extension) = match trimmed.len() > MAX_DOWNLOAD_NAME_BYTES {
        true => split_extension(trimmed),
        false => (trimmed, ""),
    };
    let mut name = String::new();
    for c in stem.chars() {
        if name.len() + c.len_utf8() + extension.len() > MAX_DOWNLOAD_NAME_BYTES {
            break;
        }
        name.push(c);
    }
    name.push_str(extension);
    match name.trim_end().is_empty() {
        true => UNNAMED.to_owned(),
        false => name.trim_end().to_owned(),
    }
}

/// The `Content-Disposition` of a download (RFC 6266 with RFC 8187's encoding): always an
/// attachment, named by `download_filename`, every byte but RFC 8187's `attr-char` percent-encoded.
pub fn content_disposition(filename: Option<&str>) -> String {
    let name = download_filename(filename);
    let mut encoded = String::with_capacity(name.len() * 3);
    for byte in name.bytes() {
        match byte.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&byte) {
            true => encoded.push(char::from(byte)),
            false => encoded.push_str(&format!("%{byte:02X}")),
        }
    }
    format!("attachment; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_carries_ten_attachments_of_ten_mib_in_all_at_most() {
        let most = MAX_OUTBOUND_ATTACHMENT_BYTES as u64;
        assert!(outbound_attachments_fit(0, 0));
        assert!(outbound_attachments_fit(MAX_OUTBOUND_ATTACHMENTS, most));
        assert!(!outbound_attachments_fit(MAX_OUTBOUND_ATTACHMENTS + 1, 0));
        assert!(!outbound_attachments_fit(1, most + 1));
        assert!(!outbound_attachments_fit(1, u64::MAX));
    }
    use proptest::prelude::*;

    #[test]
    fn an_attachment_to_send_needs_a_visible_name_of_bounded_length_and_a_media_type() {
        let bytes: Arc<[u8]> = Arc::from(&b"%PDF-1.7"[..]);
        let given = |name: &str, kind: Option<&str>| {
            NewAttachment::new(name.to_owned(), kind.map(str::to_owned), Arc::clone(&bytes))
        };
        let invoice = given("invoice.pdf", Some("application/pdf; name=\"x\"")).expect("valid");
        assert_eq!(invoice.content_type(), "application/pdf; name=\"x\"");
        let meta = invoice.meta(2);
        assert_eq!(meta.id.to_string(), "att_3");
        assert_eq!((meta.size, meta.stored), (8, true));
        assert_eq!(meta.sha256, Some(content_digest(b"%PDF-1.7")));
        assert_eq!(
            given("a/b\\c.txt", None).expect("valid").filename(),
            "a/b\\c.txt",
            "a name is sent as given; only a download's name is cut to its last segment"
        );
        assert_eq!(
            given("note.txt", None).expect("valid").content_type(),
            "text/plain",
            "a type left out is the name's"
        );
        assert_eq!(
            given("note.txt", Some("application/x-note"))
                .expect("valid")
                .content_type(),
            "application/x-note",
            "a type given is kept"
        );
        assert_eq!(given("", None), Err(NewAttachmentError::EmptyFilename));
        assert_eq!(
            given(&"n".repeat(MAX_OUTBOUND_FILENAME_CHARS + 1), None),
            Err(NewAttachmentError::LongFilename)
        );
        assert!(given(&"é".repeat(MAX_OUTBOUND_FILENAME_CHARS), None).is_ok());
        for hidden in [
            "a\0b",
            "a\r\nBcc: x",
            "invoice\u{202e}fdp.exe",
            "a\u{200b}b",
        ] {
            assert_eq!(
                given(hidden, None),
                Err(NewAttachmentError::HiddenCharacters),
                "{hidden:?}"
            );
        }
        for bad in [
            "",
            "pdf",
            "text/",
            "text/plain; charset",
            "a b/c",
            "text/plain\r\nX: y",
        ] {
            assert_eq!(
                given("a.txt", Some(bad)),
                Err(NewAttachmentError::ContentType),
                "{bad:?}"
            );
        }
        assert!(!format!("{invoice:?}").contains("PDF"), "no bytes in logs");
    }

    #[test]
    fn a_name_types_by_its_extension_and_anything_unknown_is_octets() {
        for (name, media_type) in [
            ("note.txt", "text/plain"),
            ("REPORT.PDF", "application/pdf"),
            ("photo.jpeg", "image/jpeg"),
            ("data.csv", "text/csv"),
            (
                "sheet.xlsx",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            ),
            ("archive.tar.gz", "application/gzip"),
            ("dir/page.html", "text/html"),
        ] {
            assert_eq!(media_type_of_name(name), media_type, "{name:?}");
        }
        for unknown in [
            "README",
            ".txt",
            "trailing.",
            "file.unknown-extension",
            "a.txt.",
            "a.txt ",
            "",
        ] {
            assert_eq!(media_type_of_name(unknown), OCTET_STREAM, "{unknown:?}");
        }
    }

    #[test]
    fn an_id_is_its_position_from_one_and_reads_back_only_as_written() {
        assert_eq!(AttachmentId::at_index(0).to_string(), "att_1");
        assert_eq!(AttachmentId::at_index(41).position(), 42);
        assert_eq!("att_42".parse(), Ok(AttachmentId::at_index(41)));
        for bad in [
            "",
            "att_",
            "att_0",
            "att_01",
            "att_+1",
            "att_-1",
            "1",
            "ATT_1",
            "att_1 ",
            "att_99999999999",
        ] {
            assert_eq!(
                bad.parse::<AttachmentId>(),
                Err(InvalidAttachmentId),
                "{bad:?}"
            );
        }
        assert_eq!(AttachmentId::from_position(0), None);
    }

    #[test]
    fn the_etag_is_the_quoted_digest_of_stored_bytes_only() {
        let mut meta = AttachmentMeta {
            id: AttachmentId::at_index(0),
            filename: None,
            content_type: "text/plain".into(),
            size: 3,
            content_id: None,
            stored: true,
            sha256: Some(content_digest(b"abc")),
        };
        assert_eq!(
            meta.etag().as_deref(),
            Some("\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"")
        );
        meta.stored = false;
        assert_eq!(meta.etag(), None);
    }

    #[test]
    fn pieces_cover_the_size() {
        assert_eq!(piece_count(0), 0);
        assert_eq!(piece_count(1), 1);
        assert_eq!(piece_count(ATTACHMENT_PIECE_BYTES as u64), 1);
        assert_eq!(piece_count(ATTACHMENT_PIECE_BYTES as u64 + 1), 2);
        assert_eq!(piece_count(25 * 1024 * 1024), 100);
    }

    #[test]
    fn a_download_keeps_a_valid_media_type_and_serves_anything_else_as_octets() {
        for valid in [
            "application/pdf",
            "text/plain; charset=utf-8",
            "text/plain;charset=\"utf-8\"",
            "multipart/mixed; boundary=\"a b\\\"c\"",
            "application/vnd.ms-excel",
        ] {
            assert_eq!(download_content_type(valid), valid);
        }
        for garbage in [
            "",
            "pdf",
            "text/",
            "/plain",
            "text/plain; charset",
            "text/plain; =x",
            "text / plain",
            "text/plain\r\nX-Evil: 1",
            "text/plain; name=\"unterminated",
            "tëxt/plain",
            "text/plain; a=\"\0\"",
            "text/plain; a=\"x;y\"",
        ] {
            assert_eq!(download_content_type(garbage), OCTET_STREAM, "{garbage:?}");
        }
    }

    #[test]
    fn a_saved_name_has_no_path_control_or_reordering_mark() {
        assert_eq!(download_filename(Some("../../etc/passwd")), "passwd");
        assert_eq!(download_filename(Some("C:\\Windows\\evil.exe")), "evil.exe");
        assert_eq!(download_filename(Some("a\0b.txt")), "ab.txt");
        assert_eq!(download_filename(Some("a\u{fffd}b.txt")), "ab.txt");
        assert_eq!(
            download_filename(Some("invoice\u{202e}fdp.exe")),
            "invoicefdp.exe"
        );
        assert_eq!(download_filename(Some("..hidden")), "hidden");
        assert_eq!(download_filename(Some("dir/")), "attachment");
        assert_eq!(download_filename(Some("\u{2066}\u{2069}")), "attachment");
        assert_eq!(download_filename(None), "attachment");
        assert_eq!(download_filename(Some("日本語.pdf")), "日本語.pdf");
        let long = download_filename(Some(&"é".repeat(10_000)));
        assert!(long.len() <= MAX_DOWNLOAD_NAME_BYTES);
        assert_eq!(long, "é".repeat(MAX_DOWNLOAD_NAME_BYTES / 2));
        let invoice = download_filename(Some(&format!("{}.pdf", "a".repeat(300))));
        assert_eq!(
            invoice,
            format!("{}.pdf", "a".repeat(MAX_DOWNLOAD_NAME_BYTES - 4))
        );
        let no_extension =
            download_filename(Some(&format!("{}.{}", "a".repeat(300), "b".repeat(40))));
        assert_eq!(no_extension, "a".repeat(MAX_DOWNLOAD_NAME_BYTES));
    }

    #[test]
    fn the_disposition_is_an_attachment_named_in_rfc_8187_encoding() {
        assert_eq!(
            content_disposition(Some("report 2026.pdf")),
            "attachment; filename*=UTF-8''report%202026.pdf"
        );
        assert_eq!(
            content_disposition(Some("é\";x=y.txt")),
            "attachment; filename*=UTF-8''%C3%A9%22%3Bx%3Dy.txt"
        );
    }

    proptest! {
        #[test]
        fn every_name_given_saves_as_a_header_safe_single_segment(name in any::<String>()) {
            let saved = download_filename(Some(&name));
            prop_assert!(!saved.is_empty() && saved.len() <= MAX_DOWNLOAD_NAME_BYTES);
            prop_assert!(!saved.contains(['/', '\\']));
            prop_assert!(!saved.chars().any(hidden_or_control));
            prop_assert!(!saved.starts_with('.'));
            let disposition = content_disposition(Some(&name));
            prop_assert!(disposition.bytes().all(|b| (b'!'..=b'~').contains(&b) || b == b' '));
        }

        #[test]
        fn every_served_type_is_visible_ascii_without_line_breaks(stored in any::<String>()) {
            let served = download_content_type(&stored);
            prop_assert!(served.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)));
        }

        #[test]
        fn every_type_of_a_name_is_a_media_type(name in any::<String>(), extension in "[a-z0-9]{1,6}") {
            prop_assert!(is_media_type(media_type_of_name(&name)));
            let named = format!("{name}.{extension}");
            prop_assert!(is_media_type(media_type_of_name(&named)));
        }

        #[test]
        fn every_id_reads_back(position in 1u32..) {
            let id = AttachmentId::from_position(position).expect("positive");
            prop_assert_eq!(id.to_string().parse::<AttachmentId>(), Ok(id));
        }
    }

    #[test]
    fn the_largest_body_holds_a_send_at_every_limit() {
        let attachments_in_base64 = MAX_OUTBOUND_ATTACHMENT_BYTES.div_ceil(3) * 4;
        assert!(
            attachments_in_base64 + crate::mail::email::MAX_BODY_TEXT_BYTES + 64 * 1024
                <= MAX_REQUEST_BODY_BYTES
        );
    }
}
