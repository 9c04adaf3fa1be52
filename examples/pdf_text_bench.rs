//! The PDF text libraries the summary could use, on real PDFs: for each PDF given, the text
//! of `pdf-extract` and of `lopdf`'s own `extract_text`, written next to each other in an
//! output directory, and the CPU time of each (best of 3). `scripts/bench-pdf-text.py`
//! compares the texts with poppler's `pdftotext` (BENCHMARKS.md, "PDF text").
//!
//! cargo run --release --example pdf_text_bench -- OUT_DIR FILE.pdf...

use std::path::Path;
use std::time::Instant;

fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(usage.ru_utime) + t(usage.ru_stime)
}

fn best_of_3(f: &dyn Fn() -> Result<String, String>) -> (Result<String, String>, f64) {
    let mut best = f64::MAX;
    let mut out = Err(String::new());
    for _ in 0..3 {
        let start = cpu_seconds();
        let wall = Instant::now();
        out = f();
        let _ = wall.elapsed();
        best = best.min(cpu_seconds() - start);
    }
    (out, best)
}

fn pdf_extract_text(pdf: &[u8]) -> Result<String, String> {
    std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(pdf).map_err(|e| e.to_string()))
        .unwrap_or_else(|_| Err("panicked".into()))
}

fn lopdf_text(pdf: &[u8]) -> Result<String, String> {
    std::panic::catch_unwind(|| {
        let doc = pdf_extract::Document::load_mem(pdf).map_err(|e| e.to_string())?;
        let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
        doc.extract_text(&pages).map_err(|e| e.to_string())
    })
    .unwrap_or_else(|_| Err("panicked".into()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, pdfs)) = args.split_first() else {
        eprintln!("usage: pdf_text_bench OUT_DIR FILE.pdf...");
        std::process::exit(2);
    };
    std::fs::create_dir_all(out).expect("output directory");
    // Quiet the libraries' panics: each is reported as a failure below.
    std::panic::set_hook(Box::new(|_| {}));
    println!("file\tbytes\tpdf_extract_s\tpdf_extract_ok\tlopdf_s\tlopdf_ok");
    for path in pdfs {
        let pdf = std::fs::read(path).expect("read PDF");
        let stem = Path::new(path).file_stem().unwrap().to_string_lossy();
        let mut row = format!("{stem}\t{}", pdf.len());
        for (name, f) in [
            (
                "pdf_extract",
                &pdf_extract_text as &dyn Fn(&[u8]) -> Result<String, String>,
            ),
            ("lopdf", &lopdf_text),
        ] {
            let (text, seconds) = best_of_3(&|| f(&pdf));
            let ok = text.is_ok();
            std::fs::write(
                Path::new(out).join(format!("{stem}.{name}.txt")),
                text.unwrap_or_default(),
            )
            .expect("write text");
            row.push_str(&format!("\t{seconds:.3}\t{ok}"));
        }
        println!("{row}");
    }
}
