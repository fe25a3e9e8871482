//! An S3-compatible server for tests: moto's, installed by `scripts/s3-tools.sh` (`S3_PYTHON`),
//! on a free loopback port. One server per test process, started by the first test that asks;
//! each `S3Server` is a fresh bucket on it, so tests run in parallel without seeing each other.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use uuid::Uuid;

/// What moto accepts: any key, any region.
pub const S3_ACCESS_KEY_ID: &str = "test";
pub const S3_SECRET_ACCESS_KEY: &str = "test";
pub const S3_REGION: &str = "us-east-1";

/// How long moto may take to start listening (its imports take a second or two).
const START_DEADLINE: Duration = Duration::from_secs(60);

/// Runs `python -m moto.server`'s main, ending the process when its standard input closes: the
/// server is shared by a test process and never dropped, so it ends when that process's end of
/// the pipe closes, however the process ends.
const WATCHED_SERVER: &str = "\
import os, sys, threading
def watch():
    sys.stdin.buffer.read()
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
from moto.server import main
main(sys.argv[1:])
";

/// The moto server of this process.
struct Moto {
    port: u16,
    /// Held so that the server's standard input stays open while this process lives.
    _stdin: ChildStdin,
    /// Never waited for: the server outlives every test, and ends with the process.
    _child: Child,
}

impl Moto {
    fn shared() -> &'static Moto {
        static MOTO: OnceLock<Moto> = OnceLock::new();
        MOTO.get_or_init(Moto::start)
    }

    fn start() -> Moto {
        let python = std::env::var("S3_PYTHON").unwrap_or_else(|_| {
            panic!(
                "S3_PYTHON is not set: run `export S3_PYTHON=$(scripts/s3-tools.sh)` \
                 (make test does) to install the S3 server of these tests"
            )
        });
        let port = free_port();
        let mut child = Command::new(&python)
            .args([
                "-c",
                WATCHED_SERVER,
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::piped())
            // Its log of every request, of no use to a test.
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("starting {python} -m moto.server: {error}"));
        let deadline = Instant::now() + START_DEADLINE;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().expect("moto's status") {
                panic!(
                    "moto exited before listening ({status}): run `$S3_PYTHON -m moto.server` \
                     to see why"
                );
            }
            assert!(
                Instant::now() < deadline,
                "moto did not listen on port {port} within {START_DEADLINE:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let stdin = child.stdin.take().expect("moto's standard input");
        Moto {
            port,
            _stdin: stdin,
            _child: child,
        }
    }

    /// Creates `bucket` with a plain `PUT /bucket`: moto needs no signature for it.
    fn create_bucket(&self, bucket: &str) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connecting to moto");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("read timeout");
        write!(
            stream,
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n",
            self.port
        )
        .expect("sending the bucket's creation");
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .expect("moto's answer to the bucket's creation");
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "moto refused to create bucket {bucket}: {answer}"
        );
    }
}

/// A fresh bucket on this process's moto server.
pub struct S3Server {
    port: u16,
    bucket: String,
}

impl S3Server {
    /// A new bucket, on the process's server (started if it is not yet).
    pub fn start() -> S3Server {
        let moto = Moto::shared();
        let bucket = format!("test-{}", Uuid::now_v7().simple());
        moto.create_bucket(&bucket);
        S3Server {
            port: moto.port,
            bucket,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// `s3://bucket/prefix`, or `s3://bucket` for an empty prefix.
    pub fn location(&self, prefix: &str) -> String {
        if prefix.is_empty() {
            format!("s3://{}", self.bucket)
        } else {
            format!("s3://{}/{prefix}", self.bucket)
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}
