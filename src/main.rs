use std::process::ExitCode;

fn main() -> ExitCode {
    git_baton::cli::main()
}
