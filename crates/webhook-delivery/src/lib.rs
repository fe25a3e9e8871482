//! Posts an agent's events to its webhook receivers (decision 0058): one attempt of one delivery,
//! signed per Standard Webhooks, to an address checked at that very attempt, its answer read no
//! further than a bound. It implements `ports::WebhookPoster`; retries and their schedule are the
//! queue worker's.

mod poster;
mod retry_after;
mod target;

pub use poster::{HttpWebhookPoster, InvalidPosterSettings, PosterSettings};
