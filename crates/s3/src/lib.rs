//! Email attachment bytes in S3 or an S3-compatible store, through object_store: one object per
//! attachment, `{prefix}/{message}/{position}`, so that a message's bytes are removed by listing
//! its folder, and read a piece at a time by ranged GETs, so that a download holds one piece.

mod answers;
mod location;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use domain::{AttachmentId, EmailMessageId, ATTACHMENT_PIECE_BYTES};
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::client::{HttpError, HttpErrorKind};
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
};
use ports::{AttachmentContent, AttachmentObjects, StoreError};

use answers::{sources, ErrorAnswer, ErrorStatusConnector};
use location::Location;

pub use location::S3ConfigError;

/// The longest one request may take, its body included: a piece is 256 KiB, an attachment put
/// whole at most what inbound mail keeps (25 MiB by default).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest a connection may take to open: past it the store is as good as down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The library's tries again after a transient failure, bounded in number and time so that a
/// caller waits seconds, not the library's default of minutes, for an unavailable store.
fn retry_config() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: 3,
        retry_timeout: Duration::from_secs(10),
    }
}

/// What a test's S3-compatible server is reached with, where the AWS variables are not read.
pub struct S3Settings {
    /// `http://host:port` (plain HTTP is allowed for it) or `https://…`.
    pub endpoint: String,
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: String,
}

/// `ports::AttachmentObjects` and `ports::AttachmentContent` on one bucket (and prefix).
pub struct S3AttachmentStore {
    store: AmazonS3,
    prefix: Path,
}

impl fmt::Debug for S3AttachmentStore {
    /// The bucket and prefix only: the client holds the credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3AttachmentStore")
            .field("store", &format_args!("{}", self.store))
            .field("prefix", &self.prefix.as_ref())
            .finish()
    }
}

impl S3AttachmentStore {
    /// The store at `location` (`s3://bucket/optional/prefix`), reached as the usual AWS
    /// variables say: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
    /// `AWS_REGION` or `AWS_DEFAULT_REGION`, and `AWS_ENDPOINT_URL` for an S3-compatible server
    /// (without keys, the instance's or container's credentials).
    pub fn from_env(location: &str) -> Result<Self, S3ConfigError> {
        Self::build(AmazonS3Builder::from_env(), location)
    }

    /// The store at `location` on the server `settings` name, whatever the environment says.
    pub fn from_settings(location: &str, settings: S3Settings) -> Result<Self, S3ConfigError> {
        let builder = AmazonS3Builder::new()
            .with_endpoint(settings.endpoint)
            .with_region(settings.region)
            .with_access_key_id(settings.access_key_id)
            .with_secret_access_key(settings.secret_access_key);
        Self::build(builder, location)
    }

    fn build(builder: AmazonS3Builder, location: &str) -> Result<Self, S3ConfigError> {
        let location = Location::parse(location)?;
        // An S3-compatible server on a private network is often spoken to in plain HTTP: its
        // endpoint saying so is taken as leave to.
        let plain_http = builder
            .get_config_value(&AmazonS3ConfigKey::S3Endpoint)
            .or_else(|| builder.get_config_value(&AmazonS3ConfigKey::Endpoint))
            .is_some_and(|endpoint| {
                endpoint
                    .get(..7)
                    .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
            });
        let options = ClientOptions::new()
            .with_timeout(REQUEST_TIMEOUT)
            .with_connect_timeout(CONNECT_TIMEOUT)
            .with_allow_http(plain_http);
        let store = builder
            .with_bucket_name(location.bucket)
            .with_client_options(options)
            .with_retry(retry_config())
            .with_http_connector(ErrorStatusConnector)
            .build()
            .map_err(|error| S3ConfigError::Client(error.to_string()))?;
        Ok(Self {
            store,
            prefix: location.prefix,
        })
    }

    /// The folder of a message's attachments.
    fn folder(&self, message: EmailMessageId) -> Path {
        self.prefix.clone().join(message.to_string())
    }

    fn key(&self, message: EmailMessageId, attachment: AttachmentId) -> Path {
        self.folder(message).join(attachment.position().to_string())
    }
}

#[async_trait]
impl AttachmentContent for S3AttachmentStore {
    async fn piece(
        &self,
        message: EmailMessageId,
        attachment: AttachmentId,
        index: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let piece = ATTACHMENT_PIECE_BYTES as u64;
        let Some((start, end)) = index
            .checked_mul(piece)
            .and_then(|start| Some((start, start.checked_add(piece)?)))
        else {
            return Ok(None);
        };
        let key = self.key(message, attachment);
        // A range ending past the object is cut to it by the store; one starting at or past its
        // end is refused (416), as is any range of an empty object.
        match self.store.get_range(&key, start..end).await {
            Ok(bytes) => Ok(Some(bytes.into())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error)
                if ErrorAnswer::of(&error)
                    .is_some_and(|answer| answer.0 == ErrorAnswer::RANGE_NOT_SATISFIABLE) =>
            {
                Ok(None)
            }
            Err(error) => Err(store_error(&format!("reading {key}"), &error)),
        }
    }
}

#[async_trait]
impl AttachmentObjects for S3AttachmentStore {
    async fn put(
        &self,
        message: EmailMessageId,
        attachment: AttachmentId,
        bytes: Arc<[u8]>,
    ) -> Result<(), StoreError> {
        let key = self.key(message, attachment);
        let payload = PutPayload::from(Bytes::from_owner(bytes));
        self.store
            .put(&key, payload)
            .await
            .map(drop)
            .map_err(|error| store_error(&format!("putting {key}"), &error))
    }

    async fn remove(&self, message: EmailMessageId) -> Result<(), StoreError> {
        let folder = self.folder(message);
        let keys = self
            .store
            .list(Some(&folder))
            .map_ok(|object| object.location)
            .boxed();
        self.store
            .delete_stream(keys)
            .try_for_each(|_| std::future::ready(Ok(())))
            .await
            .map_err(|error| store_error(&format!("removing {folder}/"), &error))
    }
}

/// What a failure of `what` tells the caller: `ObjectStoreUnavailable` for what may pass (no connection, a
/// timeout, the store's own failure), `Internal` for the rest. Built from the failure's kind and
/// status, never from an answer's body.
fn store_error(what: &str, error: &object_store::Error) -> StoreError {
    if let Some(answer) = ErrorAnswer::of(error) {
        return if answer.transient() {
            StoreError::ObjectStoreUnavailable(format!("{what}: {answer}"))
        } else {
            StoreError::Internal(format!("{what}: {answer}"))
        };
    }
    if let Some(http) = sources(error).find_map(|source| source.downcast_ref::<HttpError>()) {
        // The transport's errors carry no URL or header (the library strips the URL).
        let mut causes: Vec<String> = sources(http).map(ToString::to_string).collect();
        // reqwest says some causes twice over.
        causes.dedup();
        let causes = causes.join(": ");
        return match http.kind() {
            HttpErrorKind::Connect
            | HttpErrorKind::Request
            | HttpErrorKind::Timeout
            | HttpErrorKind::Interrupted => {
                StoreError::ObjectStoreUnavailable(format!("{what}: {causes}"))
            }
            _ => StoreError::Internal(format!("{what}: {causes}")),
        };
    }
    // Of the error answers only 404 and 403 come here as the library reports them, with their
    // body in the text: they are told by status alone. The rest (a redirect, a listing that does
    // not parse) carry no body.
    match error {
        object_store::Error::NotFound { .. } => StoreError::Internal(format!(
            "{what}: the store answered 404 (is the bucket there?)"
        )),
        object_store::Error::PermissionDenied { .. } => {
            StoreError::Internal(format!("{what}: the store answered 403"))
        }
        other => StoreError::Internal(format!("{what}: {other}")),
    }
}
