//! Black-box tests: the real binaries, real PostgreSQL, plain HTTP.

mod auth;
mod cli;
mod harness;
mod me;
mod ops;
mod routing;
mod wallet;
