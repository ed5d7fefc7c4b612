//! Which plans the gate checks, and against which targets.
//!
//! # The worktree (no head commit)
//!
//! The plans named, or else the `*.md` files under `plans_dir` that the worktree adds or
//! modifies, read from disk with the worktree's `.baton.yml`. The worktree is the user's own
//! checkout, and is trusted as it is.
//!
//! # A range (a head commit): the merge base is the gate
//!
//! A pull request must not be able to change the gate that judges it, so everything that
//! decides what is checked comes from the merge base: `.baton.yml` (hence `plans_dir`, which
//! must exist there), and the targets of every plan that existed there. A *base plan* is a
//! regular `*.md` file below `plans_dir` at the merge base. For each one the range touches:
//!
//! - still a file in the head commit: checked against its targets there **and** at the merge
//!   base; each target the range removed is a [`PlanChangeKind::TargetRemoved`] (emptying
//!   `targets` removes them all);
//! - gone, or no longer a regular file (a symbolic link, a directory): a
//!   [`PlanChangeKind::Deleted`] plan, or [`PlanChangeKind::Moved`] when a changed file of the
//!   same stem holds it now (`plans/p.MD`, `plans/p.markdown`, `old/p.md`); it is checked
//!   against its targets at the merge base.
//!
//! Plans the range adds are checked as the head commit has them, like before. A changed file
//! that discovery would not see but that is a plan all the same — a plan (frontmatter with
//! targets) below `plans_dir` in any letter case that is not a `*.md` file, or a symbolic link
//! there with a Markdown name — is [`PlanChangeKind::Undiscoverable`], and checked.
//!
//! A plan named on the command line that exists at the merge base gets the same treatment.
//!
//! Every [`PlanChange`] fails the gate. With `--allow-plan-changes` none does: the plans are
//! then taken as the head commit has them (a removed target is not checked, a deleted or hidden
//! plan is not checked), and each change is still reported, marked allowed, in every format.
//!
//! A base plan that does not parse at the merge base keeps no targets from there; a note says so.
//!
//! # Plans that commits name
//!
//! Without PLAN arguments, a plan that a `Baton-Plan` trailer of the range names (a run branch's
//! `finish` commit) is added to what discovery found, unless discovery already has it: in a
//! range, read like a PLAN argument but from the commits only — never from disk, which holds the
//! pull request's checkout — so a plan that existed at the merge base keeps its targets there;
//! in the worktree, read from disk. A named plan that is nowhere is an error, not a pass. Since
//! trailers are the pull request's own words, they can only add plans, never drop or replace one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{VerifyError, parse_plan};
use crate::config::Config;
use crate::files::repo_relative;
use crate::git::{CommitId, GitError, PathKind, Repo, Scope};
use crate::plan::{self, Plan};

/// What a range did to a plan that gates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PlanChangeKind {
    TargetRemoved,
    Deleted,
    Moved,
    Undiscoverable,
}

/// One change of a range to a plan that gates it; see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PlanChange {
    /// The plan: its path at the merge base, or for `undiscoverable`, in the head commit.
    pub plan: String,
    pub kind: PlanChangeKind,
    /// `target_removed`: the target, and its line in the plan at the merge base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// `moved`: where the plan is in the head commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// What happened, as a sentence about the plan.
    pub message: String,
    /// `--allow-plan-changes` was given: reported, not failed.
    pub allowed: bool,
}

/// A plan to check, with the targets it is checked against.
pub(super) struct Selected {
    pub path: String,
    pub plan: Plan,
    /// Deleted by the range; checked as the merge base has it.
    pub deleted: bool,
}

impl Selected {
    fn new(path: &str, plan: Plan) -> Selected {
        Selected {
            path: path.to_owned(),
            plan,
            deleted: false,
        }
    }
}

/// The plans, what the range did to them, and the configuration they were found with.
#[derive(Default)]
pub(super) struct Selection {
    pub plans: Vec<Selected>,
    pub changes: Vec<PlanChange>,
    pub notes: Vec<String>,
    pub config: Config,
}

impl Selection {
    /// Whether the plan at `path` is already checked, or already a change.
    pub fn has(&self, path: &str) -> bool {
        self.plans.iter().any(|s| s.path == path) || self.changes.iter().any(|c| c.plan == path)
    }
}

/// The plan a `Baton-Plan` trailer of `commit` names, in the worktree: read from disk, like a
/// plan named on the command line.
pub(super) fn by_trailer_in_worktree(
    sel: &mut Selection,
    workdir: &Path,
    commit: &str,
    path: &str,
) -> Result<(), VerifyError> {
    let Some(bytes) = read_optional(&workdir.join(path))? else {
        return Err(VerifyError::TrailerPlanMissing {
            commit: crate::git::short_hex(commit).to_owned(),
            path: path.to_owned(),
            missing: "is not in the worktree",
        });
    };
    let (path, plan) = parse_plan(path, bytes)?;
    sel.plans.push(Selected::new(&path, plan));
    Ok(())
}

/// Without PLAN arguments in the worktree: the `*.md` files under `plans_dir` that `diff` shows
/// and that are still there.
pub(super) fn discover_in_worktree(
    workdir: &Path,
    plans_dir: &str,
    diff: impl Fn(&Scope) -> Result<Vec<String>, GitError>,
) -> Result<Vec<Selected>, VerifyError> {
    let mut plans = Vec::new();
    for path in diff(&Scope::prefixes([plans_dir]))? {
        if !is_discoverable(&path, plans_dir) {
            continue;
        }
        // A deleted plan is not a plan to check.
        if let Some(bytes) = read_optional(&workdir.join(&path))? {
            let (path, plan) = parse_plan(&path, bytes)?;
            plans.push(Selected::new(&path, plan));
        }
    }
    Ok(plans)
}

/// PLAN arguments in the worktree: read from disk.
pub(super) fn named_in_worktree(
    cwd: &Path,
    workdir: &Path,
    args: &[PathBuf],
) -> Result<Vec<Selected>, VerifyError> {
    let mut plans = Vec::new();
    for arg in args {
        let full = cwd.join(arg);
        let shown = repo_relative(workdir, &full).unwrap_or_else(|| arg.display().to_string());
        let (path, plan) = parse_plan(&shown, read_named(&full, arg)?)?;
        plans.push(Selected::new(&path, plan));
    }
    Ok(plans)
}

/// A pull request's range, judged against its merge base.
pub(super) struct Range<'a> {
    pub repo: &'a Repo,
    pub merge_base: CommitId,
    pub head: CommitId,
    /// `--allow-plan-changes`.
    pub allow: bool,
}

impl Range<'_> {
    /// Without PLAN arguments: the base plans the range touches, the plans it adds, and the
    /// plans it hides from discovery.
    pub fn discover(&self, config: Config) -> Result<Selection, VerifyError> {
        let dir = config.plans_dir.clone();
        if self.repo.path_kind_at(self.merge_base, &dir)? != Some(PathKind::Dir) {
            return Err(VerifyError::PlansDirMissing {
                suggestion: self.case_variant(&dir)?,
                merge_base: self.merge_base.short(),
                dir,
            });
        }
        let mut sel = Selection {
            config,
            ..Selection::default()
        };
        let changed = self
            .repo
            .tree_changes(self.merge_base, self.head, &Scope::All)?;
        let folded = format!("{}/", dir.to_ascii_lowercase());
        for path in changed
            .iter()
            .filter(|p| p.to_ascii_lowercase().starts_with(&folded))
        {
            let base = self.repo.path_kind_at(self.merge_base, path)?;
            let head = self.repo.path_kind_at(self.head, path)?;
            if !is_discoverable(path, &dir) {
                match head {
                    Some(PathKind::File) => {
                        let plan = self.read(self.head, path)?.and_then(|b| sniff(path, &b));
                        if let Some(plan) = plan {
                            self.hidden(&mut sel, path, Some(plan), &dir);
                        }
                    }
                    Some(PathKind::Symlink) if has_markdown_name(path) => {
                        self.hidden(&mut sel, path, None, &dir);
                    }
                    _ => {}
                }
                continue;
            }
            match (base, head) {
                (Some(PathKind::File), Some(PathKind::File)) => {
                    let head_plan = self.head_plan(path)?;
                    self.kept(&mut sel, path, head_plan)?;
                }
                (Some(PathKind::File), _) => self.deleted(&mut sel, path, &changed, &dir)?,
                (_, Some(PathKind::File)) => {
                    let plan = self.head_plan(path)?;
                    sel.plans.push(Selected::new(path, plan));
                }
                (_, Some(PathKind::Symlink)) => self.hidden(&mut sel, path, None, &dir),
                _ => {}
            }
        }
        Ok(sel)
    }

    /// PLAN arguments: each read from the head commit (from disk when the commit lacks it and
    /// the merge base does too), kept to its targets at the merge base when it had any there.
    pub fn named(
        &self,
        config: Config,
        cwd: &Path,
        workdir: &Path,
        args: &[PathBuf],
    ) -> Result<Selection, VerifyError> {
        let mut sel = Selection {
            config,
            ..Selection::default()
        };
        let dir = sel.config.plans_dir.clone();
        for arg in args {
            let full = cwd.join(arg);
            let relative = relative_to(workdir, &full);
            let shown = relative
                .clone()
                .unwrap_or_else(|| arg.display().to_string());
            let (head, at_base) = match &relative {
                Some(rel) => (
                    self.read(self.head, rel)?,
                    self.repo.path_kind_at(self.merge_base, rel)? == Some(PathKind::File),
                ),
                None => (None, false),
            };
            match head {
                Some(bytes) if at_base => {
                    let (_, plan) = parse_plan(&shown, bytes)?;
                    self.kept(&mut sel, &shown, plan)?;
                }
                Some(bytes) => {
                    let (_, plan) = parse_plan(&shown, bytes)?;
                    sel.plans.push(Selected::new(&shown, plan));
                }
                None if at_base => self.deleted(&mut sel, &shown, &[], &dir)?,
                // Not committed, or kept outside the repository.
                None => {
                    let (_, plan) = parse_plan(&shown, read_named(&full, arg)?)?;
                    sel.plans.push(Selected::new(&shown, plan));
                }
            }
        }
        Ok(sel)
    }

    /// The plan a `Baton-Plan` trailer of `commit` names: like a PLAN argument, but only ever
    /// read from the merge base and the head commit (never from disk, which holds the pull
    /// request's checkout), and kept to its targets at the merge base when it was there.
    pub fn by_trailer(
        &self,
        sel: &mut Selection,
        commit: &str,
        path: &str,
    ) -> Result<(), VerifyError> {
        let dir = sel.config.plans_dir.clone();
        let at_base = self.repo.path_kind_at(self.merge_base, path)? == Some(PathKind::File);
        match self.read(self.head, path)? {
            Some(bytes) => {
                let (_, plan) = parse_plan(path, bytes)?;
                if at_base {
                    self.kept(sel, path, plan)?;
                } else {
                    sel.plans.push(Selected::new(path, plan));
                }
            }
            None if at_base => self.deleted(sel, path, &[], &dir)?,
            // Added and retired within the range (a finished plan removed after its run): the
            // commit that names it has it, and the plan is the range's own either way, so its
            // targets there are the gate.
            None => {
                let missing = || VerifyError::TrailerPlanMissing {
                    commit: crate::git::short_hex(commit).to_owned(),
                    path: path.to_owned(),
                    missing: "neither the merge base, the head commit nor that commit has",
                };
                let naming = self.repo.resolve_commit(commit)?;
                let bytes = self.read(naming, path)?.ok_or_else(missing)?;
                let (_, plan) = parse_plan(path, bytes)?;
                sel.plans.push(Selected::new(path, plan));
            }
        }
        Ok(())
    }

    /// A base plan still in the head commit: its head targets, plus the base targets the range
    /// removed (each one a change).
    fn kept(&self, sel: &mut Selection, path: &str, mut plan: Plan) -> Result<(), VerifyError> {
        let base = self.base_plan(sel, path)?;
        for target in base.map(|p| p.targets).unwrap_or_default() {
            if plan.targets.iter().any(|t| t.spec == target.spec) {
                continue;
            }
            sel.changes.push(PlanChange {
                plan: path.to_owned(),
                kind: PlanChangeKind::TargetRemoved,
                message: format!(
                    "the range removes target `{}` (line {} at the merge base) from this plan",
                    target.spec, target.line
                ),
                target: Some(target.spec.clone()),
                line: Some(target.line),
                to: None,
                allowed: self.allow,
            });
            if !self.allow {
                plan.targets.push(target);
            }
        }
        sel.plans.push(Selected::new(path, plan));
        Ok(())
    }

    /// A base plan the head commit no longer has as a file. `moves` are the range's changed
    /// paths, searched for where it went.
    fn deleted(
        &self,
        sel: &mut Selection,
        path: &str,
        moves: &[String],
        dir: &str,
    ) -> Result<(), VerifyError> {
        let to = self.moved_to(path, moves)?;
        let (kind, message) = match &to {
            Some(to) if is_discoverable(to, dir) => (
                PlanChangeKind::Moved,
                format!("the range moves this plan to `{to}`"),
            ),
            Some(to) => (
                PlanChangeKind::Moved,
                format!(
                    "the range moves this plan to `{to}`, where discovery does not look ({})",
                    where_plans_are(dir)
                ),
            ),
            None => (
                PlanChangeKind::Deleted,
                "the range deletes this plan".to_owned(),
            ),
        };
        sel.changes.push(PlanChange {
            plan: path.to_owned(),
            kind,
            target: None,
            line: None,
            to,
            message,
            allowed: self.allow,
        });
        if !self.allow
            && let Some(plan) = self.base_plan(sel, path)?
        {
            sel.plans.push(Selected {
                path: path.to_owned(),
                plan,
                deleted: true,
            });
        }
        Ok(())
    }

    /// A plan that discovery would not see: `plan` when it was read, `None` for a symbolic link.
    fn hidden(&self, sel: &mut Selection, path: &str, plan: Option<Plan>, dir: &str) {
        let message = match plan {
            Some(_) => format!(
                "this plan is not where discovery looks ({}), so no gate would check it",
                where_plans_are(dir)
            ),
            None => "this plan is a symbolic link, which discovery does not follow, so no gate \
                     would check it"
                .to_owned(),
        };
        sel.changes.push(PlanChange {
            plan: path.to_owned(),
            kind: PlanChangeKind::Undiscoverable,
            target: None,
            line: None,
            to: None,
            message,
            allowed: self.allow,
        });
        if !self.allow
            && let Some(plan) = plan
        {
            sel.plans.push(Selected::new(path, plan));
        }
    }

    /// A changed file of the same stem, in the head commit, that holds the plan: the same bytes,
    /// or a plan at all.
    fn moved_to(&self, path: &str, moves: &[String]) -> Result<Option<String>, VerifyError> {
        let Some(name) = stem(path) else {
            return Ok(None);
        };
        let before = self.read(self.merge_base, path)?;
        for candidate in moves {
            if candidate == path || stem(candidate).as_deref() != Some(name.as_str()) {
                continue;
            }
            if let Some(bytes) = self.read(self.head, candidate)?
                && (before.as_ref() == Some(&bytes) || sniff(candidate, &bytes).is_some())
            {
                return Ok(Some(candidate.clone()));
            }
        }
        Ok(None)
    }

    /// The plan at `path` in the merge base; one that does not parse there is a note.
    fn base_plan(&self, sel: &mut Selection, path: &str) -> Result<Option<Plan>, VerifyError> {
        let Some(bytes) = self.read(self.merge_base, path)? else {
            return Ok(None);
        };
        match parse_plan(path, bytes) {
            Ok((_, plan)) => Ok(Some(plan)),
            Err(err) => {
                sel.notes.push(format!(
                    "{path} is not a valid plan at the merge base ({err}), so none of its targets \
                     there could be kept"
                ));
                Ok(None)
            }
        }
    }

    fn head_plan(&self, path: &str) -> Result<Plan, VerifyError> {
        let bytes = self.read(self.head, path)?.unwrap_or_default();
        Ok(parse_plan(path, bytes)?.1)
    }

    fn read(&self, commit: CommitId, path: &str) -> Result<Option<Vec<u8>>, VerifyError> {
        Ok(self.repo.read_file_at(commit, path)?)
    }

    /// The directory at the merge base whose path differs from `dir` only in ASCII case.
    fn case_variant(&self, dir: &str) -> Result<Option<String>, VerifyError> {
        let mut found = String::new();
        for component in dir.split('/') {
            let entries = self.repo.dir_entries_at(self.merge_base, &found)?;
            let dirs = || entries.iter().filter(|(_, kind)| *kind == PathKind::Dir);
            let Some((name, _)) = dirs()
                .find(|(name, _)| name == component)
                .or_else(|| dirs().find(|(name, _)| name.eq_ignore_ascii_case(component)))
            else {
                return Ok(None);
            };
            if !found.is_empty() {
                found.push('/');
            }
            found.push_str(name);
        }
        Ok((found != dir).then_some(found))
    }
}

/// A path discovery reads as a plan: a `*.md` file below `plans_dir`, exactly.
fn is_discoverable(path: &str, plans_dir: &str) -> bool {
    path.strip_prefix(plans_dir)
        .is_some_and(|rest| rest.starts_with('/'))
        && path.ends_with(".md")
}

fn where_plans_are(dir: &str) -> String {
    format!("the `*.md` files under `{dir}/`, in that case")
}

/// Names Markdown files go by, in any case.
fn has_markdown_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [
        ".md",
        ".markdown",
        ".mdown",
        ".mkd",
        ".mkdn",
        ".mdwn",
        ".mdtext",
        ".mdtxt",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext))
}

/// The file name up to its first `.` (leading dots skipped), lowercased: what a renamed or
/// moved plan keeps.
fn stem(path: &str) -> Option<String> {
    let name = path.rsplit('/').next()?.trim_start_matches('.');
    let stem = name.split('.').next()?;
    (!stem.is_empty()).then(|| stem.to_ascii_lowercase())
}

/// `bytes` as a plan with targets, whatever its name: the frontmatter first, and a plan under a
/// name that is not an id (`New.MD`) is a plan all the same.
fn sniff(path: &str, bytes: &[u8]) -> Option<Plan> {
    let text = std::str::from_utf8(bytes).ok()?;
    if !text.trim_start_matches('\u{feff}').starts_with("---") {
        return None;
    }
    let plan = plan::parse(path, text)
        .or_else(|_| plan::parse("plan.md", text))
        .ok()?;
    (!plan.targets.is_empty()).then_some(plan)
}

/// `full` relative to the worktree root, also when it does not exist (a plan the range deleted
/// is still named by its path).
fn relative_to(workdir: &Path, full: &Path) -> Option<String> {
    repo_relative(workdir, full).or_else(|| {
        let dir = repo_relative(workdir, full.parent()?)?;
        let name = full.file_name()?.to_str()?;
        Some(if dir.is_empty() {
            name.to_owned()
        } else {
            format!("{dir}/{name}")
        })
    })
}

fn read_named(full: &Path, arg: &Path) -> Result<Vec<u8>, VerifyError> {
    crate::files::read_regular(full).map_err(|source| VerifyError::ReadNamed {
        what: "plan",
        path: arg.to_path_buf(),
        source,
    })
}

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, VerifyError> {
    crate::files::if_present(crate::files::read_regular(path)).map_err(|source| VerifyError::Read {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discoverable_paths_are_exact() {
        assert!(is_discoverable("plans/a.md", "plans"));
        assert!(is_discoverable("plans/deep/a.md", "plans"));
        assert!(is_discoverable("work/plans/a.md", "work/plans"));
        for hidden in [
            "plans/a.MD",
            "plans/a.markdown",
            "Plans/a.md",
            "plansx/a.md",
            "plans.md",
            "other/plans/a.md",
        ] {
            assert!(!is_discoverable(hidden, "plans"), "{hidden}");
        }
    }

    #[test]
    fn stems_survive_renames_and_moves() {
        assert_eq!(stem("plans/fix-docs.md").as_deref(), Some("fix-docs"));
        assert_eq!(stem("archive/Fix-Docs.MD").as_deref(), Some("fix-docs"));
        assert_eq!(stem("plans/fix-docs.markdown").as_deref(), Some("fix-docs"));
        assert_eq!(stem("plans/.hidden.md").as_deref(), Some("hidden"));
        assert_eq!(stem("plans/..."), None);
    }

    #[test]
    fn sniffing_finds_plans_with_targets_only() {
        let plan = "---\ntargets: [docs/a.md]\n---\nDo it.\n";
        assert!(sniff("plans/x.MD", plan.as_bytes()).is_some());
        // A name that is no id does not stop a plan from being one.
        assert!(sniff("plans/New Plan.MD", plan.as_bytes()).is_some());
        assert!(sniff("plans/x.md", "\u{feff}---\ntargets: [a]\n---\n".as_bytes()).is_some());
        for not_a_plan in [
            "# Notes\n",
            "---\ntitle: Docs page\n---\n",
            "---\nlayout: post\n---\n",
            "---\ntargets: []\n---\n",
        ] {
            assert!(
                sniff("plans/x.txt", not_a_plan.as_bytes()).is_none(),
                "{not_a_plan}"
            );
        }
        assert!(sniff("plans/x.md", b"---\ntargets: [\xff]\n---\n").is_none());
    }

    #[test]
    fn markdown_names() {
        for name in ["a.md", "a.MD", "a.Markdown", "a.mdown", "a.MKD"] {
            assert!(has_markdown_name(name), "{name}");
        }
        assert!(!has_markdown_name("a.txt"));
    }
}
