//! The composition root of agent-runtime: typed configuration from the environment, the wiring
//! of adapters to use cases, and the supervisor of background jobs. The server binary adds the
//! HTTP transport on top; `agentctl` uses it without one.

pub mod config;
pub mod jobs;
mod timer;
pub mod wiring;
