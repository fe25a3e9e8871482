//! Black-box tests: the real binaries, real PostgreSQL, plain HTTP.

mod auth;
mod chain;
mod cli;
mod harness;
mod me;
mod onchain;
mod ops;
mod rotation;
mod routing;
mod walkthrough;
mod wallet;
