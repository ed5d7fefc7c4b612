//! File-system helpers every module shares: I/O errors as short phrases for `error:` lines,
//! and paths as the repository names them.

use std::path::Path;

/// The path of `full` relative to the worktree root, `/`-separated, when it lies inside it.
pub fn repo_relative(workdir: &Path, full: &Path) -> Option<String> {
    let full = full.canonicalize().ok()?;
    let workdir = workdir.canonicalize().ok()?;
    let rel = full.strip_prefix(workdir).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// An I/O error as a short lowercase phrase, without Rust's "(os error N)".
pub fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "is a directory".into(),
        _ => {
            let text = err.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            text.to_lowercase()
        }
    }
}
