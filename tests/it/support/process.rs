//! Child processes a test runs to their end (Python and Node clients, a browser's scenarios):
//! their output read as it comes, so that one stopped at its deadline still shows how far it got.

use std::process::{Output, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

/// Runs `command` to its end within `deadline`, its output collected; past the deadline it is
/// killed and the panic shows what it wrote until then (a journey's progress says where it stopped).
pub(crate) async fn run(command: Command, deadline: Duration) -> Output {
    run_within(command, deadline)
        .await
        .unwrap_or_else(|unfinished| panic!("{unfinished}"))
}

/// `run`, with a run past its deadline answered as what it wrote until then, for a caller that
/// has more to tell about it.
pub(crate) async fn run_within(mut command: Command, deadline: Duration) -> Result<Output, String> {
    let described = format!("{command:?}");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .unwrap_or_else(|error| panic!("{described}: {error}"));
    let stdout = Collected::from(child.stdout.take().expect("stdout"));
    let stderr = Collected::from(child.stderr.take().expect("stderr"));
    let Ok(status) = tokio::time::timeout(deadline, child.wait()).await else {
        let _ = child.kill().await;
        // A grandchild may hold the pipes open: what came so far is enough.
        tokio::time::sleep(Duration::from_millis(200)).await;
        return Err(format!(
            "{described} did not end within {deadline:?}:\n{}\n{}",
            String::from_utf8_lossy(&stdout.so_far()),
            String::from_utf8_lossy(&stderr.so_far())
        ));
    };
    Ok(Output {
        status: status.expect("its status"),
        stdout: stdout.all().await,
        stderr: stderr.all().await,
    })
}

/// The bytes of a child's pipe, read as they come.
struct Collected {
    bytes: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reading: tokio::task::JoinHandle<()>,
}

impl Collected {
    fn from(mut pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static) -> Collected {
        let bytes = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = bytes.clone();
        let reading = tokio::spawn(async move {
            let mut chunk = [0u8; 8192];
            while let Ok(read @ 1..) = pipe.read(&mut chunk).await {
                into.lock()
                    .expect("the buffer")
                    .extend_from_slice(&chunk[..read]);
            }
        });
        Collected { bytes, reading }
    }

    fn so_far(&self) -> Vec<u8> {
        self.bytes.lock().expect("the buffer").clone()
    }

    async fn all(self) -> Vec<u8> {
        let Collected { bytes, reading } = self;
        reading.await.expect("the pipe's reader");
        let all = bytes.lock().expect("the buffer").clone();
        all
    }
}
