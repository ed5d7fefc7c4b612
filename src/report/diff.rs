//! What one attempt changed: the summary line, and unified diffs of each file between two
//! snapshots, rendered with `similar`.

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

/// One changed file of an attempt; the contents are read only when asked for.
#[derive(Debug)]
pub struct FileChange {
    pub path: String,
    /// `None`: the file is absent on that side (or its contents were not asked for).
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
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
                file.before.as_deref(),
                file.after.as_deref(),
            ));
        }
    }
    out
}

/// A git-style unified diff of `path` from `before` to `after` (`None`: the file is absent).
pub fn render(path: &str, before: Option<&[u8]>, after: Option<&[u8]>) -> String {
    let (a, b) = (
        before.map_or("/dev/null".to_string(), |_| format!("a/{path}")),
        after.map_or("/dev/null".to_string(), |_| format!("b/{path}")),
    );
    let is_binary = |data: Option<&[u8]>| data.is_some_and(|d| d.contains(&0));
    if is_binary(before) || is_binary(after) {
        return format!("diff {a} {b}\nBinary files differ\n");
    }
    let old = String::from_utf8_lossy(before.unwrap_or_default());
    let new = String::from_utf8_lossy(after.unwrap_or_default());
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
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

    #[test]
    fn renders_added_changed_and_deleted_files() {
        insta::assert_snapshot!(render("docs/a.md", Some(b"one\ntwo\n"), Some(b"one\n2\n")), @r"
        --- a/docs/a.md
        +++ b/docs/a.md
        @@ -1,2 +1,2 @@
         one
        -two
        +2
        ");
        insta::assert_snapshot!(render("new.md", None, Some(b"x\n")), @r"
        --- /dev/null
        +++ b/new.md
        @@ -0,0 +1 @@
        +x
        ");
        insta::assert_snapshot!(render("bin", Some(b"\0"), None), @r"
        diff a/bin /dev/null
        Binary files differ
        ");
    }
}
