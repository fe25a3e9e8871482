//! Black-box tests: the real binaries, real PostgreSQL, plain HTTP.

mod auth;
mod chain;
mod cli;
mod database_outage;
mod docs_page;
mod email;
mod exactly_once;
mod fake_http;
mod fake_mail_api;
mod fake_twilio_api;
mod faulty_node;
mod harness;
mod me;
mod onchain;
mod ops;
mod outages;
mod private_pg;
mod protection;
mod rotation;
mod routing;
mod send_rules;
mod sms;
mod stuck_intents;
mod tls;
mod walkthrough;
mod wallet;
