//! Configuration and wiring shared by the server and `agentctl`: the only place where adapters
//! meet the use cases.

pub mod api_page;
pub mod config;
pub mod wiring;
