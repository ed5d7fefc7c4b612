//! Changes that do not count: a target whose every changed path changed only in whitespace, line
//! endings or file mode is `touched`, not `changed`, and fails the gate like an uncovered one —
//! unless the plan says such changes are the work (`trivial: counts`, docs/plan-format.md).
//!
//! [`is_trivial`] decides one path from its two sides, given as values: this module reads
//! nothing. The callers fetch the sides — two blobs in range mode, a blob and the worktree file
//! in worktree mode, a blob and a snapshot's blob for a run — bounded by what they read.
//!
//! # What is trivial (docs/coverage.md#changes-that-do-not-count)
//!
//! - Both sides are regular files (executable or not) or both symbolic links, and their bytes
//!   are equal: a change of file mode only.
//! - Both sides are regular text files whose words are equal: the sequences of maximal runs of
//!   bytes other than ASCII whitespace (space, tab, LF, CR, vertical tab, form feed) are the same.
//!   So indentation, trailing blanks, blank lines, a final newline and CRLF↔LF are trivial;
//!   joining `int x` into `intx` is not, nor is any change to a word.
//! - A file added whose contents are empty or only ASCII whitespace.
//!
//! Anything else is a real change: a deleted file, a type change (file ↔ symlink ↔ submodule), a
//! submodule moved to another commit, a symlink's new target, any byte of a binary file (git's
//! rule: a NUL within its first 8,000 bytes), and a side the caller did not read (over its bound,
//! or something git cannot store). Unknown is never trivial: the rule may only fail a target when
//! it is sure nothing but whitespace changed.

use super::{Report, TargetReport, TargetStatus, check_reason};
use crate::plan::Plan;

/// How much of a file decides that it is binary, as git decides it (`buffer_is_binary`).
const BINARY_PREFIX: usize = 8000;

/// What a path is on one side of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file; whether it is executable is its mode, which alone is trivial.
    File {
        executable: bool,
    },
    Symlink,
    /// A gitlink: a commit of another repository.
    Submodule,
}

/// One side of a changed path: its kind and, when the caller read them, its bytes (a symbolic
/// link's are its target). `bytes: None` is a side too large or too strange to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side<'a> {
    pub kind: FileKind,
    pub bytes: Option<&'a [u8]>,
}

/// Whether the change from `old` to `new` (`None`: absent on that side) is trivial (see the
/// module documentation).
#[must_use]
pub fn is_trivial(old: Option<Side<'_>>, new: Option<Side<'_>>) -> bool {
    let Some(new) = new else {
        // Deleting a file is work, whatever it held.
        return false;
    };
    let Some(new_bytes) = new.bytes else {
        return false;
    };
    let Some(old) = old else {
        return matches!(new.kind, FileKind::File { .. })
            && !is_binary(new_bytes)
            && words(new_bytes).next().is_none();
    };
    let Some(old_bytes) = old.bytes else {
        return false;
    };
    match (old.kind, new.kind) {
        (FileKind::File { .. }, FileKind::File { .. }) => {
            old_bytes == new_bytes
                || (!is_binary(old_bytes)
                    && !is_binary(new_bytes)
                    && same_words(old_bytes, new_bytes))
        }
        (FileKind::Symlink, FileKind::Symlink) => old_bytes == new_bytes,
        _ => false,
    }
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_PREFIX)].contains(&0)
}

/// ASCII whitespace as C's `isspace` has it: Rust's `is_ascii_whitespace` leaves out the
/// vertical tab. No byte of a multi-byte UTF-8 character is one of these.
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn words(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|b| is_space(*b)).filter(|w| !w.is_empty())
}

fn same_words(a: &[u8], b: &[u8]) -> bool {
    words(a).eq(words(b))
}

impl Report {
    /// Marks each `changed` row whose every path `trivial` calls trivial as `touched`, unless the
    /// plan lets such changes count for its target. A touched target is judged as if the diff had
    /// not changed it: an `unchanged` entry for it, kept as a contradiction while the change
    /// counted, now gives its reason when the reason is acceptable (the row is then `unchanged`).
    ///
    /// `trivial` is asked about a row's paths in order and not past the first real change, so a
    /// real change costs one question per target. Run this before [`Report::bounded`], on the
    /// rows `evaluate` made from `plan.targets`.
    pub fn mark_touched<E>(
        &mut self,
        plan: &Plan,
        mut trivial: impl FnMut(&str) -> Result<bool, E>,
    ) -> Result<(), E> {
        for (row, target) in self.targets.iter_mut().zip(&plan.targets) {
            if row.status != TargetStatus::Changed
                || row.paths.is_empty()
                || plan.trivial_counts(target)
            {
                continue;
            }
            let mut all = true;
            for path in &row.paths {
                if !trivial(path)? {
                    all = false;
                    break;
                }
            }
            if !all {
                continue;
            }
            row.status = TargetStatus::Touched;
            let explained = self
                .contradictions
                .iter()
                .position(|c| c.target == row.target && check_reason(&c.reason).is_ok());
            if let Some(i) = explained {
                let contradiction = self.contradictions.remove(i);
                row.status = TargetStatus::Unchanged;
                row.paths.clear();
                row.reason = Some(contradiction.reason);
                row.reason_source = Some(contradiction.source);
            }
        }
        self.passed = self.passed && self.targets.iter().all(|row| !row.status.fails());
        Ok(())
    }

    /// The targets whose only changes do not count.
    pub fn touched(&self) -> impl Iterator<Item = &TargetReport> {
        self.targets
            .iter()
            .filter(|row| row.status == TargetStatus::Touched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::evaluate;
    use crate::coverage::test_support::evidence;

    const FILE: FileKind = FileKind::File { executable: false };
    const EXEC: FileKind = FileKind::File { executable: true };

    fn file(bytes: &[u8]) -> Option<Side<'_>> {
        Some(Side {
            kind: FILE,
            bytes: Some(bytes),
        })
    }

    fn trivial(old: &[u8], new: &[u8]) -> bool {
        is_trivial(file(old), file(new))
    }

    #[test]
    fn whitespace_line_endings_and_blank_lines_are_trivial() {
        assert!(trivial(b"fn a() {}\n", b"fn a() {}\n\n"));
        assert!(trivial(b"a\nb\n", b"a\r\nb\r\n"));
        assert!(trivial(b"a\r\nb\r\n", b"a\nb"));
        assert!(trivial(b"  x = 1\n", b"\tx = 1   \n"));
        assert!(trivial(b"a b", b"a\x0b\x0cb"));
        assert!(trivial("é  ü\n".as_bytes(), "é ü".as_bytes()));
        // Identical sides: nothing but whatever made the diff name the path.
        assert!(trivial(b"same", b"same"));
    }

    #[test]
    fn a_word_changed_joined_or_split_is_real() {
        assert!(!trivial(b"int x;", b"intx;"));
        assert!(!trivial(b"ab", b"a b"));
        assert!(!trivial(b"a\n", b"b\n"));
        assert!(!trivial(b"a\n", b"a\n.\n"));
        // A non-breaking space is not ASCII whitespace: its bytes are a word of their own.
        assert!(!trivial("a b".as_bytes(), "a\u{a0}b".as_bytes()));
    }

    #[test]
    fn mode_only_changes_are_trivial_type_changes_are_not() {
        let exec = Some(Side {
            kind: EXEC,
            bytes: Some(b"#!/bin/sh\n"),
        });
        assert!(is_trivial(file(b"#!/bin/sh\n"), exec));
        assert!(is_trivial(
            file(b"#!/bin/sh\n"),
            Some(Side {
                kind: EXEC,
                bytes: Some(b"#!/bin/sh\r\n")
            })
        ));
        let link = |to: &'static [u8]| {
            Some(Side {
                kind: FileKind::Symlink,
                bytes: Some(to),
            })
        };
        assert!(!is_trivial(file(b"target"), link(b"target")));
        assert!(!is_trivial(link(b"a"), link(b"a ")));
        assert!(is_trivial(link(b"a"), link(b"a")));
        let module = Some(Side {
            kind: FileKind::Submodule,
            bytes: Some(b"0123"),
        });
        assert!(!is_trivial(module, module));
    }

    #[test]
    fn binary_files_compare_byte_for_byte() {
        assert!(!trivial(b"\0a b", b"\0a  b"));
        assert!(!trivial(b"a b", b"\0a b"));
        assert!(trivial(b"\0a b", b"\0a b"));
        // git's rule: a NUL past the first 8,000 bytes leaves a file text.
        let mut late = vec![b'x'; BINARY_PREFIX];
        late.push(0);
        let mut spaced = late.clone();
        spaced.push(b'\n');
        assert!(trivial(&late, &spaced));
    }

    #[test]
    fn added_deleted_and_unread_sides() {
        assert!(is_trivial(None, file(b"")));
        assert!(is_trivial(None, file(b" \n\r\n\t")));
        assert!(!is_trivial(None, file(b"x")));
        assert!(!is_trivial(None, file(b"\0")));
        assert!(!is_trivial(file(b""), None));
        assert!(!is_trivial(None, None));
        let unread = Some(Side {
            kind: FILE,
            bytes: None,
        });
        assert!(!is_trivial(unread, file(b"a")));
        assert!(!is_trivial(file(b"a"), unread));
        assert!(!is_trivial(None, unread));
        let empty_link = Some(Side {
            kind: FileKind::Symlink,
            bytes: Some(b""),
        });
        assert!(!is_trivial(None, empty_link));
    }

    fn plan(text: &str) -> Plan {
        crate::plan::parse("p.md", text).expect("test plan parses")
    }

    #[test]
    fn a_target_is_touched_when_every_path_is_trivial() {
        let plan = plan("---\ntargets: [a.md, src/, c.md, d.md]\n---\n");
        let changed: Vec<String> = ["a.md", "c.md", "src/x.rs", "src/y.rs"]
            .map(String::from)
            .to_vec();
        let mut report = evaluate(&plan.targets, &changed, &[], &[]);
        let mut asked = Vec::new();
        report
            .mark_touched(&plan, |path| {
                asked.push(path.to_owned());
                Ok::<_, ()>(path != "src/x.rs")
            })
            .unwrap();
        let statuses: Vec<TargetStatus> = report.targets.iter().map(|r| r.status).collect();
        assert_eq!(
            statuses,
            [
                TargetStatus::Touched,
                TargetStatus::Changed,
                TargetStatus::Touched,
                TargetStatus::Uncovered
            ]
        );
        // Not past the first real change of `src/`; never about an unchanged target.
        assert_eq!(asked, ["a.md", "src/x.rs", "c.md"]);
        assert_eq!(report.targets[0].paths, ["a.md"]);
        assert!(!report.passed);
        assert!(report.failing().any(|r| r.target == "a.md"));
        let json = serde_json::to_value(&report.targets[0]).unwrap();
        assert_eq!(json["status"], "touched");
    }

    #[test]
    fn trivial_counts_per_plan_and_per_target() {
        let changed = vec!["a.md".to_string(), "b.md".to_string()];
        let statuses = |text: &str| {
            let plan = plan(text);
            let mut report = evaluate(&plan.targets, &changed, &[], &[]);
            report.mark_touched(&plan, |_| Ok::<_, ()>(true)).unwrap();
            (
                report.targets.iter().map(|r| r.status).collect::<Vec<_>>(),
                report.passed,
            )
        };
        use TargetStatus::{Changed, Touched};
        assert_eq!(
            statuses("---\ntargets: [a.md, b.md]\n---\n"),
            (vec![Touched, Touched], false)
        );
        assert_eq!(
            statuses("---\ntrivial: counts\ntargets: [a.md, b.md]\n---\n"),
            (vec![Changed, Changed], true)
        );
        assert_eq!(
            statuses("---\ntargets:\n  - {path: a.md, trivial: counts}\n  - b.md\n---\n"),
            (vec![Changed, Touched], false)
        );
        assert_eq!(
            statuses(
                "---\ntrivial: counts\ntargets:\n  - a.md\n  - path: b.md\n    trivial: touched\n---\n"
            ),
            (vec![Changed, Touched], false)
        );
    }

    #[test]
    fn an_acceptable_reason_explains_a_touched_target() {
        let plan = plan("---\ntargets: [a.md, b.md]\n---\n");
        let changed = vec!["a.md".to_string(), "b.md".to_string()];
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "a.md", "status": "unchanged", "reason": "the wording was already correct, only the indentation moved"},
                {"target": "b.md", "status": "unchanged", "reason": "n/a"}
            ]}"#,
        );
        let mut report = evaluate(&plan.targets, &changed, &entries, &[]);
        assert_eq!(report.contradictions.len(), 2);
        report.mark_touched(&plan, |_| Ok::<_, ()>(true)).unwrap();
        assert_eq!(report.targets[0].status, TargetStatus::Unchanged);
        assert!(report.targets[0].paths.is_empty());
        assert!(
            report.targets[0]
                .reason
                .as_deref()
                .unwrap()
                .contains("indentation")
        );
        // A placeholder explains nothing: still touched, still failing.
        assert_eq!(report.targets[1].status, TargetStatus::Touched);
        assert_eq!(report.contradictions.len(), 1);
        assert!(!report.passed);
    }
}
