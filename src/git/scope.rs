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
        list.sort();
        list.dedup();
        let mut kept: Vec<String> = Vec::with_capacity(list.len());
        for p in list {
            // Sorted order puts a parent right before the paths below it ("a" < "a/b" < "a0").
            if kept.last().is_some_and(|parent| is_within(&p, parent)) {
                continue;
            }
            kept.push(p);
        }
        Scope::Prefixes(kept)
    }

    /// The prefixes to visit; the whole repository is the single empty prefix.
    pub(super) fn prefix_list(&self) -> Vec<String> {
        match self {
            Scope::All => vec![String::new()],
            Scope::Prefixes(list) => list.clone(),
        }
    }

    pub fn contains(&self, path: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Prefixes(list) => list.iter().any(|p| is_within(path, p)),
        }
    }
}

fn is_within(path: &str, prefix: &str) -> bool {
    is_within_bytes(path.as_bytes(), prefix.as_bytes())
}

pub(super) fn is_within_bytes(path: &[u8], prefix: &[u8]) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
