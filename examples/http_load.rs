//! A closed-loop load generator for `sediment serve`: CLIENTS keep-alive connections, each
//! sending the requests of a file (one path and query a line, already URL-encoded, such as
//! `/cdx?url=example.com/&output=json`), taken in turn, one at a time, until REQUESTS have
//! been answered. The latency of every request is kept: median, p90, p99 and maximum, the
//! rate, and the client's own CPU time a request. Every answer must be a 200 (and, with
//! MUST_CONTAIN, hold that text); anything else is counted and makes the exit status 1.
//! Used by scripts/bench-search.sh and scripts/bench-serve-disk.sh, so that neither needs
//! oha or wrk.
//!
//! The connections share one thread (tokio's current-thread runtime, readiness-driven I/O,
//! HTTP/1.1 framing by `httparse`): the server is measured on the same cores as its
//! clients, and a client that spends a core of its own (a blocking HTTP client on a thread a
//! connection: about as much CPU a request as the server's, and a context switch a request
//! on both sides) leaves the server half the machine and puts its own waiting into the
//! latency.
//!
//! Usage: http_load BASE_URL PATHS CLIENTS REQUESTS [MUST_CONTAIN]

use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

/// An answer larger than this is a failure (no answer of the benchmarks comes near it).
const MAX_ANSWER: usize = 1 << 30;
/// A request that has no answer within this is a failure, and its connection is dropped.
const TIMEOUT: Duration = Duration::from_secs(60);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(5..=6).contains(&args.len()) {
        eprintln!("usage: http_load BASE_URL PATHS CLIENTS REQUESTS [MUST_CONTAIN]");
        std::process::exit(2);
    }
    let base =
        url::Url::parse(&args[1]).unwrap_or_else(|e| fail(&format!("BASE_URL {}: {e}", args[1])));
    if base.scheme() != "http" {
        fail("BASE_URL: only http:// is supported");
    }
    let host = base
        .host_str()
        .unwrap_or_else(|| fail("BASE_URL: no host"))
        .to_string();
    let port = base.port_or_known_default().unwrap_or(80);
    let prefix = base.path().trim_end_matches('/').to_string();
    let paths: Vec<String> = std::fs::read_to_string(&args[2])
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", args[2])))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|path| format!("{prefix}{path}"))
        .collect();
    if paths.is_empty() {
        fail(&format!("no requests in {}", args[2]));
    }
    let clients: usize = args[3]
        .parse()
        .unwrap_or_else(|_| fail("CLIENTS: a number"));
    let requests: usize = args[4]
        .parse()
        .unwrap_or_else(|_| fail("REQUESTS: a number"));
    let load = Rc::new(Load {
        address: format!("{host}:{port}"),
        host: if base.port().is_some() {
            format!("{host}:{port}")
        } else {
            host
        },
        paths,
        requests,
        must_contain: args.get(5).map(|text| text.as_bytes().to_vec()),
        next: Default::default(),
        failures: Default::default(),
        first_failure: Default::default(),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("no runtime: {e}")));
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let mut times: Vec<f64> = runtime.block_on(async {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let tasks: Vec<_> = (0..clients.max(1))
                    .map(|_| tokio::task::spawn_local(client(load.clone())))
                    .collect();
                let mut times = Vec::with_capacity(requests);
                for task in tasks {
                    times.extend(task.await.unwrap_or_default());
                }
                times
            })
            .await
    });
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    if times.is_empty() {
        fail("no request was answered");
    }
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let failed = load.failures.get();
    println!(
        "clients {clients}, requests {}, failed {failed}, {:.0} requests/s; latency median {:.2} ms, \
         p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; client CPU {:.3} ms a request",
        times.len(),
        times.len() as f64 / wall,
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        cpu * 1000.0 / times.len() as f64,
    );
    if failed > 0 {
        if let Some(first) = load.first_failure.take() {
            eprintln!("http_load: {failed} requests failed; the first: {first}");
        }
        std::process::exit(1);
    }
}

/// What the clients share (all on one thread).
struct Load {
    address: String,
    host: String,
    paths: Vec<String>,
    requests: usize,
    must_contain: Option<Vec<u8>>,
    next: std::cell::Cell<usize>,
    failures: std::cell::Cell<usize>,
    first_failure: std::cell::RefCell<Option<String>>,
}

impl Load {
    fn failed(&self, path: &str, why: String) {
        self.failures.set(self.failures.get() + 1);
        self.first_failure
            .borrow_mut()
            .get_or_insert_with(|| format!("{path}: {why}"));
    }
}

/// One connection's loop: the next request of the shared list, sent when the answer to the
/// last one has been read whole. Returns the latency of each, in milliseconds.
async fn client(load: Rc<Load>) -> Vec<f64> {
    let mut times = Vec::new();
    let mut connection: Option<Connection> = None;
    loop {
        let i = load.next.get();
        if i >= load.requests {
            return times;
        }
        load.next.set(i + 1);
        let path = &load.paths[i % load.paths.len()];
        let sent = Instant::now();
        let answer = async {
            if connection.is_none() {
                let stream = TcpStream::connect(&load.address).await?;
                stream.set_nodelay(true)?;
                connection = Some(Connection::new(stream));
            }
            let open = connection.as_mut().expect("connected above");
            open.get(&load.host, path).await
        };
        let answer = tokio::time::timeout(TIMEOUT, answer)
            .await
            .unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::TimedOut, "no answer")));
        times.push(sent.elapsed().as_secs_f64() * 1000.0);
        match answer {
            Ok((200, body)) => {
                if let Some(text) = &load.must_contain
                    && memchr::memmem::find(&body, text).is_none()
                {
                    load.failed(path, "the answer lacks MUST_CONTAIN".into());
                }
            }
            Ok((status, _)) => load.failed(path, format!("status {status}")),
            Err(e) => {
                load.failed(path, e.to_string());
                connection = None;
            }
        }
    }
}

/// A keep-alive HTTP/1.1 connection and the bytes read past the last answer.
struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
}

impl Connection {
    fn new(stream: TcpStream) -> Self {
        Connection {
            stream,
            buffer: Vec::with_capacity(64 * 1024),
        }
    }

    /// Sends `GET path` and reads its answer whole: its status and body (chunks joined).
    async fn get(&mut self, host: &str, path: &str) -> io::Result<(u16, Vec<u8>)> {
        let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
        self.write_all(request.as_bytes()).await?;
        let (status, head_length, framing) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(&self.buffer).map_err(invalid)? {
                httparse::Status::Complete(length) => {
                    break (
                        response.code.unwrap_or(0),
                        length,
                        Framing::of(response.headers)?,
                    );
                }
                httparse::Status::Partial => self.read_more().await?,
            }
        };
        self.buffer.drain(..head_length);
        let body = match framing {
            Framing::Length(length) => {
                if length > MAX_ANSWER {
                    return Err(invalid("the answer is too large"));
                }
                while self.buffer.len() < length {
                    self.read_more().await?;
                }
                self.buffer.drain(..length).collect()
            }
            Framing::Chunked => self.read_chunks().await?,
        };
        Ok((status, body))
    }

    async fn read_chunks(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let (start, size) = loop {
                match httparse::parse_chunk_size(&self.buffer).map_err(|_| invalid("bad chunk"))? {
                    httparse::Status::Complete((start, size)) => break (start, size as usize),
                    httparse::Status::Partial => self.read_more().await?,
                }
            };
            if body.len() + size > MAX_ANSWER {
                return Err(invalid("the answer is too large"));
            }
            // The chunk, then its CRLF (after the last, empty chunk: the empty trailer's).
            while self.buffer.len() < start + size + 2 {
                self.read_more().await?;
            }
            body.extend_from_slice(&self.buffer[start..start + size]);
            self.buffer.drain(..start + size + 2);
            if size == 0 {
                return Ok(body);
            }
        }
    }

    async fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            self.stream.writable().await?;
            match self.stream.try_write(bytes) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Appends what the socket has to the buffer; an error at the end of the stream.
    async fn read_more(&mut self) -> io::Result<()> {
        loop {
            self.stream.readable().await?;
            let length = self.buffer.len();
            self.buffer.resize(length + 64 * 1024, 0);
            let read = self.stream.try_read(&mut self.buffer[length..]);
            self.buffer.truncate(length + *read.as_ref().unwrap_or(&0));
            match read {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// How an answer's body ends (the server never closes a keep-alive connection to end one).
enum Framing {
    Length(usize),
    Chunked,
}

impl Framing {
    fn of(headers: &[httparse::Header]) -> io::Result<Self> {
        for header in headers {
            if header.name.eq_ignore_ascii_case("content-length") {
                let length = std::str::from_utf8(header.value)
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
                    .ok_or_else(|| invalid("bad Content-Length"))?;
                return Ok(Framing::Length(length));
            }
            if header.name.eq_ignore_ascii_case("transfer-encoding")
                && header.value.eq_ignore_ascii_case(b"chunked")
            {
                return Ok(Framing::Chunked);
            }
        }
        Err(invalid("an answer with neither Content-Length nor chunks"))
    }
}

fn invalid(e: impl ToString) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// This process's CPU time (user and system), from /proc/self/stat; 0 where it is missing.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // The fields after the command's name, which is in parentheses and may hold spaces:
    // utime and stime are the 14th and 15th fields of the line, in clock ticks.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // getconf CLK_TCK is 100 on Linux on every architecture Rust supports.
    (ticks(11) + ticks(12)) / 100.0
}

fn fail(message: &str) -> ! {
    eprintln!("http_load: {message}");
    std::process::exit(2);
}
