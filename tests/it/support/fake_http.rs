//! What the stand-ins for providers' HTTP APIs share: a server on a free local port that answers
//! every request through one function of the stand-in's state.

use std::future::Future;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A stand-in's server: its state, shared with the requests it answers, and the task accepting
/// connections, which ends when the stand-in is dropped.
pub struct FakeServer<S> {
    state: Arc<S>,
    accepting: JoinHandle<()>,
}

impl<S: Send + Sync + 'static> FakeServer<S> {
    /// Serves `answer(state, request)` on a free port of 127.0.0.1; returns the server's base URL
    /// and the server.
    pub async fn start<F, Fut, E>(state: S, answer: F) -> (String, Self)
    where
        F: Fn(Arc<S>, Request<Incoming>) -> Fut + Copy + Send + Sync + 'static,
        Fut: Future<Output = Result<Response<Full<Bytes>>, E>> + Send + 'static,
        E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let state = Arc::new(state);
        let serving = state.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = serving.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(state.clone(), request));
                    // A connection cut by a fault or by the client ends here; nothing to report.
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        (url, Self { state, accepting })
    }

    pub fn state(&self) -> &S {
        &self.state
    }
}

impl<S> Drop for FakeServer<S> {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}
