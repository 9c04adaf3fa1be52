//! `import-tei` memory is bounded by its batch, not by the number or size of the files
//! (issue 11): GROBID outputs of tens of megabytes each, made from a real TEI document of
//! the shared corpus by repeating its body, are imported with a peak RSS far below what
//! holding them all would take. Alone in its test binary, so the children's peak RSS
//! that the kernel reports is this import's.

mod common;

use std::io::Write;

use common::{corpus, ok};

/// Peak RSS (bytes) of the largest child process waited for so far.
fn children_peak_rss() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_CHILDREN is always valid.
    let usage = unsafe {
        assert_eq!(
            libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()),
            0
        );
        usage.assume_init()
    };
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn large_tei_files_are_imported_in_bounded_memory() {
    let Some(source) = corpus("grobid/example.tei.xml") else {
        return;
    };
    let xml = std::fs::read_to_string(source).unwrap();
    let body_start = xml.find("<body>").unwrap() + "<body>".len();
    let body_end = xml.find("</body>").unwrap();
    let body = &xml[body_start..body_end];

    // 12 files of about 40 MB: 480 MB of TEI, several times the bound below.
    let dir = tempfile::tempdir().unwrap();
    let tei_dir = dir.path().join("tei");
    std::fs::create_dir(&tei_dir).unwrap();
    let copies = (40 << 20) / body.len();
    let files = 12;
    for i in 0..files {
        let name = format!("{:040x}.tei.xml", 0x5eed_0000_u64 + i);
        let mut out = std::io::BufWriter::new(std::fs::File::create(tei_dir.join(name)).unwrap());
        out.write_all(&xml.as_bytes()[..body_start]).unwrap();
        for _ in 0..copies {
            out.write_all(body.as_bytes()).unwrap();
        }
        out.write_all(&xml.as_bytes()[body_end..]).unwrap();
        out.flush().unwrap();
    }

    let store = dir.path().join("store");
    ok(
        &store,
        &["import-tei", "--quiet", tei_dir.to_str().unwrap()],
    );
    let peak = children_peak_rss();
    eprintln!(
        "import-tei of {files} files of ~40 MB: peak RSS {} MB",
        peak >> 20
    );
    assert!(peak < 512 << 20, "peak RSS {} MB", peak >> 20);

    let rows = ok(&store, &["export", "--columns", "grobid0:quality"]);
    assert_eq!(
        rows.lines().count(),
        files as usize,
        "every file became a row"
    );
}
