//! The server's log: lines to stdout through a writer thread, text or JSON (`LOG_FORMAT`),
//! filtered by `RUST_LOG`.

use std::io::IsTerminal;

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Logs go to stdout through a writer thread, so request workers never wait on the write. The
/// writer blocks rather than drops when it falls behind: no log line is lost. It writes what has
/// queued up in one system call and flushes whenever the queue runs dry, so no line waits for
/// more to come (one write per line cost a fifth of a database read's CPU, decision 0035).
/// Dropping the returned guard flushes what is still queued.
pub fn init(format: LogFormat) -> tracing_appender::non_blocking::WorkerGuard {
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .finish(std::io::BufWriter::with_capacity(
            64 * 1024,
            std::io::stdout(),
        ));
    // PostgreSQL NOTICEs (e.g. "relation already exists, skipping" at every migration check) are
    // chatter, not events, and so are the MCP SDK's three lines for every stateless request (its
    // service started, its input ended, its service ended); RUST_LOG can still ask for them.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,tokio_postgres::connection=warn,rmcp=warn"));
    // Use cases, store and chain calls are debug spans: free at `info`, and at `debug` each one
    // logs its duration when it closes, so a request's lines show where its time went.
    let span_events = match filter.max_level_hint() {
        Some(level) if level >= LevelFilter::DEBUG => FmtSpan::CLOSE,
        _ => FmtSpan::NONE,
    };
    // Colour codes only help a person at a terminal; in a file or a log collector they are noise.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(span_events)
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        .with_writer(writer);
    match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .init(),
        LogFormat::Text => builder.init(),
    }
    guard
}
