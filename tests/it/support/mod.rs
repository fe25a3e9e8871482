//! What the black-box tests stand on, apart from the tests: the real binaries spawned against a
//! database of their own (`harness`), stand-ins for the providers' APIs and a chain node that
//! misbehaves on demand, and a PostgreSQL cluster a test may stop.

pub(crate) mod event_watch;
pub(crate) mod fake_http;
pub(crate) mod fake_mail_api;
pub(crate) mod fake_twilio_api;
pub(crate) mod faulty_node;
pub(crate) mod formation;
pub(crate) mod harness;
pub(crate) mod load;
pub(crate) mod private_pg;
pub(crate) mod process;
