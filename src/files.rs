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

/// Reads `path` whole unless it holds more than `limit` bytes: `Ok(None)` then, found from its
/// size before anything is read, or, for a file that does not know its size (a pipe, a device)
/// or that grows while it is read, after reading one byte more than the limit.
pub fn read_limited(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    if file.metadata()?.len() > limit {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_limited_stops_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"12345").unwrap();
        assert_eq!(
            read_limited(&file, 5).unwrap().as_deref(),
            Some(&b"12345"[..])
        );
        assert_eq!(read_limited(&file, 4).unwrap(), None);
        let missing = read_limited(&dir.path().join("missing"), 5).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        // A device without a size is cut off after the limit, not read forever.
        #[cfg(unix)]
        assert_eq!(read_limited(Path::new("/dev/zero"), 1024).unwrap(), None);
    }
}
