//! What one attempt changed: the summary line, and unified diffs of each file between two
//! snapshots, rendered with `similar`.

use crate::git::{Contents, Unshowable, unshowable};
use crate::report::review::size;
use crate::report::status::duration;
use crate::state::Attempt;

/// What an attempt is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// The latest earlier attempt that has a snapshot.
    Attempt {
        stage: String,
        n: u32,
        actor: String,
    },
    /// The run's base commit: no earlier attempt has a snapshot.
    Base(String),
}

/// One changed file of an attempt; the contents are read only when asked for, and only up to
/// [`crate::git::CONTENTS_LIMIT`].
#[derive(Debug)]
pub struct FileChange {
    pub path: String,
    /// `None`: the file is absent on that side (or its contents were not asked for).
    pub before: Option<Contents>,
    pub after: Option<Contents>,
}

/// What one attempt changed relative to the snapshot before it.
#[derive(Debug)]
pub struct AttemptDiff {
    pub stage: String,
    pub attempt: Attempt,
    pub against: Against,
    pub files: Vec<FileChange>,
}

/// `git baton diff`: one summary line, then each file's diff, or with `name_only` its path.
pub fn attempt(diff: &AttemptDiff, name_only: bool) -> String {
    let a = &diff.attempt;
    let outcome = a.outcome.map_or("running", |o| o.name());
    let took = a
        .duration_ms
        .map(|ms| format!(", {}", duration(ms)))
        .unwrap_or_default();
    let against = match &diff.against {
        Against::Attempt { stage, n, actor } => format!("attempt {n} of {stage} (actor {actor})"),
        Against::Base(base) => format!("the base {}", &base[..12.min(base.len())]),
    };
    let changed = match diff.files.len() {
        0 => "changed nothing".to_string(),
        1 => "1 path changed".to_string(),
        k => format!("{k} paths changed"),
    };
    let mut out = format!(
        "attempt {} of {} (actor {}, {outcome}{took}) against {against}: {changed}\n",
        a.n, diff.stage, a.actor
    );
    for file in &diff.files {
        if name_only {
            out.push_str(&file.path);
            out.push('\n');
        } else {
            out.push_str(&render(
                &file.path,
                file.before.as_ref(),
                file.after.as_ref(),
            ));
        }
    }
    out
}

/// A git-style unified diff of `path` from `before` to `after` (`None`: the file is absent).
pub fn render(path: &str, before: Option<&Contents>, after: Option<&Contents>) -> String {
    let (a, b) = (
        before.map_or("/dev/null".to_string(), |_| format!("a/{path}")),
        after.map_or("/dev/null".to_string(), |_| format!("b/{path}")),
    );
    match unshowable([before, after]) {
        Some(Unshowable::Special(kind)) => {
            return format!("diff {a} {b}\n({kind}: not a file git can store)\n");
        }
        Some(Unshowable::Binary) => return format!("diff {a} {b}\nBinary files differ\n"),
        Some(Unshowable::Large(bytes)) => {
            return format!(
                "diff {a} {b}\n(a side of {} is too large to show here; `git diff` shows it)\n",
                size(bytes)
            );
        }
        None => {}
    }
    let text = |side: Option<&Contents>| match side {
        Some(Contents::Bytes(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
        _ => String::new(),
    };
    let (old, new) = (text(before), text(after));
    let diff = similar::TextDiff::from_lines(old.as_str(), new.as_str());
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    if body.is_empty() {
        // Same content: a mode change or a symlink retargeted to equal text.
        return format!("diff {a} {b}\n(mode or type changed)\n");
    }
    body
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::git::Contents;

    fn bytes(text: &[u8]) -> Contents {
        Contents::Bytes(text.to_vec())
    }

    #[test]
    fn renders_added_changed_and_deleted_files() {
        insta::assert_snapshot!(render("docs/a.md", Some(&bytes(b"one\ntwo\n")), Some(&bytes(b"one\n2\n"))), @r"
        --- a/docs/a.md
        +++ b/docs/a.md
        @@ -1,2 +1,2 @@
         one
        -two
        +2
        ");
        insta::assert_snapshot!(render("new.md", None, Some(&bytes(b"x\n"))), @r"
        --- /dev/null
        +++ b/new.md
        @@ -0,0 +1 @@
        +x
        ");
        insta::assert_snapshot!(render("bin", Some(&bytes(b"\0")), None), @r"
        diff a/bin /dev/null
        Binary files differ
        ");
        insta::assert_snapshot!(render("big", Some(&bytes(b"x\n")), Some(&Contents::Large(3 << 30))), @r"
        diff a/big b/big
        (a side of 3.0 GiB is too large to show here; `git diff` shows it)
        ");
    }
}
