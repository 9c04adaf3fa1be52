fn main() -> std::process::ExitCode {
    sediment::run_cli()
}
