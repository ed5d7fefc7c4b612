//! Command-line interface (work in progress).
pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
