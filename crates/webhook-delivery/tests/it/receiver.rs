//! A webhook receiver on a local port, written on plain TCP so that what reaches it is exactly
//! what was sent: it counts the connections it accepts, records each request, answers as told,
//! and reports how far it got writing an answer.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::mpsc;

/// How long a test waits for something the receiver should see before failing.
const PATIENCE: Duration = Duration::from_secs(10);

/// The socket's send buffer, kept small so that an answer the client stops reading blocks the
/// receiver's writes instead of vanishing into kernel buffers.
const SEND_BUFFER_BYTES: u32 = 64 * 1024;

#[derive(Debug)]
pub struct Recorded {
    pub method: String,
    pub target: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

#[derive(Debug, Clone)]
pub enum Reply {
    Answer {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    },
    /// Reads the request, then says nothing until the client leaves.
    Silence,
}

impl Reply {
    pub fn status(status: u16) -> Self {
        Self::Answer {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }
}

/// How far the writing of an answer's body got.
#[derive(Debug, Clone, Copy)]
pub struct Written {
    pub bytes: usize,
    /// The whole body was written.
    pub finished: bool,
}

pub struct Receiver {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: mpsc::UnboundedReceiver<Recorded>,
    writes: mpsc::UnboundedReceiver<Written>,
}

impl Receiver {
    /// On a free port of 127.0.0.1.
    pub async fn start(reply: Reply) -> Self {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), reply)
            .await
            .expect("a listener on 127.0.0.1")
    }

    pub async fn start_on(addr: SocketAddr, reply: Reply) -> std::io::Result<Self> {
        let socket = match addr {
            SocketAddr::V4(_) => TcpSocket::new_v4()?,
            SocketAddr::V6(_) => TcpSocket::new_v6()?,
        };
        // Accepted connections inherit the listener's buffer size.
        socket.set_send_buffer_size(SEND_BUFFER_BYTES)?;
        socket.bind(addr)?;
        let listener = socket.listen(16)?;
        let addr = listener.local_addr()?;
        let connections = Arc::new(AtomicUsize::new(0));
        let (request_tx, requests) = mpsc::unbounded_channel();
        let (write_tx, writes) = mpsc::unbounded_channel();
        let counted = connections.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(
                    stream,
                    reply.clone(),
                    request_tx.clone(),
                    write_tx.clone(),
                ));
            }
        });
        Ok(Self {
            addr,
            connections,
            requests,
            writes,
        })
    }

    /// `http://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub async fn next_request(&mut self) -> Recorded {
        tokio::time::timeout(PATIENCE, self.requests.recv())
            .await
            .expect("a request in time")
            .expect("the receiver runs")
    }

    /// A request recorded already, if any.
    pub fn request_so_far(&mut self) -> Option<Recorded> {
        self.requests.try_recv().ok()
    }

    pub async fn next_write(&mut self) -> Written {
        tokio::time::timeout(PATIENCE, self.writes.recv())
            .await
            .expect("the answer's writing to end in time")
            .expect("the receiver runs")
    }
}

async fn serve(
    mut stream: TcpStream,
    reply: Reply,
    requests: mpsc::UnboundedSender<Recorded>,
    writes: mpsc::UnboundedSender<Written>,
) {
    // Connections are kept open between requests, as HTTP/1.1 receivers do, so a client that
    // reused one would be seen to.
    while let Some(request) = read_request(&mut stream).await {
        let _ = requests.send(request);
        match &reply {
            Reply::Silence => {
                let mut sink = [0; 1024];
                while matches!(stream.read(&mut sink).await, Ok(read) if read > 0) {}
                return;
            }
            Reply::Answer {
                status,
                headers,
                body,
            } => {
                let mut head = format!(
                    "HTTP/1.1 {status} Answer\r\ncontent-length: {}\r\n",
                    body.len()
                );
                for (name, value) in headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let mut written = Written {
                    bytes: 0,
                    finished: true,
                };
                for chunk in body.chunks(16 * 1024) {
                    if stream.write_all(chunk).await.is_err() {
                        written.finished = false;
                        break;
                    }
                    written.bytes += chunk.len();
                }
                let _ = writes.send(written);
            }
        }
    }
}

/// One HTTP/1.1 request with a `content-length` body (what the poster sends).
async fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let mut piece = [0; 4096];
        let read = stream.read(&mut piece).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&piece[..read]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let target = request_line.next()?.to_owned();
    let mut headers = HeaderMap::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        headers.append(
            HeaderName::from_bytes(name.trim().as_bytes()).ok()?,
            HeaderValue::from_str(value.trim()).ok()?,
        );
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|value| value.to_str().ok()?.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let mut piece = [0; 4096];
        let read = stream.read(&mut piece).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&piece[..read]);
    }
    Some(Recorded {
        method,
        target,
        headers,
        body,
    })
}
