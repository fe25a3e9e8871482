//! Black-box tests: the real binaries, real PostgreSQL, plain HTTP.

mod auth;
mod chain;
mod cli;
mod exactly_once;
mod faulty_node;
mod harness;
mod me;
mod onchain;
mod ops;
mod protection;
mod rotation;
mod routing;
mod send_rules;
mod walkthrough;
mod wallet;
