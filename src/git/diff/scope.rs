//! Which part of the repository a diff looks at.

/// Which part of the repository a diff looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every path.
    All,
    /// Only paths equal to or below one of these prefixes (normalized: no overlaps, no trailing `/`).
    Prefixes(Vec<String>),
}

impl Scope {
    /// A scope covering `prefixes`; an empty prefix means the whole repository. Nested prefixes
    /// are folded into their parent so no path is visited twice.
    pub fn prefixes<I, S>(prefixes: I) -> Scope
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list: Vec<String> = prefixes
            .into_iter()
            .map(|p| p.as_ref().trim_matches('/').to_string())
            .collect();
        if list.iter().any(|p| p.is_empty()) {
            return Scope::All;
        }
        list.sort_unstable();
        list.dedup();
        Scope::Prefixes(fold_nested(list))
    }

    /// The prefixes to visit; the whole repository is the single empty prefix.
    pub(in crate::git) fn prefix_list(&self) -> Vec<String> {
        match self {
            Scope::All => vec![String::new()],
            Scope::Prefixes(list) => list.clone(),
        }
    }

    /// Whether `path` is at or below one of the prefixes: a lookup of the path and of each of its
    /// ancestors in the sorted list, so a scope of many prefixes costs no more than a few.
    pub fn contains(&self, path: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Prefixes(list) => {
                let path = path.trim_end_matches('/');
                list.binary_search_by(|p| p.as_str().cmp(path)).is_ok()
                    || has_ancestor_in(list, path)
            }
        }
    }
}

/// `sorted` (byte order, no duplicates) without the paths below another of its paths, in one pass.
///
/// The paths a string is a byte prefix of sort right after it, in one run, so the kept paths
/// that are byte prefixes of the current one form a stack: each is a byte prefix of the next, and
/// one that is not a byte prefix of the current path is a prefix of no later path either. A parent
/// does not always sort right before the paths below it (`a` < `a-b` < `a/b`), which is why a
/// stack rather than the last path kept; a path is below the stack's top when a `/` follows it.
fn fold_nested(sorted: Vec<String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::with_capacity(sorted.len());
    // Indices into `kept`.
    let mut open: Vec<usize> = Vec::new();
    for p in sorted {
        while let Some(&top) = open.last()
            && !p.starts_with(kept[top].as_str())
        {
            open.pop();
        }
        // Only the innermost can have `p` below it: had one under it, the innermost (a longer
        // byte prefix of `p`) would be below that one too, and not kept.
        let below = open
            .last()
            .is_some_and(|&k| p.as_bytes().get(kept[k].len()) == Some(&b'/'));
        if below {
            continue;
        }
        open.push(kept.len());
        kept.push(p);
    }
    kept
}

/// Whether a proper ancestor directory of `path` is in `sorted`.
fn has_ancestor_in(sorted: &[String], path: &str) -> bool {
    path.match_indices('/').any(|(at, _)| {
        sorted
            .binary_search_by(|p| p.as_str().cmp(&path[..at]))
            .is_ok()
    })
}

pub(in crate::git) fn is_within_bytes(path: &[u8], prefix: &[u8]) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fold as first written: every ancestor of each path looked up in the paths kept.
    fn fold_by_lookup(sorted: Vec<String>) -> Vec<String> {
        let mut kept: Vec<String> = Vec::with_capacity(sorted.len());
        for p in sorted {
            if !has_ancestor_in(&kept, &p) {
                kept.push(p);
            }
        }
        kept
    }

    proptest::proptest! {
        /// Paths over a small alphabet that sorts around `/` (`-` and `.` before it, `0` and
        /// letters after), so that parents, siblings and extensions interleave.
        #[test]
        fn folding_in_one_pass_keeps_what_lookups_keep(
            paths in proptest::collection::vec("[ab.0-]{1,3}(/[ab.0-]{1,3}){0,3}", 0..40)
        ) {
            let mut sorted = paths;
            sorted.sort_unstable();
            sorted.dedup();
            proptest::prop_assert_eq!(fold_nested(sorted.clone()), fold_by_lookup(sorted));
        }
    }

    #[test]
    fn scope_folds_nested_prefixes_and_keeps_siblings() {
        let scope = Scope::prefixes(["src/parser/", "src", "docs/a.md", "docs/a.mdx", "src0"]);
        assert_eq!(
            scope,
            Scope::Prefixes(vec![
                "docs/a.md".into(),
                "docs/a.mdx".into(),
                "src".into(),
                "src0".into()
            ])
        );
        assert!(scope.contains("src/parser/x.rs"));
        assert!(scope.contains("docs/a.md"));
        assert!(!scope.contains("docs/a.mdy"));
        assert!(!scope.contains("src1/x"));
        assert_eq!(Scope::prefixes(["a", ""]), Scope::All);
        // Siblings that sort between a directory and the paths below it.
        let scope = Scope::prefixes(["a/b", "a-b", "a", "a.b/c", "a/b/c", "a0"]);
        assert_eq!(
            scope,
            Scope::Prefixes(vec!["a".into(), "a-b".into(), "a.b/c".into(), "a0".into()])
        );
        assert!(scope.contains("a/b/c/d") && scope.contains("a-b") && scope.contains("a.b/c/"));
        assert!(!scope.contains("a.b") && !scope.contains("ab") && !scope.contains("a.b/d"));
    }
}
