//! Where the attachments live: `s3://bucket/optional/prefix`, the form the AWS tools print.

use object_store::path::Path;

/// Why a store could not be made; no text carries a credential or echoes the location whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum S3ConfigError {
    #[error("the attachment store's location must be s3://bucket or s3://bucket/prefix")]
    NotS3,
    #[error("the attachment store's location names no bucket")]
    NoBucket,
    #[error("the attachment store's bucket name may hold only letters, digits, '.', '-' and '_'")]
    InvalidBucket,
    #[error("the attachment store's prefix is not a valid object path: {0}")]
    InvalidPrefix(String),
    #[error("the S3 client could not be configured: {0}")]
    Client(String),
}

/// A parsed location: the bucket, and the path every key starts with (empty for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    pub bucket: String,
    pub prefix: Path,
}

impl Location {
    pub fn parse(location: &str) -> Result<Self, S3ConfigError> {
        let rest = location.strip_prefix("s3://").ok_or(S3ConfigError::NotS3)?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(S3ConfigError::NoBucket);
        }
        // Anything else (`user@`, `:port`, `?query`) is not a bucket: refused rather than guessed.
        if !bucket
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'_'))
        {
            return Err(S3ConfigError::InvalidBucket);
        }
        let prefix = Path::parse(prefix.trim_end_matches('/'))
            .map_err(|error| S3ConfigError::InvalidPrefix(error.to_string()))?;
        Ok(Self {
            bucket: bucket.to_owned(),
            prefix,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_alone_has_no_prefix() {
        let location = Location::parse("s3://bucket").expect("valid");
        assert_eq!(location.bucket, "bucket");
        assert_eq!(location.prefix.as_ref(), "");
        assert_eq!(Location::parse("s3://bucket/"), Ok(location));
    }

    #[test]
    fn a_prefix_may_have_several_parts() {
        let location = Location::parse("s3://bucket/a/b").expect("valid");
        assert_eq!(location.bucket, "bucket");
        assert_eq!(location.prefix.as_ref(), "a/b");
        assert_eq!(Location::parse("s3://bucket/a/b/"), Ok(location));
    }

    #[test]
    fn other_schemes_are_refused() {
        assert_eq!(Location::parse("http://x"), Err(S3ConfigError::NotS3));
        assert_eq!(Location::parse("s3:/bucket"), Err(S3ConfigError::NotS3));
        assert_eq!(Location::parse("bucket"), Err(S3ConfigError::NotS3));
    }

    #[test]
    fn a_location_without_a_bucket_is_refused() {
        assert_eq!(Location::parse("s3://"), Err(S3ConfigError::NoBucket));
        assert_eq!(
            Location::parse("s3:///prefix"),
            Err(S3ConfigError::NoBucket)
        );
    }

    #[test]
    fn a_bucket_with_more_than_a_name_is_refused() {
        for location in [
            "s3://key:secret@bucket",
            "s3://bucket:9000",
            "s3://bucket?x=1",
        ] {
            assert_eq!(
                Location::parse(location),
                Err(S3ConfigError::InvalidBucket),
                "{location}"
            );
        }
    }

    #[test]
    fn a_prefix_with_an_empty_part_is_refused() {
        assert!(matches!(
            Location::parse("s3://bucket/a//b"),
            Err(S3ConfigError::InvalidPrefix(_))
        ));
    }
}
