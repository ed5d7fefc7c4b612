//! File-system helpers every module shares: I/O errors as short phrases for `error:` lines,
//! paths as the repository names them, files replaced whole or not at all, and the failure
//! injection points tests use to prove what a failure or a crash at one step leaves.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A step of [`write_atomic`] that failed, with the path it failed on.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {}: {}", .path.display(), io_reason(.source))]
pub struct AtomicWriteError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes `bytes` to `path` so that a reader sees either the old or the new content, whatever is
/// killed when: temp file in the same directory, fsync, rename over, fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), AtomicWriteError> {
    let failed = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| AtomicWriteError {
            action,
            path,
            source,
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = temporary_in(dir).map_err(failed("create a temporary file in", dir))?;
    tmp.write_all(bytes).map_err(failed("write", tmp.path()))?;
    tmp.as_file()
        .sync_all()
        .map_err(failed("sync", tmp.path()))?;
    // Between the temporary file and the rename: what a write killed midway leaves.
    if cfg!(debug_assertions) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if fail_point(&format!("write:{name}")) {
            return Err(failed("replace", path)(std::io::Error::other(
                "injected failure (GIT_BATON_FAIL_AT)",
            )));
        }
    }
    tmp.persist(path)
        .map_err(|e| failed("replace", path)(e.error))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(failed("sync", dir))
}

/// How the temporary file of an atomic write is named: [`TEMP_PREFIX`], the writer's pid, `-`,
/// exactly [`TEMP_RANDOM`] ASCII letters and digits, then [`TEMP_SUFFIX`]
/// (`.git-baton-4242-a1B2c3.tmp`): a name no other tool gives a file, which says who wrote it.
/// `doctor` takes for debris only what has this exact shape, and only once that writer is gone
/// (or the file is older than [`TEMP_SAFE_AGE`], when its pid names another process now).
pub const TEMP_PREFIX: &str = ".git-baton-";
pub const TEMP_SUFFIX: &str = ".tmp";
pub const TEMP_RANDOM: usize = 6;
/// An atomic write lasts milliseconds: a temporary file this old is no live write's, whatever
/// process its pid names now.
pub const TEMP_SAFE_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// A new temporary file in `dir`, named as [`temporary_writer`] recognises: every file
/// git-baton writes in place of another starts as one of these.
pub fn temporary_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
        .rand_bytes(TEMP_RANDOM)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(dir)
}

/// The pid of the process that made the temporary file `name`, when `name` is exactly the name
/// of one of git-baton's temporary files ([`temporary_in`]); `None` for any other name.
pub fn temporary_writer(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let (pid, random) = rest.split_once('-')?;
    let digits =
        !pid.is_empty() && !pid.starts_with('0') && pid.bytes().all(|b| b.is_ascii_digit());
    let pid: u32 = pid.parse().ok().filter(|_| digits)?;
    (i32::try_from(pid).is_ok()
        && random.len() == TEMP_RANDOM
        && random.bytes().all(|b| b.is_ascii_alphanumeric()))
    .then_some(pid)
}

/// Whether `name` is exactly the name of one of git-baton's temporary files ([`temporary_in`]).
pub fn is_temporary_name(name: &str) -> bool {
    temporary_writer(name).is_some()
}

/// Debug builds only: whether `GIT_BATON_FAIL_AT=<point>` asks for a failure at `point`, for
/// tests that prove what a failure there leaves (the caller fails as it would for real).
/// `GIT_BATON_FAIL_AT=<point>:kill` makes the process die right there of SIGKILL, as `kill -9`
/// would, for tests that prove what a crash there leaves; it does not return.
///
/// The points: run creation's steps (`snapshot`, `branch`, `worktree`, `state`, `publish`, see
/// `run::create`), `clean`'s (`clean:renamed`, `clean:worktree`, `clean:refs`, see
/// `run::lifecycle::clean`), `finish`'s (`finish:commit` before its commit, `finish:committed`
/// after it and before the branch moves, `finish:save` before the RunState says `finished`, see
/// `run::lifecycle::finish`), and `write:<file name>` in [`write_atomic`], after the temporary
/// file is written and before it replaces the file.
pub fn fail_point(point: &str) -> bool {
    if !cfg!(debug_assertions) {
        return false;
    }
    let Ok(wanted) = std::env::var("GIT_BATON_FAIL_AT") else {
        return false;
    };
    if wanted.strip_suffix(":kill") == Some(point) {
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    }
    wanted == point
}

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
    if let Some(not_a_file) = err.get_ref().and_then(|e| e.downcast_ref::<NotAFile>()) {
        return not_a_file.to_string();
    }
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

/// What a path that is not a regular file is, in the words `ls -l` readers use.
pub fn kind_name(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "named pipe (FIFO)";
        }
        if file_type.is_socket() {
            return "socket";
        }
        if file_type.is_char_device() {
            return "character device";
        }
        if file_type.is_block_device() {
            return "block device";
        }
    }
    if file_type.is_dir() {
        "directory"
    } else if file_type.is_symlink() {
        "symbolic link"
    } else if file_type.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

/// A path that was to be read as a file and is something else: refused unread.
#[derive(Debug, thiserror::Error)]
#[error("is a {kind}, not a regular file")]
pub struct NotAFile {
    pub kind: &'static str,
}

fn not_a_file(file_type: &std::fs::FileType) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        NotAFile {
            kind: kind_name(file_type),
        },
    )
}

/// Whether git records a file as executable: its owner may execute it (`100755`, else
/// `100644`), as git decides from a stat. Never on a system without Unix permissions.
pub fn git_executable(meta: &std::fs::Metadata) -> bool {
    permission_bits(meta) & 0o100 != 0
}

/// Whether any of the file's execute bits is set: what the digest of a repository's hooks and
/// configuration notes, so that a file made executable for anyone shows as a change.
pub fn anyone_may_execute(meta: &std::fs::Metadata) -> bool {
    permission_bits(meta) & 0o111 != 0
}

fn permission_bits(meta: &std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        0
    }
}

/// Whether opening or reading a file of this type can wait on another process for ever: a
/// named pipe without a writer blocks its reader's `open`, a socket cannot even be opened.
fn waits_on_others(file_type: &std::fs::FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        file_type.is_fifo() || file_type.is_socket()
    }
    #[cfg(not(unix))]
    {
        let _ = file_type;
        false
    }
}

/// Opens `path` for reading without ever waiting: non-blocking (a named pipe without a writer
/// opens at once instead of blocking until one comes), and without becoming the controlling
/// terminal. Symbolic links are followed, as reading a path does.
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
        )?;
        Ok(File::from(fd))
    }
    #[cfg(not(unix))]
    {
        File::open(path)
    }
}

/// Opens (creating it, empty, when absent) a lock file for writing without ever waiting, for a
/// lock in a directory an agent can write (an attempt's `agent.lock`): only a regular file is
/// taken. A named pipe, a socket, a device, a directory or a symbolic link there is refused with
/// a [`NotAFile`] error that names its kind — before it is opened, and again from the opened
/// file in case it was replaced in between. The open is non-blocking (a named pipe without a
/// reader fails at once instead of blocking until one comes) and does not follow a last
/// symbolic link.
pub fn open_lock_file(path: &Path) -> std::io::Result<File> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(not_a_file(&meta.file_type())),
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    #[cfg(unix)]
    let file = {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::WRONLY
                | OFlags::CREATE
                | OFlags::CLOEXEC
                | OFlags::NONBLOCK
                | OFlags::NOCTTY
                | OFlags::NOFOLLOW,
            Mode::from_raw_mode(0o644),
        )?;
        File::from(fd)
    };
    #[cfg(not(unix))]
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_a_file(&meta.file_type()));
    }
    Ok(file)
}

/// Opens `path` for reading if it is a regular file (symbolic links followed): a named pipe, a
/// socket, a device or a directory is refused with a [`NotAFile`] error that names its kind,
/// before it is opened, and again from the opened file in case it was replaced in between. An
/// agent can make any path of its worktree one of these, and opening a named pipe blocks for
/// ever; reading a device may never end.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_a_file(&meta.file_type()));
    }
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_a_file(&meta.file_type()));
    }
    Ok(file)
}

/// Reads `path` whole if it is a regular file (see [`open_regular`]).
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A read's or an open's result with a file that does not exist as `Ok(None)`: for the files
/// that may be absent (`.baton.yml`, a run record's files, a plan named in the worktree, a
/// run's lock).
pub fn if_present<T>(read: std::io::Result<T>) -> std::io::Result<Option<T>> {
    match read {
        Ok(value) => Ok(Some(value)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// [`read_regular`] as UTF-8 text, with the error `std::fs::read_to_string` gives otherwise.
pub fn read_regular_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_regular(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Reads `path` whole unless it holds more than `limit` bytes: `Ok(None)` then, found from its
/// size before anything is read, or, for a file that does not know its size (a device) or that
/// grows while it is read, after reading one byte more than the limit. For files a user names
/// (`--evidence /dev/zero` is refused as too large, promptly): a named pipe or a socket, whose
/// reading waits on another process, is refused unread, and no open ever blocks.
pub fn read_limited(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let meta = std::fs::metadata(path)?;
    if waits_on_others(&meta.file_type()) || meta.is_dir() {
        return Err(not_a_file(&meta.file_type()));
    }
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if waits_on_others(&meta.file_type()) || meta.is_dir() {
        return Err(not_a_file(&meta.file_type()));
    }
    read_bounded(file, meta.len(), limit)
}

/// [`read_limited`] for files an agent could have put there (an attempt's evidence): regular
/// files only (see [`open_regular`]).
pub fn read_limited_regular(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    read_bounded(file, len, limit)
}

fn read_bounded(file: File, len: u64, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    if len > limit {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// `path` made absolute and free of `.` and `..`, with symbolic links resolved in the part of
/// it that exists and the rest appended as it is: two spellings of one place compare equal,
/// whether or not it exists now.
pub fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut lexical = PathBuf::new();
    for component in absolute.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return lexical,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_are_resolved_whether_or_not_the_path_exists() {
        let base = std::env::temp_dir().join("no-such-dir-git-baton");
        assert_eq!(resolved(&base.join("./a/../b")), resolved(&base.join("b")));
        let real = tempfile::tempdir().unwrap();
        let here = real.path().canonicalize().unwrap();
        assert_eq!(resolved(&real.path().join("x/../y")), here.join("y"));
    }

    #[test]
    fn atomic_write_replaces_whole_files() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary files are left behind");
    }

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

    /// A named pipe without a writer, a socket and a device: refused at once, by kind, by
    /// every reader of files an agent could have made (a test that hung here would fail by the
    /// harness's timeout, not pass).
    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        // `files` is below the test helpers: the pipe is made by mkfifo(1).
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|status| status.success()));
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let link = dir.path().join("link-to-fifo");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let reason = |err: std::io::Error| io_reason(&err);
        for (path, kind) in [
            (&fifo, "named pipe (FIFO)"),
            (&link, "named pipe (FIFO)"),
            (&socket, "socket"),
        ] {
            let wanted = format!("is a {kind}, not a regular file");
            assert_eq!(reason(open_regular(path).unwrap_err()), wanted);
            assert_eq!(reason(read_regular(path).unwrap_err()), wanted);
            assert_eq!(reason(read_limited(path, 10).unwrap_err()), wanted);
            assert_eq!(reason(read_limited_regular(path, 10).unwrap_err()), wanted);
        }
        let device = Path::new("/dev/null");
        assert_eq!(
            reason(read_limited_regular(device, 10).unwrap_err()),
            "is a character device, not a regular file"
        );
        assert_eq!(
            reason(open_regular(dir.path()).unwrap_err()),
            "is a directory, not a regular file"
        );
        // A symbolic link to a regular file is read through, as reading a path does.
        let file = dir.path().join("f");
        std::fs::write(&file, "text").unwrap();
        let to_file = dir.path().join("link-to-file");
        std::os::unix::fs::symlink(&file, &to_file).unwrap();
        assert_eq!(read_regular_string(&to_file).unwrap(), "text");
    }
}
