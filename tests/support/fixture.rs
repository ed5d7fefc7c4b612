//! A fixture builder: a repository with files, plans and a `.baton.yml` in one expression,
//! committed as `base` on `main` (and, for the gate's tests, with a branch checked out).

use std::path::Path;

use super::TestRepo;

/// The files of a repository to be; [`Fixture::commit`] or [`Fixture::on_feature`] make it.
#[must_use]
pub struct Fixture {
    files: Vec<(String, String)>,
}

impl TestRepo {
    /// A fixture with no files yet; see [`Fixture`].
    pub fn with() -> Fixture {
        Fixture { files: Vec::new() }
    }
}

impl Fixture {
    pub fn file(mut self, path: &str, content: &str) -> Fixture {
        self.files.push((path.to_owned(), content.to_owned()));
        self
    }

    pub fn files(self, files: &[(&str, &str)]) -> Fixture {
        files
            .iter()
            .fold(self, |fixture, (path, content)| fixture.file(path, content))
    }

    /// Small files whose content is their name without the directory and extension:
    /// `docs/a.md` holds `a\n`.
    pub fn named(self, paths: &[&str]) -> Fixture {
        paths.iter().fold(self, |fixture, path| {
            let stem = path.rsplit('/').next().unwrap_or(path);
            let stem = stem.split('.').next().unwrap_or(stem);
            fixture.file(path, &format!("{stem}\n"))
        })
    }

    /// The runs' three documents, `docs/a.md`, `docs/b.md` and `docs/c.md`: a title and the old
    /// rule.
    pub fn old_rule_docs(self) -> Fixture {
        self.files(&[
            ("docs/a.md", "# A\n\nThe old rule.\n"),
            ("docs/b.md", "# B\n\nThe old rule.\n"),
            ("docs/c.md", "# C\n\nThe old rule.\n"),
        ])
    }

    /// A plan at `path` with `title` and `targets`; see [`plan_text`].
    pub fn plan(self, path: &str, title: &str, targets: &[&str]) -> Fixture {
        self.file(path, &plan_text(title, targets))
    }

    /// The gate's plan of one target: `plans/p.md` ("Docs") with the target `docs/a.md`, which
    /// holds `a`.
    pub fn one_doc(self) -> Fixture {
        self.plan("plans/p.md", "Docs", &["docs/a.md"])
            .named(&["docs/a.md"])
    }

    /// The gate's usual plan: `plans/p.md` ("Two docs") with the targets `docs/a.md` and
    /// `docs/b.md`, which hold `a` and `b`.
    pub fn two_docs(self) -> Fixture {
        self.plan("plans/p.md", "Two docs", &["docs/a.md", "docs/b.md"])
            .named(&["docs/a.md", "docs/b.md"])
    }

    /// `docs/a.md`, a plan with no targets, `plans/work.md`, and one actor, `committer`, the
    /// executor, that runs `script` (which commits its own work) with `sh -c`.
    pub fn committer(self, script: &str) -> Fixture {
        let command = serde_json::to_string(script).unwrap();
        self.file("docs/a.md", "# A\n")
            .file(
                "plans/work.md",
                "---\ntitle: Commit some work\n---\n# Commit it\n",
            )
            .config(&format!(
                "actors:\n  committer:\n    command: [sh, -c, {command}]\npipeline:\n  - {{ stage: executor, actor: committer }}\n"
            ))
    }

    /// `.baton.yml`.
    pub fn config(self, yaml: &str) -> Fixture {
        self.file(".baton.yml", yaml)
    }

    /// The repository with the files committed as `base` on `main`.
    pub fn commit(self) -> TestRepo {
        self.commit_in(&std::env::temp_dir())
    }

    /// Like [`Self::commit`], in a new temporary directory under `parent`.
    pub fn commit_in(self, parent: &Path) -> TestRepo {
        let repo = TestRepo::new_in(parent);
        for (path, content) in &self.files {
            repo.write(path, content);
        }
        repo.commit_all("base");
        repo
    }

    /// The repository with the files committed on `main` and a new branch `feature` checked out.
    pub fn on_feature(self) -> TestRepo {
        let repo = self.commit();
        repo.git(["checkout", "-q", "-b", "feature"]);
        repo
    }

    /// [`Self::on_feature`] with one commit on `feature`, whose `message` is the caller's:
    /// `docs/a.md` edited to `a, edited`.
    pub fn with_a_edited(self, message: &str) -> TestRepo {
        let repo = self.on_feature();
        repo.write("docs/a.md", "a, edited\n");
        repo.commit_all(message);
        repo
    }
}

/// Plan text with a title on line 2 and one target per line from line 4 on.
pub fn plan_text(title: &str, targets: &[&str]) -> String {
    let mut text = format!("---\ntitle: {title}\ntargets:\n");
    for target in targets {
        text.push_str(&format!("  - \"{target}\"\n"));
    }
    text.push_str("---\n# The work\n\nDo it.\n");
    text
}
