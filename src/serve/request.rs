//! What is checked of a request before and around the router, as pure functions (the
//! HTTP fuzz target calls them), and the reading of a connection's first request line.
//!
//! hyper answers a request line it cannot parse with an empty 400; reading the first
//! line ourselves lets the client learn what was wrong (a byte outside printable ASCII in
//! the target, most often). The bytes read are handed on to hyper unchanged.

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

/// The first request line on a connection, read up to its line end (or `limit` bytes):
/// `Ok(None)` when the client closed without sending one, `Err` with the message for a
/// 400 when it is malformed, and otherwise every byte read (a line, and maybe more).
pub async fn read_first_line(
    stream: &mut TcpStream,
    limit: usize,
) -> io::Result<Result<Option<Vec<u8>>, String>> {
    let mut read = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(if read.is_empty() {
                Ok(None)
            } else {
                Err("the connection closed inside the request line".into())
            });
        }
        read.extend_from_slice(&chunk[..n]);
        // Empty lines before a request are allowed (RFC 9112 §2.2).
        let start = read
            .iter()
            .position(|&b| b != b'\r' && b != b'\n')
            .unwrap_or(read.len());
        if let Some(end) = memchr::memchr(b'\n', &read[start..]) {
            let line = &read[start..start + end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            return Ok(match check_request_line(line) {
                Ok(()) => Ok(Some(read)),
                Err(message) => Err(message),
            });
        }
        if read.len() >= limit {
            // Too long: hyper answers that (414) itself.
            return Ok(Ok(Some(read)));
        }
    }
}

/// A stream that first gives back bytes already read from it.
pub struct Prefixed {
    prefix: Vec<u8>,
    at: usize,
    inner: TcpStream,
}

impl Prefixed {
    pub fn new(prefix: Vec<u8>, inner: TcpStream) -> Prefixed {
        Prefixed {
            prefix,
            at: 0,
            inner,
        }
    }
}

impl AsyncRead for Prefixed {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.at < this.prefix.len() {
            let n = buf.remaining().min(this.prefix.len() - this.at);
            buf.put_slice(&this.prefix[this.at..this.at + n]);
            this.at += n;
            if this.at == this.prefix.len() {
                this.prefix = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Prefixed {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
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
