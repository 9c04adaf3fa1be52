//! What the gzip reader takes from libdeflate: inflating a whole member in one call, for
//! the members that are wholly buffered (about 1.3x as fast as zlib-rs's streaming inflater,
//! which stays the path for everything else: members not yet wholly read, larger than the
//! window, damaged), and CRC-32 (about twice as fast as zlib-rs's here).

use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_crc32, libdeflate_decompressor,
    libdeflate_deflate_decompress_ex, libdeflate_free_decompressor,
    libdeflate_result_LIBDEFLATE_SUCCESS,
};

/// A libdeflate decompressor (about 10 KB of tables), reused member after member.
pub(crate) struct WholeMemberInflater {
    decompressor: NonNull<libdeflate_decompressor>,
}

// SAFETY: a libdeflate decompressor holds no thread-local state; it may move between threads
// as long as one thread uses it at a time, which `&mut self` ensures.
unsafe impl Send for WholeMemberInflater {}

impl WholeMemberInflater {
    /// `None` when libdeflate cannot allocate its tables (then only streaming is used).
    pub fn new() -> Option<Self> {
        // SAFETY: plain allocation; a null result is handled.
        let decompressor = NonNull::new(unsafe { libdeflate_alloc_decompressor() })?;
        Some(WholeMemberInflater { decompressor })
    }

    /// Inflates one complete raw deflate stream at the start of `input` into `output`.
    /// Returns the bytes of `input` it took and the bytes written, or `None` when the stream
    /// is invalid, goes past the end of `input`, or does not fit `output`: the caller then
    /// streams the same bytes, which finds the same error at its exact place, or the data.
    /// libdeflate accepts a few streams zlib rejects (an invalid distance code, for one), so
    /// a result is only as good as the CRC-32 it is checked against.
    pub fn inflate(&mut self, input: &[u8], output: &mut [u8]) -> Option<(usize, usize)> {
        let mut consumed = 0usize;
        let mut produced = 0usize;
        // SAFETY: both slices are valid for their lengths; libdeflate reads at most
        // `input.len()` bytes and writes at most `output.len()`, and reports how many.
        let result = unsafe {
            libdeflate_deflate_decompress_ex(
                self.decompressor.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                output.as_mut_ptr().cast(),
                output.len(),
                &mut consumed,
                &mut produced,
            )
        };
        (result == libdeflate_result_LIBDEFLATE_SUCCESS).then_some((consumed, produced))
    }
}

impl Drop for WholeMemberInflater {
    fn drop(&mut self) {
        // SAFETY: allocated by libdeflate_alloc_decompressor, freed once.
        unsafe { libdeflate_free_decompressor(self.decompressor.as_ptr()) }
    }
}

/// CRC-32 and length (mod 2^32) of a member's decoded bytes, as its trailer holds them.
#[derive(Default)]
pub(crate) struct Crc32 {
    sum: u32,
    amount: u32,
}

impl Crc32 {
    pub fn update(&mut self, bytes: &[u8]) {
        // SAFETY: reads `bytes.len()` bytes of a valid slice.
        self.sum = unsafe { libdeflate_crc32(self.sum, bytes.as_ptr().cast(), bytes.len()) };
        self.amount = self.amount.wrapping_add(bytes.len() as u32);
    }

    pub fn sum(&self) -> u32 {
        self.sum
    }

    pub fn amount(&self) -> u32 {
        self.amount
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compression, write::DeflateEncoder};
    use std::io::Write;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn inflates_a_stream_and_says_where_it_ends() {
        let text = b"WARC/1.0\r\nWARC-Type: response\r\n\r\n".repeat(50);
        let mut input = deflate(&text);
        let stream_len = input.len();
        input.extend_from_slice(b"trailer and the next member");
        let mut inflater = WholeMemberInflater::new().unwrap();
        let mut output = vec![0u8; 4096];
        let (consumed, produced) = inflater.inflate(&input, &mut output).unwrap();
        assert_eq!(consumed, stream_len);
        assert_eq!(&output[..produced], &text[..]);
    }

    #[test]
    fn declines_what_it_cannot_finish() {
        let text = b"0123456789abcdef".repeat(1000);
        let input = deflate(&text);
        let mut inflater = WholeMemberInflater::new().unwrap();
        let mut small = vec![0u8; 100];
        assert_eq!(
            inflater.inflate(&input, &mut small),
            None,
            "output too small"
        );
        let mut output = vec![0u8; 32 << 10];
        assert_eq!(
            inflater.inflate(&input[..input.len() / 2], &mut output),
            None,
            "input cut short"
        );
        assert_eq!(
            inflater.inflate(b"\xff\xff\xff", &mut output),
            None,
            "not deflate"
        );
        // Still usable after failures.
        let (_, produced) = inflater.inflate(&input, &mut output).unwrap();
        assert_eq!(&output[..produced], &text[..]);
    }

    #[test]
    fn crc32_as_in_a_gzip_trailer() {
        let mut crc = Crc32::default();
        crc.update(b"123456");
        crc.update(b"789");
        assert_eq!((crc.sum(), crc.amount()), (0xcbf4_3926, 9));
    }
}
