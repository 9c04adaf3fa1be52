//! What is checked of a request before and around the router, as pure functions (the
//! HTTP fuzz target calls them), and the reading of a connection's first request line.
//!
//! hyper answers a request line it cannot parse with an empty 400; finding each request
//! line ourselves ([`RequestFramer`], [`Watched`]) lets the client learn what was wrong (a
//! byte outside printable ASCII in the target, most often), on the connection's first
//! request and on any later one. The bytes are handed on to hyper unchanged.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Checks a request line (without its line end): `METHOD TARGET HTTP/1.x`, with a target
/// of printable ASCII (other bytes must be percent-encoded).
pub fn check_request_line(line: &[u8]) -> Result<(), String> {
    let parts: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let [method, target, version] = parts[..] else {
        return Err(format!(
            "the request line must be METHOD TARGET HTTP/1.1, separated by single spaces; got {}",
            shown(line)
        ));
    };
    if method.is_empty() || !method.iter().all(|&b| is_token(b)) {
        return Err(format!("{} is not an HTTP method", shown(method)));
    }
    if target.is_empty() {
        return Err("the request target is empty".into());
    }
    if let Some(at) = target.iter().position(|&b| !(0x21..=0x7E).contains(&b)) {
        return Err(format!(
            "the request target holds byte 0x{:02X} at offset {at}: bytes outside printable \
             ASCII (UTF-8 included) must be percent-encoded",
            target[at]
        ));
    }
    if version != b"HTTP/1.1" && version != b"HTTP/1.0" {
        return Err(format!("{} is not HTTP/1.0 or HTTP/1.1", shown(version)));
    }
    Ok(())
}

/// A request's headers, by name: more than one `Host` is an error (RFC 9112 §3.2).
pub fn check_headers<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let hosts = names
        .into_iter()
        .filter(|n| n.eq_ignore_ascii_case("host"))
        .count();
    if hosts > 1 {
        return Err(format!(
            "the request has {hosts} Host headers; it must have one"
        ));
    }
    Ok(())
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Bytes for a message: the first 60, escaped.
fn shown(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(60)];
    let mut text = format!("\"{}\"", cut.escape_ascii());
    if bytes.len() > cut.len() {
        text.push('…');
    }
    text
}

/// Where each request on a connection begins, found in the bytes as they arrive, so that
/// every request line is checked (not only a connection's first: hyper answers a bad one
/// on a kept-alive connection with an empty 400). Free of I/O: bytes go in, the bytes
/// that may go on to hyper come out. A request line is held back until it is whole and
/// checked; headers are passed on as they come, read only for the body's length.
/// Bodies with a length are skipped; after a chunked body, an over-long line or an
/// unreadable length, the rest of the connection is passed on unchecked (hyper answers
/// those itself).
pub struct RequestFramer {
    state: Framing,
    /// The request line so far, or the header line so far.
    line: Vec<u8>,
    limit: usize,
    content_length: Option<u64>,
    chunked: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Between requests: empty lines are allowed here (RFC 9112 §2.2).
    BeforeLine,
    Line,
    Headers,
    Body(u64),
    Blind,
}

impl RequestFramer {
    /// `limit`: the most bytes of one request line or header line.
    pub fn new(limit: usize) -> RequestFramer {
        RequestFramer {
            state: Framing::BeforeLine,
            line: Vec::new(),
            limit: limit.max(64),
            content_length: None,
            chunked: false,
        }
    }

    /// Takes the next bytes of the connection and appends to `out` those that may go on.
    /// `Err` is the message for a 400: a request line that is not one. The bytes before
    /// that line are in `out`; nothing after it is.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        while let Some((&b, rest)) = bytes.split_first() {
            match self.state {
                Framing::Blind => {
                    out.extend_from_slice(bytes);
                    return Ok(());
                }
                Framing::Body(left) => {
                    let take = bytes.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    out.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    let left = left - take as u64;
                    self.state = if left == 0 {
                        Framing::BeforeLine
                    } else {
                        Framing::Body(left)
                    };
                    continue;
                }
                Framing::BeforeLine if b == b'\r' || b == b'\n' => out.push(b),
                Framing::BeforeLine | Framing::Line => {
                    self.state = Framing::Line;
                    self.line.push(b);
                    if b == b'\n' {
                        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                        check_request_line(line.strip_suffix(b"\r").unwrap_or(line))?;
                        out.append(&mut self.line);
                        self.state = Framing::Headers;
                        self.content_length = None;
                        self.chunked = false;
                    } else if self.line.len() >= self.limit {
                        // Too long: hyper answers that (414) itself.
                        out.append(&mut self.line);
                        self.state = Framing::Blind;
                    }
                }
                Framing::Headers => {
                    out.push(b);
                    self.line.push(b);
                    if b == b'\n' {
                        self.header_line_done();
                    } else if self.line.len() >= self.limit {
                        self.line.clear();
                        self.state = Framing::Blind;
                    }
                }
            }
            bytes = rest;
        }
        Ok(())
    }

    fn header_line_done(&mut self) {
        let line = std::mem::take(&mut self.line);
        let line = line.trim_ascii();
        if line.is_empty() {
            self.state = match self.content_length {
                _ if self.chunked => Framing::Blind,
                Some(n) if n > 0 => Framing::Body(n),
                _ => Framing::BeforeLine,
            };
            return;
        }
        let Some(colon) = memchr::memchr(b':', line) else {
            return;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"content-length") {
            let length = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            match (length, self.content_length) {
                (Some(n), None) => self.content_length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                // Unreadable or conflicting: hyper refuses the request; stop following.
                _ => self.state = Framing::Blind,
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            self.chunked = true;
        }
    }
}

/// A connection as hyper reads it: every request line checked by a [`RequestFramer`] on
/// the way. At a bad line hyper is told the connection ended (it finishes the answers
/// before it), and the message waits in `refused` for the connection's task, which
/// still holds the socket and answers 400 with it.
pub struct Watched {
    stream: std::sync::Arc<TcpStream>,
    framer: RequestFramer,
    /// Checked bytes not yet handed to hyper, from `at`.
    ready: Vec<u8>,
    at: usize,
    refused: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    ended: bool,
}

/// What the connection's task keeps of a [`Watched`] connection.
pub struct WatchedHandle {
    stream: std::sync::Arc<TcpStream>,
    refused: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl Watched {
    pub fn new(stream: TcpStream, line_limit: usize) -> (Watched, WatchedHandle) {
        let stream = std::sync::Arc::new(stream);
        let refused = std::sync::Arc::default();
        let handle = WatchedHandle {
            stream: stream.clone(),
            refused: std::sync::Arc::clone(&refused),
        };
        let watched = Watched {
            stream,
            framer: RequestFramer::new(line_limit),
            ready: Vec::new(),
            at: 0,
            refused,
            ended: false,
        };
        (watched, handle)
    }
}

impl WatchedHandle {
    /// After hyper is done with the connection: the 400 for a bad request line, if one
    /// came (the socket is this handle's alone by then).
    pub async fn answer_refused(self) {
        let Some(message) = self.refused.lock().ok().and_then(|mut m| m.take()) else {
            return;
        };
        if let Ok(stream) = std::sync::Arc::try_unwrap(self.stream) {
            let answer = plain_answer("400 Bad Request", &message, "");
            answer_and_close(stream, &answer).await;
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.at < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.at);
                buf.put_slice(&this.ready[this.at..this.at + n]);
                this.at += n;
                return Poll::Ready(Ok(()));
            }
            this.ready.clear();
            this.at = 0;
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 8192];
            let n = loop {
                std::task::ready!(this.stream.poll_read_ready(cx))?;
                match this.stream.try_read(&mut chunk) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Poll::Ready(Err(e)),
                }
            };
            if n == 0 {
                this.ended = true;
                continue;
            }
            if let Err(message) = this.framer.feed(&chunk[..n], &mut this.ready) {
                if let Ok(mut refused) = this.refused.lock() {
                    *refused = Some(message);
                }
                this.ended = true;
            }
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            std::task::ready!(self.stream.poll_write_ready(cx))?;
            match self.stream.try_write(data) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                result => return Poll::Ready(result),
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            std::task::ready!(self.stream.poll_write_ready(cx))?;
            match self.stream.try_write_vectored(bufs) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                result => return Poll::Ready(result),
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// The socket closes when the last of this and its handle goes (the handle may still
    /// have a 400 to write).
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Writes a last answer, then closes gently: closing with the client's unread request
/// bytes still queued would reset the connection and could lose the answer.
pub async fn answer_and_close(mut stream: TcpStream, answer: &[u8]) {
    use tokio::io::AsyncWriteExt;
    let linger = async {
        stream.write_all(answer).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        let mut drained = 0;
        while drained < 1 << 16 {
            match stream.read(&mut sink).await? {
                0 => break,
                n => drained += n,
            }
        }
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), linger).await;
}

/// A complete plain-text answer written straight to a socket (before or instead of hyper).
pub fn plain_answer(status: &str, message: &str, extra_headers: &str) -> Vec<u8> {
    let body = format!("{message}\n");
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n{extra_headers}\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        assert!(check_request_line(b"GET /cdx?url=a.com HTTP/1.1").is_ok());
        assert!(check_request_line(b"OPTIONS * HTTP/1.1").is_ok());
        assert!(check_request_line(b"GET http://x/health HTTP/1.0").is_ok());
        let utf8 = check_request_line("GET /search?q=café HTTP/1.1".as_bytes()).unwrap_err();
        assert!(utf8.contains("0xC3 at offset 13"), "{utf8}");
        let bad = check_request_line(b"GET /\xff HTTP/1.1").unwrap_err();
        assert!(bad.contains("percent-encoded"), "{bad}");
        assert!(check_request_line(b"GET / HTTP/2.0").is_err());
        assert!(check_request_line(b"GET  / HTTP/1.1").is_err());
        assert!(check_request_line(b"\x16\x03\x01 not http").is_err());
        assert!(check_request_line(b"").is_err());
    }

    fn framed(chunks: &[&[u8]]) -> (Vec<u8>, Option<String>) {
        let mut framer = RequestFramer::new(8192);
        let mut out = Vec::new();
        for chunk in chunks {
            if let Err(message) = framer.feed(chunk, &mut out) {
                return (out, Some(message));
            }
        }
        (out, None)
    }

    #[test]
    fn every_request_line_is_checked_and_bytes_pass_unchanged() {
        let good: &[u8] = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
        assert_eq!(framed(&[good]), (good.to_vec(), None));
        // Split anywhere, the same bytes come out.
        for at in 0..good.len() {
            assert_eq!(framed(&[&good[..at], &good[at..]]), (good.to_vec(), None));
        }
        // A bad second line: the first request passes whole, nothing of the second.
        let first: &[u8] = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
        let bad = [first, b"GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n"].concat();
        let (out, refused) = framed(&[&bad]);
        assert_eq!(out, first);
        assert!(refused.unwrap().contains("0xFF"));
        // A line held back until whole: a prefix of it does not pass.
        assert_eq!(framed(&[b"GET /a HT"]), (Vec::new(), None));
    }

    #[test]
    fn bodies_are_skipped_by_length_and_chunked_ones_end_the_checking() {
        let body = b"POST /a HTTP/1.1\r\nContent-Length: 12\r\n\r\nGET /\xff HTTP/\r\nGET /b HTTP/1.1\r\n\r\n";
        assert_eq!(framed(&[body]), (body.to_vec(), None));
        let chunked =
            b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n\xff\xff\xff\r\n0\r\n\r\n";
        assert_eq!(framed(&[chunked]), (chunked.to_vec(), None));
        let long = [b"GET /".as_slice(), &vec![b'a'; 9000], b" HTTP/1.1\r\n"].concat();
        assert_eq!(framed(&[&long]), (long.clone(), None));
    }

    #[test]
    fn one_host() {
        assert!(check_headers(["Host", "Accept"]).is_ok());
        assert!(check_headers(["Accept"]).is_ok());
        assert!(
            check_headers(["host", "HOST"])
                .unwrap_err()
                .contains("2 Host")
        );
    }
}
