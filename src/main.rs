//! The `arthur` binary: all behaviour lives in the library; this only hands over.

fn main() -> std::process::ExitCode {
    arthur::cli::main()
}
