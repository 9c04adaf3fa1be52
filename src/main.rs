// jemalloc for the whole process (the `jemalloc` feature, default): RocksDB's block
// buffers come and go with every read, and glibc's malloc and free were 12-23 % of a
// server's CPU in the profiles of issue 36. A library user's program chooses its own allocator.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    sediment::run_cli()
}
