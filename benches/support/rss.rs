//! A child process's peak resident set size, read without unsafe code: shared by the `diff`
//! and `stress` benchmarks.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A child process's peak resident set size.
pub struct PeakRss {
    pub kib: u64,
    pub method: &'static str,
}

/// Runs `cmd` (its program, arguments, directory and the variables it sets or removes; a
/// cleared environment is not carried over) to completion, stdout and stderr discarded, and
/// measures its peak RSS.
///
/// With GNU time at `/usr/bin/time` the figure is the kernel's `ru_maxrss` of the child (exact;
/// Linux takes the largest of the child and the descendants it waited for).
/// Otherwise `/proc/<pid>/status` `VmHWM` of the child alone is polled every millisecond until it
/// exits, which can miss the last moments of its life: a lower bound.
pub fn peak_rss_of(cmd: &Command) -> Result<PeakRss, String> {
    let like = |program: &std::ffi::OsStr| {
        let mut out = Command::new(program);
        if let Some(dir) = cmd.get_current_dir() {
            out.current_dir(dir);
        }
        for (key, value) in cmd.get_envs() {
            match value {
                Some(value) => out.env(key, value),
                None => out.env_remove(key),
            };
        }
        out.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        out
    };
    let program = cmd.get_program();
    let time = Path::new("/usr/bin/time");
    if time.exists() {
        let out_file = tempfile::NamedTempFile::new().map_err(|err| err.to_string())?;
        let status = like(time.as_os_str())
            .arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(out_file.path())
            .arg(program)
            .args(cmd.get_args())
            .status()
            .map_err(|err| format!("cannot run /usr/bin/time: {err}"))?;
        let text = std::fs::read_to_string(out_file.path()).map_err(|err| err.to_string())?;
        // GNU time prefixes "Command exited with non-zero status N" when the child fails.
        if let Some(kib) = text.lines().last().and_then(|l| l.trim().parse().ok()) {
            let _ = status;
            return Ok(PeakRss {
                kib,
                method: "GNU time (ru_maxrss)",
            });
        }
    }
    let mut child = like(program)
        .args(cmd.get_args())
        .spawn()
        .map_err(|err| format!("cannot run {}: {err}", Path::new(program).display()))?;
    let status_path = format!("/proc/{}/status", child.id());
    let mut kib = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(line) = text.lines().find(|l| l.starts_with("VmHWM:"))
            && let Some(value) = line.split_whitespace().nth(1).and_then(|v| v.parse().ok())
        {
            kib = kib.max(value);
        }
        if child.try_wait().map_err(|err| err.to_string())?.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(PeakRss {
        kib,
        method: "/proc VmHWM polling (lower bound)",
    })
}
