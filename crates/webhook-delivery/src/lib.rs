//! Posts an agent's events to its webhook receivers (decision 0058): one attempt of one delivery,
//! signed per Standard Webhooks, to an address checked at that very attempt, its answer read no
//! further than a bound. It implements `ports::WebhookPoster`; retries and their schedule are the
//! queue worker's. The requests of agents' x402 fetches (`ports::ResourceFetcher`) go out under
//! the same guard.

mod fetch;
mod poster;
mod retry_after;
mod target;

pub use fetch::{FetchSettings, HttpResourceFetcher, InvalidFetchSettings};
pub use poster::{HttpWebhookPoster, InvalidPosterSettings, PosterSettings};
