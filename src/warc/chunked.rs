//! A streaming decoder for HTTP/1.1 chunked transfer coding.
//!
//! Fed the stored bytes of a payload in pieces of any size, it hands the decoded body to a
//! callback without buffering it. Line ends may be CRLF or a bare LF; chunk extensions and
//! trailer fields are skipped. It never panics on bad input: the first error is kept and
//! later input is ignored.

use std::fmt;

/// Why a chunked body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DechunkError {
    /// Offset in the encoded (stored) payload where decoding failed.
    pub offset: u64,
    pub reason: String,
}

impl fmt::Display for DechunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad chunked encoding at payload byte {}: {}",
            self.offset, self.reason
        )
    }
}

impl std::error::Error for DechunkError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before or inside the hex digits of a chunk size.
    Size,
    /// After the size digits, skipping an extension up to the line end.
    SizeExtension,
    /// Saw CR ending the size line, expecting LF.
    SizeLf,
    /// Inside chunk data.
    Data,
    /// After chunk data, expecting CR or LF.
    DataCr,
    /// After chunk data and CR, expecting LF.
    DataLf,
    /// At the start of a trailer line (after the last chunk's size line).
    TrailerLineStart,
    /// Inside a trailer field line.
    TrailerLine,
    /// Saw CR on an empty trailer line, expecting LF.
    TrailerEndLf,
    /// The last chunk and the trailer were read.
    Done,
    Failed,
}

/// Streaming de-chunker: `feed` encoded bytes, receive decoded bytes.
#[derive(Clone, Debug)]
pub struct Dechunker {
    state: State,
    /// Size digits seen in the current size line.
    digits: u32,
    /// Chunk size being parsed, or data bytes left in the current chunk.
    remaining: u64,
    encoded_pos: u64,
    decoded_len: u64,
    /// Bytes that came after the end of the chunked body.
    trailing: u64,
    error: Option<DechunkError>,
}

impl Default for Dechunker {
    fn default() -> Self {
        Self::new()
    }
}

impl Dechunker {
    pub fn new() -> Self {
        Dechunker {
            state: State::Size,
            digits: 0,
            remaining: 0,
            encoded_pos: 0,
            decoded_len: 0,
            trailing: 0,
            error: None,
        }
    }

    /// Decode `input`, passing decoded pieces to `out`. After an error, returns it again
    /// and ignores the input.
    pub fn feed(&mut self, input: &[u8], out: &mut dyn FnMut(&[u8])) -> Result<(), DechunkError> {
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Failed => break,
                State::Done => {
                    self.trailing += (input.len() - i) as u64;
                    i = input.len();
                }
                State::Data => {
                    let take = (input.len() - i)
                        .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
                    out(&input[i..i + take]);
                    self.decoded_len += take as u64;
                    self.remaining -= take as u64;
                    i += take;
                    if self.remaining == 0 {
                        self.state = State::DataCr;
                    }
                }
                _ => {
                    let byte = input[i];
                    i += 1;
                    if let Err(reason) = self.step(byte) {
                        self.state = State::Failed;
                        self.error = Some(DechunkError {
                            offset: self.encoded_pos + i as u64 - 1,
                            reason,
                        });
                        break;
                    }
                }
            }
        }
        self.encoded_pos += input.len() as u64;
        match &self.error {
            Some(error) => Err(error.clone()),
            None => Ok(()),
        }
    }

    /// One byte of framing (size lines, CRLF after data, trailer).
    fn step(&mut self, byte: u8) -> Result<(), String> {
        match self.state {
            State::Size => match byte {
                b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                    if self.digits == 16 {
                        return Err("chunk size has more than 16 hex digits".into());
                    }
                    let digit = (byte as char).to_digit(16).unwrap_or(0) as u64;
                    self.remaining = (self.remaining << 4) | digit;
                    self.digits += 1;
                }
                b' ' | b'\t' if self.digits == 0 => {}
                b';' | b' ' | b'\t' => self.state = State::SizeExtension,
                b'\r' if self.digits > 0 => self.state = State::SizeLf,
                b'\n' if self.digits > 0 => self.end_size_line(),
                _ => {
                    return Err(format!(
                        "expected a hex chunk size, found byte 0x{byte:02x}"
                    ));
                }
            },
            State::SizeExtension => {
                if byte == b'\n' {
                    if self.digits == 0 {
                        return Err("chunk size line has no digits".into());
                    }
                    self.end_size_line();
                }
            }
            State::SizeLf => {
                if byte != b'\n' {
                    return Err("CR not followed by LF after chunk size".into());
                }
                self.end_size_line();
            }
            State::DataCr => match byte {
                b'\r' => self.state = State::DataLf,
                b'\n' => self.start_size_line(),
                _ => return Err("chunk data not followed by a line end".into()),
            },
            State::DataLf => {
                if byte != b'\n' {
                    return Err("CR not followed by LF after chunk data".into());
                }
                self.start_size_line();
            }
            State::TrailerLineStart => match byte {
                b'\r' => self.state = State::TrailerEndLf,
                b'\n' => self.state = State::Done,
                _ => self.state = State::TrailerLine,
            },
            State::TrailerLine => {
                if byte == b'\n' {
                    self.state = State::TrailerLineStart;
                }
            }
            State::TrailerEndLf => {
                if byte != b'\n' {
                    return Err("CR not followed by LF at the end of the trailer".into());
                }
                self.state = State::Done;
            }
            State::Data | State::Done | State::Failed => {}
        }
        Ok(())
    }

    fn end_size_line(&mut self) {
        self.state = if self.remaining == 0 {
            State::TrailerLineStart
        } else {
            State::Data
        };
    }

    fn start_size_line(&mut self) {
        self.state = State::Size;
        self.digits = 0;
        self.remaining = 0;
    }

    /// Call after the last byte: the decoded length if the body was complete. A body that
    /// stops right after the last-chunk line (no final empty line) is accepted.
    pub fn finish(&self) -> Result<u64, DechunkError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        match self.state {
            State::Done | State::TrailerLineStart => Ok(self.decoded_len),
            _ => Err(DechunkError {
                offset: self.encoded_pos,
                reason: "the payload ends before the last (zero-size) chunk".into(),
            }),
        }
    }

    /// Decoded bytes produced so far.
    pub fn decoded_len(&self) -> u64 {
        self.decoded_len
    }

    /// Bytes seen after the end of the chunked body (ignored by the decoder).
    pub fn trailing_bytes(&self) -> u64 {
        self.trailing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> (Vec<u8>, Result<u64, DechunkError>) {
        let mut dechunker = Dechunker::new();
        let mut out = Vec::new();
        for part in input.chunks(piece.max(1)) {
            let _ = dechunker.feed(part, &mut |bytes| out.extend_from_slice(bytes));
        }
        (out, dechunker.finish())
    }

    #[test]
    fn decodes_in_any_piece_size() {
        let body = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n";
        for piece in 1..body.len() {
            let (out, result) = decode_in_pieces(body, piece);
            assert_eq!(out, b"Wikipedia in\r\n\r\nchunks.");
            assert_eq!(result, Ok(23));
        }
    }

    #[test]
    fn tolerates_lf_line_ends_and_missing_final_line() {
        let (out, result) = decode_in_pieces(b"3\nabc\n0\n", 2);
        assert_eq!(out, b"abc");
        assert_eq!(result, Ok(3));
        let (_, result) = decode_in_pieces(b"3\r\nabc\r\n0\r\n", 100);
        assert_eq!(result, Ok(3));
    }

    #[test]
    fn reports_bad_chunking() {
        let (_, result) = decode_in_pieces(b"zz\r\nabc", 3);
        assert_eq!(result.map_err(|e| e.offset), Err(0));
        let (_, result) = decode_in_pieces(b"3\r\nabcd\r\n0\r\n\r\n", 5);
        assert_eq!(result.map_err(|e| e.offset), Err(6));
        let (out, result) = decode_in_pieces(b"5\r\nab", 1);
        assert_eq!(out, b"ab");
        assert!(result.is_err());
        let (_, result) = decode_in_pieces(b"\r\n", 1);
        assert!(result.is_err());
    }
}
