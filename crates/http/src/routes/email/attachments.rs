//! An attachment of a message of the inbox, streamed to its reader.

use std::time::Duration;

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{self, Bytes, Path};
use actix_web::{HttpRequest, HttpResponse};
use domain::{content_disposition, download_content_type};
use futures_util::TryStreamExt;
use tokio::sync::mpsc;

use crate::auth::AuthenticatedAgent;
use crate::errors::{ApiError, ErrorBody};
use crate::state::ApiState;

/// An attachment of a message of the agent's inbox: its bytes, streamed.
///
/// Served with the stored `Content-Type` (or `application/octet-stream` when absent or not a
/// valid media type), as an attachment to save (`Content-Disposition` with the name made safe:
/// its last path segment, without control characters or marks that reorder text), never to
/// render (`X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`). The `ETag` is
/// the SHA-256 of the bytes; `If-None-Match` with it answers 304.
#[utoipa::path(get, path = "/v1/email/messages/{message_id}/attachments/{attachment_id}",
    tag = "email", operation_id = "get_email_attachment",
    security(("HTTPBearer" = [])),
    params(
        ("message_id" = String, Path, description = "A message of the agent's inbox"),
        ("attachment_id" = String, Path, description = "The `id` of one of its `attachments`, e.g. `att_1`"),
        ("If-None-Match" = Option<String>, Header, description = "An `ETag` this attachment was served with"),
    ),
    responses(
        // Any media type, as stored; the schema of `Value` (`{}`) admits whatever bytes it holds.
        (status = 200, description = "The attachment's bytes, typed as stored", content_type = "*/*", body = serde_json::Value,
            headers(
                ("Content-Type" = String, description = "The stored type when it is a valid media type (any, e.g. `text/plain` or `Y/c`), else `application/octet-stream`"),
                ("Content-Disposition" = String, description = "`attachment; filename*=UTF-8''...`"),
                ("Content-Length" = u64, description = "The attachment's size"),
                ("ETag" = String, description = "The SHA-256 of the bytes, quoted"),
                ("X-Content-Type-Options" = String, description = "`nosniff`"),
            )),
        (status = 304, description = "`If-None-Match` named the current `ETag`"),
        (status = 400, description = "No inbox provisioned", body = ErrorBody),
        (status = 401, description = "Invalid agent key", body = ErrorBody),
        (status = 404, description = "No such message in the agent's inbox, or no such attachment in it", body = ErrorBody),
        (status = 410, description = "The attachment is listed but its bytes were not stored (`stored: false`)", body = ErrorBody),
        (status = 429, description = "The agent has `EMAIL_ATTACHMENT_DOWNLOADS_PER_AGENT` (8) downloads under way; retry after `Retry-After`", body = ErrorBody),
        (status = 503, description = "The database, or the object store that keeps attachments, is unavailable", body = ErrorBody),
    ))]
pub async fn attachment(
    request: HttpRequest,
    state: web::Data<ApiState>,
    agent: AuthenticatedAgent,
    ids: Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (message_id, attachment_id) = ids.into_inner();
    let download = state
        .services
        .mail
        .mailbox
        .attachment(&agent.profile, &message_id, &attachment_id)
        .await?;
    let etag = download.meta.etag().unwrap_or_default();
    // If-None-Match compares weakly: `W/"…"` names the same bytes as `"…"`.
    let not_modified = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|tags| {
            tags.split(',')
                .map(str::trim)
                .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
        });
    if not_modified {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .finish());
    }
    let content_type = download_content_type(&download.meta.content_type);
    let content_type = HeaderValue::from_str(content_type)
        .unwrap_or(HeaderValue::from_static(domain::attachments::OCTET_STREAM));
    let disposition = content_disposition(download.meta.filename.as_deref());
    let size = download.meta.size;
    let (buffer, taken) = mpsc::channel(1);
    actix_web::rt::spawn(pump_pieces(download, buffer));
    let pieces = futures_util::stream::unfold(taken, |mut taken| async move {
        taken
            .recv()
            .await
            .map(|piece| (Ok::<_, std::convert::Infallible>(piece), taken))
    });
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::CONTENT_DISPOSITION, disposition))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, "sandbox"))
        .insert_header((header::ETAG, etag))
        .no_chunking(size)
        .streaming(pieces))
}

/// How long a download waits for its reader to take a piece before it is cut: a client that
/// stops reading holds its place among the agent's downloads no longer.
const DOWNLOAD_STALL: Duration = Duration::from_secs(60);

/// Reads the attachment's pieces into the response's buffer, one ahead of its reader; ends early
/// (the connection closes short of `Content-Length`) when the store fails or the reader takes
/// nothing for `DOWNLOAD_STALL`. The download's place goes with it.
async fn pump_pieces(download: app::AttachmentDownload, buffer: mpsc::Sender<Bytes>) {
    let mut pieces = std::pin::pin!(download.pieces());
    loop {
        let piece = match pieces.try_next().await {
            Ok(Some(piece)) => Bytes::from(piece),
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "an attachment's download ended early");
                return;
            }
        };
        match tokio::time::timeout(DOWNLOAD_STALL, buffer.send(piece)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return,
            Err(_) => {
                tracing::info!(
                    stalled_secs = DOWNLOAD_STALL.as_secs(),
                    "an attachment's reader took nothing; the download is cut"
                );
                return;
            }
        }
    }
}
