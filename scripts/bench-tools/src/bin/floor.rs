//! The floor: inflate every gzip member and SHA-1 every decompressed byte.
use std::io::{BufReader, Read};

use sha1::{Digest, Sha1};

fn main() {
    sediment_bench_tools::run("floor (inflate + SHA-1)", |path| {
        let file = std::fs::File::open(path).expect("open");
        let mut gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(2 << 20, file));
        let mut buf = vec![0u8; 1 << 20];
        let mut sha1 = Sha1::new();
        let mut n = 0u64;
        loop {
            let got = gz.read(&mut buf).expect("inflate");
            if got == 0 {
                break;
            }
            sha1.update(&buf[..got]);
            n += got as u64;
        }
        std::hint::black_box(sha1.finalize());
        n
    });
}
