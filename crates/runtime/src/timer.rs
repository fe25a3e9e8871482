//! The `Timer` port on tokio's clock, for use cases that wait (the waits for codes).

use std::time::Duration;

use ports::{Timer, Wakeup};

pub struct TokioTimer;

impl Timer for TokioTimer {
    fn sleep(&self, duration: Duration) -> Wakeup {
        Box::pin(tokio::time::sleep(duration))
    }
}
