//! The temporary directory of the demo: its repository, the children's HOME, and the
//! hermetic environment every child process runs in.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::hermetic::{Hermetic, Person};

use super::DemoError;
use super::script::FILES;

/// The temporary directory: the demo repository and the children's HOME.
pub(super) struct Sandbox {
    pub(super) dir: tempfile::TempDir,
    pub(super) keep: bool,
    /// The demo repository.
    pub(super) repo: PathBuf,
    pub(super) home: PathBuf,
    /// This very binary: the demo shows the real thing.
    pub(super) exe: PathBuf,
}

impl Sandbox {
    pub(super) fn create(keep: bool) -> Result<Sandbox, DemoError> {
        let exe = std::env::current_exe().map_err(DemoError::NoBinary)?;
        let dir = tempfile::Builder::new()
            .prefix("git-baton-demo.")
            .disable_cleanup(keep)
            .tempdir()
            .map_err(|source| DemoError::TempDir {
                dir: std::env::temp_dir(),
                source,
            })?;
        // Canonical, so that the paths git and git-baton print agree with ours (/tmp may be a
        // symbolic link, as on macOS).
        let root = dir
            .path()
            .canonicalize()
            .unwrap_or_else(|_| dir.path().to_path_buf());
        let sandbox = Sandbox {
            repo: root.join("repo"),
            home: root.join("home"),
            dir,
            keep,
            exe,
        };
        let created = |path: &Path| {
            std::fs::create_dir_all(path).map_err(|source| DemoError::CreateDir {
                path: path.to_path_buf(),
                source,
            })
        };
        created(&sandbox.repo)?;
        created(&sandbox.home.join(".config"))?;
        std::fs::write(sandbox.home.join(".gitconfig"), "").map_err(DemoError::GitConfig)?;
        Ok(sandbox)
    }

    /// A command run in the demo repository with the hermetic environment and nothing else
    /// (besides PATH, to find git and sh, and TMPDIR).
    pub(super) fn command(&self, program: &Path) -> Command {
        let demo = Person::new("git-baton demo", "demo@git-baton.invalid");
        let mut cmd = Hermetic::new(&self.home)
            .identity(demo.clone(), demo)
            .unpinned_dates()
            .keep("TMPDIR")
            .command(program);
        cmd.current_dir(&self.repo).stdin(Stdio::null());
        cmd
    }

    /// Runs git quietly; its failure is an environment problem.
    pub(super) fn git(&self, args: &[&str]) -> Result<(), DemoError> {
        let mut cmd = self.command(Path::new("git"));
        cmd.args(args)
            // The base commit is the same in every demo.
            .envs(crate::hermetic::pinned_dates());
        let output = cmd.output().map_err(DemoError::NoGit)?;
        if !output.status.success() {
            return Err(DemoError::Setup {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(())
    }

    /// Writes the files and commits them as the base.
    pub(super) fn populate(&self) -> Result<(), DemoError> {
        self.git(&["init", "-q"])?;
        // Not `init -b`: older gits lack it, and the user's init.defaultBranch is not read.
        self.git(&["symbolic-ref", "HEAD", "refs/heads/main"])?;
        for (rel, text) in FILES {
            let path = self.repo.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|source| DemoError::File {
                    action: "create",
                    file: rel.to_string(),
                    source,
                })?;
            }
            std::fs::write(&path, text).map_err(|source| DemoError::File {
                action: "write",
                file: rel.to_string(),
                source,
            })?;
        }
        self.git(&["add", "-A"])?;
        self.git(&[
            "commit",
            "-q",
            "-m",
            "CDFD documents, a grade-review plan, demo actors",
        ])
    }

    /// Removes the directory, or says where it is kept.
    pub(super) fn finish(self, out: &mut dyn Write) -> Result<(), DemoError> {
        if self.keep {
            let repo = self.repo.display();
            let _ = writeln!(out, "\nThe demo repository is kept in {repo}. Look around:");
            let _ = writeln!(out, "  cd {repo} && git baton status");
            return Ok(());
        }
        let shown = self.dir.path().display().to_string();
        match self.dir.close() {
            Ok(()) => {
                let _ = writeln!(out, "\nThe demo repository has been removed.");
                Ok(())
            }
            Err(source) => Err(DemoError::Cleanup { dir: shown, source }),
        }
    }
}
