//! What the unit tests of every module share: real git run in a temporary directory, without
//! the user's or the system's configuration. Compiled for tests only; the integration tests
//! have theirs in `tests/support`.

use std::path::{Path, PathBuf};

use crate::hermetic::Hermetic;

mod source;
pub(crate) use source::{after_visibility, code_only, functions, without_comments};

/// Runs `git args` in `dir` with the hermetic environment (no global or system configuration,
/// git-baton's own identity, pinned dates) and returns its stdout; a failure fails the test
/// with git's stderr.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Hermetic::new(dir)
        .global_config("/dev/null")
        .command("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A new repository in a new temporary directory, `git init` given `args` as well.
pub(crate) fn git_init(args: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut init = vec!["init", "-q"];
    init.extend_from_slice(args);
    git(dir.path(), &init);
    dir
}

/// Makes a named pipe at `path`: what an agent can leave where git-baton reads a file.
#[cfg(unix)]
pub(crate) fn fifo(path: impl AsRef<Path>) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path.as_ref(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("a named pipe");
}

/// `f`'s result, computed on a thread of its own: a test of a reader that must never wait (on
/// a named pipe, say) fails after a minute instead of hanging the suite.
pub(crate) fn without_waiting<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("done within a minute, without waiting on anything")
}

/// Every `.rs` file of the crate's `src/`, in path order, as its path below `src/` and its text:
/// what the tests that read the crate's own source walk.
pub(crate) fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect_rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|file| {
            let shown = file
                .strip_prefix(&src)
                .expect("below src/")
                .display()
                .to_string();
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            (shown, text)
        })
        .collect()
}

fn collect_rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .expect("a readable source directory")
            .map(|e| e.expect("a readable directory entry").path())
            .collect();
        entries.sort();
        for entry in entries {
            collect_rust_files(&entry, out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}
