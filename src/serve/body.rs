//! Response bodies written by blocking code (RocksDB iterators, WARC readers) and sent
//! while they are written: a bounded channel between the blocking thread and the
//! connection, so a slow client slows the producer instead of growing a buffer.

use std::io::{self, Write};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;

/// Bytes gathered before they are sent as one chunk.
const CHUNK: usize = 64 << 10;
/// Chunks in flight between producer and connection.
const IN_FLIGHT: usize = 4;

pub enum Message {
    Data(Bytes),
    /// The producer failed; before any data this becomes the response status.
    Failed(StatusCode, String),
}

/// A `Write` that sends what it is given to the response. Writing fails when the client
/// went away (`BrokenPipe`) or the request ran out of time (`TimedOut`), which is how a
/// producer learns to stop.
pub struct ChannelWriter {
    tx: mpsc::Sender<Message>,
    buffer: Vec<u8>,
    deadline: Instant,
}

impl ChannelWriter {
    fn send_buffer(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        if Instant::now() > self.deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request ran out of time",
            ));
        }
        let data = Bytes::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(CHUNK),
        ));
        self.tx
            .blocking_send(Message::Data(data))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
    }

    /// Sends a failure after (or instead of) the data written so far.
    pub fn fail(&mut self, status: StatusCode, message: String) {
        let _ = self.send_buffer();
        let _ = self.tx.blocking_send(Message::Failed(status, message));
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= CHUNK {
            self.send_buffer()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_buffer()
    }
}

fn is_disconnect(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// Runs `produce` on a blocking thread and answers with what it writes. An error before
/// any output is a 500 with its message (or the status the producer chose with
/// [`ChannelWriter::fail`]); after output has started, the body is cut short so the
/// client sees a failed transfer rather than a complete-looking one.
pub async fn from_blocking(
    content_type: &'static str,
    deadline: Instant,
    produce: impl FnOnce(&mut ChannelWriter) -> anyhow::Result<()> + Send + 'static,
) -> Response {
    let (tx, mut rx) = mpsc::channel(IN_FLIGHT);
    tokio::task::spawn_blocking(move || {
        let mut writer = ChannelWriter {
            tx,
            buffer: Vec::with_capacity(CHUNK),
            deadline,
        };
        let result = produce(&mut writer).and_then(|()| Ok(writer.flush()?));
        if let Err(error) = result
            && !is_disconnect(&error)
        {
            writer.fail(StatusCode::INTERNAL_SERVER_ERROR, format!("{error:#}"));
        }
    });
    let first = match rx.recv().await {
        None => return response(content_type, Body::empty(), Some(0)),
        Some(Message::Failed(status, message)) => return super::error(status, message),
        Some(Message::Data(first)) => first,
    };
    match rx.recv().await {
        // The whole answer fit in one chunk: send it with its length.
        None => {
            let length = first.len();
            response(content_type, Body::from(first), Some(length))
        }
        Some(second) => {
            let head = tokio_stream::iter([Message::Data(first), second]);
            let rest = tokio_stream::wrappers::ReceiverStream::new(rx);
            let stream = head.chain(rest).map(|message| match message {
                Message::Data(bytes) => Ok(bytes),
                Message::Failed(_, text) => Err(io::Error::other(text)),
            });
            response(content_type, Body::from_stream(stream), None)
        }
    }
}

pub fn response(content_type: &'static str, body: Body, length: Option<usize>) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Some(length) = length {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    }
    response
}
