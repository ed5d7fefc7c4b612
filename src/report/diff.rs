//! Unified diffs of one file between two snapshots, rendered with `similar`.

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
