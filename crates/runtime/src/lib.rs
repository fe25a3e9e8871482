//! The composition root of agent-runtime: typed configuration from the environment, the wiring
//! of adapters to use cases, the supervisor of background jobs and the list of them. The server
//! binary starts the jobs and the HTTP transport; `agentctl` uses the wiring without either.

pub mod config;
pub mod job_list;
pub mod jobs;
pub mod logging;
mod timer;
pub mod wiring;
