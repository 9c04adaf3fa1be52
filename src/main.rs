fn main() -> std::process::ExitCode {
    sediment::cli::main()
}
