//! One read of a request body for every way in: at most so many bytes, within a deadline, and,
//! for an agent's request, each byte counted against the agent's share of the bodies being read
//! on the instance. Each way in words the refusal in its own shape (a 422 on REST, a JSON-RPC
//! answer's status on MCP, a page on the console).

use std::fmt::Display;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::{self, HeaderMap};
use actix_web::web::{Bytes, BytesMut};
use app::{LongLived, LongLivedKind};
use domain::AgentId;
use futures_util::{Stream, StreamExt};

/// How much of a body is read, and how long its sender has to send it once the request's head
/// arrived: a body that trickles in holds its memory and a worker's attention no longer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    pub max_bytes: usize,
    pub within: Duration,
}

/// The agent whose share of the instance's bodies being read a body counts against.
#[derive(Clone)]
pub struct BodyShare {
    pub registry: Arc<LongLived>,
    pub agent: AgentId,
}

/// Why a body was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyRefused {
    /// Declared or found larger than the limit; a declared one is refused before it is read.
    #[error("body must be at most {max_bytes} bytes")]
    TooLarge { max_bytes: usize },
    /// The connection failed to deliver it.
    #[error("could not read the request body: {0}")]
    Unreadable(String),
    /// It would take the agent's bodies being read past their share.
    #[error("the agent's request bodies being read are at their share")]
    OverShare,
    /// It did not arrive in time.
    #[error("The request body did not arrive within {} s", within.as_secs())]
    Late { within: Duration },
}

/// The body's length as the request's `Content-Length` declares it.
pub fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Reads `payload`, whose length `declared` says (when it says), within `limits`; with a `share`,
/// every byte held counts against the agent's share until the returned bytes' place is let go,
/// which is when this returns: the share bounds bodies in flight, not bodies handed on.
pub async fn read_body<E: Display>(
    payload: impl Stream<Item = Result<Bytes, E>> + Unpin,
    declared: Option<usize>,
    limits: BodyLimits,
    share: Option<BodyShare>,
) -> Result<Bytes, BodyRefused> {
    let max_bytes = limits.max_bytes;
    if declared.is_some_and(|length| length > max_bytes) {
        return Err(BodyRefused::TooLarge { max_bytes });
    }
    let mut place = match share {
        Some(share) => Some(
            share
                .registry
                .enter_weighing(
                    share.agent,
                    LongLivedKind::RequestBodyBytes,
                    declared.unwrap_or(0),
                )
                .ok_or(BodyRefused::OverShare)?,
        ),
        None => None,
    };
    let reserved = place.as_ref().map_or(0, |place| place.weight());
    let read = async move {
        let mut payload = payload;
        let mut body = BytesMut::with_capacity(reserved.min(max_bytes));
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|error| BodyRefused::Unreadable(error.to_string()))?;
            let length = body.len() + chunk.len();
            if length > max_bytes {
                return Err(BodyRefused::TooLarge { max_bytes });
            }
            if let Some(place) = place.as_mut() {
                if length > place.weight() && !place.grow(length - place.weight()) {
                    return Err(BodyRefused::OverShare);
                }
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    };
    tokio::time::timeout(limits.within, read)
        .await
        .unwrap_or(Err(BodyRefused::Late {
            within: limits.within,
        }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::LongLivedCaps;
    use futures_util::stream;
    use uuid::Uuid;

    const LIMITS: BodyLimits = BodyLimits {
        max_bytes: 10,
        within: Duration::from_secs(1),
    };

    fn chunks(parts: &[&'static [u8]]) -> impl Stream<Item = Result<Bytes, String>> + Unpin {
        stream::iter(
            parts
                .iter()
                .map(|part| Ok(Bytes::from_static(part)))
                .collect::<Vec<_>>(),
        )
    }

    fn share(bytes: usize) -> BodyShare {
        BodyShare {
            registry: LongLived::new(LongLivedCaps::one_each(bytes)),
            agent: AgentId(Uuid::now_v7()),
        }
    }

    #[tokio::test]
    async fn a_body_within_its_limits_is_read_whole() {
        let body = read_body(
            chunks(&[b"hello", b" you"]),
            Some(9),
            LIMITS,
            Some(share(64)),
        )
        .await;
        assert_eq!(body, Ok(Bytes::from_static(b"hello you")));
    }

    #[tokio::test]
    async fn a_body_declared_or_found_too_large_is_refused() {
        let refused = BodyRefused::TooLarge { max_bytes: 10 };
        assert_eq!(
            read_body(chunks(&[]), Some(11), LIMITS, None).await,
            Err(refused.clone())
        );
        assert_eq!(
            read_body(chunks(&[b"0123456", b"789ab"]), None, LIMITS, None).await,
            Err(refused)
        );
    }

    #[tokio::test]
    async fn a_body_past_the_agents_share_is_refused_and_its_bytes_given_back() {
        let share = share(8);
        let registry = share.registry.clone();
        assert_eq!(
            read_body(chunks(&[]), Some(9), LIMITS, Some(share.clone())).await,
            Err(BodyRefused::OverShare)
        );
        assert_eq!(
            read_body(
                chunks(&[b"0123", b"45678"]),
                None,
                LIMITS,
                Some(share.clone())
            )
            .await,
            Err(BodyRefused::OverShare)
        );
        let held: usize = registry.usage().iter().map(|usage| usage.held).sum();
        assert_eq!(held, 0);
        assert!(read_body(chunks(&[b"01234567"]), None, LIMITS, Some(share))
            .await
            .is_ok());
    }

    #[tokio::test]
    async fn a_failed_connection_is_unreadable() {
        let failing = stream::iter(vec![Err::<Bytes, _>("reset by peer")]);
        assert_eq!(
            read_body(failing, None, LIMITS, None).await,
            Err(BodyRefused::Unreadable("reset by peer".into()))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_does_not_arrive_in_time_is_late() {
        let trickle = stream::pending::<Result<Bytes, String>>();
        assert_eq!(
            read_body(trickle, None, LIMITS, None).await,
            Err(BodyRefused::Late {
                within: Duration::from_secs(1)
            })
        );
    }
}
