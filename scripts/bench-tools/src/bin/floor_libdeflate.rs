//! The floor with libdeflate: inflate every gzip member in one call (the whole file is read
//! into memory first) and SHA-1 every decompressed byte.
use sha1::{Digest, Sha1};

fn main() {
    sediment_bench_tools::run("floor (libdeflate + SHA-1)", |path| {
        let data = std::fs::read(path).expect("read");
        // SAFETY: allocation checked below, freed at the end.
        let decompressor = unsafe { libdeflate_sys::libdeflate_alloc_decompressor() };
        assert!(!decompressor.is_null());
        let mut out = vec![0u8; 1 << 20];
        let mut sha1 = Sha1::new();
        let (mut at, mut n) = (0usize, 0u64);
        while at < data.len() {
            let (mut consumed, mut produced) = (0usize, 0usize);
            // SAFETY: valid slices, lengths as given.
            let result = unsafe {
                libdeflate_sys::libdeflate_gzip_decompress_ex(
                    decompressor,
                    data[at..].as_ptr().cast(),
                    data.len() - at,
                    out.as_mut_ptr().cast(),
                    out.len(),
                    &mut consumed,
                    &mut produced,
                )
            };
            match result {
                libdeflate_sys::libdeflate_result_LIBDEFLATE_SUCCESS => {
                    sha1.update(&out[..produced]);
                    n += produced as u64;
                    at += consumed;
                }
                libdeflate_sys::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => {
                    out.resize(out.len() * 2, 0)
                }
                other => panic!(
                    "{}: libdeflate error {other} at offset {at}",
                    path.display()
                ),
            }
        }
        // SAFETY: allocated above, freed once.
        unsafe { libdeflate_sys::libdeflate_free_decompressor(decompressor) };
        std::hint::black_box(sha1.finalize());
        n
    });
}
