//! The steps of one verification over its range: resolve the range, select the plans, derive
//! their targets, read the reasons, and evaluate each plan against the changes.

use std::path::Path;

use super::{
    NamedBy, Options, PlanResult, Trailers, VerifyError, committed_config, entries_for, ignored,
    missing, read_evidence, select, targets, trivial,
};
use crate::config::Config;
use crate::coverage::{self, EvidenceEntry};
use crate::git::{CommitId, GitError, Repo, Scope};
use crate::state::TargetSource;

/// One verification's ground: the repository, where it was asked from, and the range it checks.
pub(super) struct Verifier<'a> {
    repo: &'a Repo,
    cwd: &'a Path,
    workdir: &'a Path,
    options: &'a Options,
    /// `--base` as given, or what it defaults to: `@{upstream}` when there is one, else `HEAD`.
    pub(super) base_rev: String,
    pub(super) merge_base: CommitId,
    /// `--head` resolved; `None` when the worktree is checked.
    pub(super) head: Option<CommitId>,
    /// The head commit, or `HEAD` when the worktree is checked.
    pub(super) tip: CommitId,
}

/// What a plan's targets were derived to: per plan, whether its targets are derived, and the
/// paths its body names beyond the targets it declares.
pub(super) struct DerivedTargets {
    derived: Vec<bool>,
    untargeted: Vec<Vec<targets::Named>>,
}

/// What the plans are checked against: the paths the range changed, the reasons evidence files
/// and trailers give, and the plans the trailers name.
pub(super) struct Reasons<'a> {
    pub(super) changed: &'a [String],
    pub(super) files: &'a [EvidenceEntry],
    pub(super) trailers: &'a [EvidenceEntry],
    pub(super) named_plans: &'a [(String, Vec<NamedBy>)],
}

impl<'a> Verifier<'a> {
    /// Resolves the base, the head and their merge base.
    pub(super) fn resolve(
        repo: &'a Repo,
        cwd: &'a Path,
        workdir: &'a Path,
        options: &'a Options,
    ) -> Result<Self, VerifyError> {
        let base_rev = match &options.base {
            Some(rev) => rev.clone(),
            None if repo.resolve_commit("@{upstream}").is_ok() => "@{upstream}".to_string(),
            None => "HEAD".to_string(),
        };
        let base_commit = repo.resolve_commit(&base_rev)?;
        let head = match &options.head {
            Some(rev) => Some(repo.resolve_commit(rev)?),
            None => None,
        };
        let tip = match head {
            Some(id) => id,
            None => repo.resolve_commit("HEAD")?,
        };
        let head_name = options.head.as_deref().unwrap_or("HEAD");
        let merge_base = repo.merge_base(base_commit, tip, (&base_rev, head_name))?;
        Ok(Verifier {
            repo,
            cwd,
            workdir,
            options,
            base_rev,
            merge_base,
            head,
            tip,
        })
    }

    /// The paths under `scope` that the range changed: merge base → head, or → the worktree.
    fn diff(&self, scope: &Scope) -> Result<Vec<String>, GitError> {
        match self.head {
            Some(head) => self.repo.tree_changes(self.merge_base, head, scope),
            None => self.repo.worktree_changes(self.merge_base, scope),
        }
    }

    /// The range's view of the plans, for a head commit.
    fn range(&self, head: CommitId) -> select::Range<'a> {
        select::Range {
            repo: self.repo,
            merge_base: self.merge_base,
            head,
            allow: self.options.allow_plan_changes,
        }
    }

    /// The plans to check, with the configuration that gates them: the ones named, or the ones
    /// the range changes and those its trailers name.
    pub(super) fn select(
        &self,
        local_config: Option<Config>,
        trailers: &Trailers,
    ) -> Result<select::Selection, VerifyError> {
        let options = self.options;
        Ok(match self.head {
            None => {
                let config = local_config.map_or_else(|| crate::config::load(self.workdir), Ok)?;
                let plans = if options.plans.is_empty() {
                    select::discover_in_worktree(self.workdir, &config.plans_dir, |scope| {
                        self.diff(scope)
                    })?
                } else {
                    select::named_in_worktree(self.cwd, self.workdir, &options.plans)?
                };
                let mut sel = select::Selection {
                    plans,
                    config,
                    ..select::Selection::default()
                };
                if options.plans.is_empty() {
                    self.by_trailer(&mut sel, trailers)?;
                }
                sel
            }
            Some(head) => {
                let config = committed_config(self.repo, self.merge_base)?;
                let range = self.range(head);
                if options.plans.is_empty() {
                    let mut sel = range.discover(config)?;
                    self.by_trailer(&mut sel, trailers)?;
                    sel
                } else {
                    range.named(config, self.cwd, self.workdir, &options.plans)?
                }
            }
        })
    }

    /// Adds the plans the trailers name to discovery's.
    fn by_trailer(
        &self,
        sel: &mut select::Selection,
        trailers: &Trailers,
    ) -> Result<(), VerifyError> {
        // Trailers only add plans to discovery's: whatever a commit names, every plan the range
        // changes is still checked, and a named plan is read where the gate reads plans.
        for (path, named) in &trailers.plans {
            if sel.has(path) {
                continue;
            }
            let commit = &named[0].commit;
            if !coverage::is_repo_path(path) {
                return Err(VerifyError::TrailerPlanPath {
                    commit: crate::git::short_hex(commit).to_owned(),
                    path: path.clone(),
                });
            }
            match self.head {
                Some(head) => self.range(head).by_trailer(sel, commit, path)?,
                None => select::by_trailer_in_worktree(sel, self.workdir, commit, path)?,
            }
        }
        Ok(())
    }

    /// Derives the targets of the plans that declare none, where the configuration says so.
    ///
    /// The configuration that gates decides, as for everything else: the merge base's in range
    /// mode. Targets are derived against the merge base, the tree the work started from. A plan
    /// that declares targets gets a warning for each path its body names beyond them.
    pub(super) fn derive_targets(
        &self,
        selection: &mut select::Selection,
    ) -> Result<DerivedTargets, VerifyError> {
        let mut derived = vec![false; selection.plans.len()];
        let mut untargeted = vec![Vec::new(); selection.plans.len()];
        for (i, selected) in selection.plans.iter_mut().enumerate() {
            if selected.deleted {
                continue;
            }
            let declares = !selected.plan.targets.is_empty();
            if !declares && !selection.config.derive_targets {
                continue;
            }
            let found =
                targets::derive_at(self.repo, self.merge_base, &selected.path, &selected.plan)?;
            if declares {
                untargeted[i] = targets::not_covered(&selected.plan.targets, &found);
            } else {
                selected.plan.targets = found.targets.into_iter().map(|d| d.target).collect();
                derived[i] = true;
            }
        }
        Ok(DerivedTargets {
            derived,
            untargeted,
        })
    }

    /// The entries of the evidence files given.
    pub(super) fn evidence(&self) -> Result<Vec<EvidenceEntry>, VerifyError> {
        let mut entries: Vec<EvidenceEntry> = Vec::new();
        for path in &self.options.evidence {
            let text = read_evidence(&self.cwd.join(path), path)?;
            let shown = path.display().to_string();
            entries.extend(coverage::parse_evidence(&shown, &text)?.entries);
        }
        Ok(entries)
    }

    /// The changed paths under the plans' targets; none when no plan has a target.
    pub(super) fn changed(&self, plans: &[select::Selected]) -> Result<Vec<String>, VerifyError> {
        let scope = Scope::prefixes(
            plans
                .iter()
                .flat_map(|s| s.plan.targets.iter().map(|t| t.scope())),
        );
        Ok(if plans.iter().any(|s| !s.plan.targets.is_empty()) {
            self.diff(&scope)?
        } else {
            Vec::new()
        })
    }

    /// In the worktree, the targets that git ignores.
    pub(super) fn ignored_targets(
        &self,
        plans: &[select::Selected],
    ) -> Result<Vec<ignored::IgnoredTarget>, VerifyError> {
        let mut found = Vec::new();
        if self.head.is_none() {
            for selected in plans {
                found.extend(ignored::ignored_targets(
                    self.repo,
                    self.workdir,
                    self.tip,
                    &selected.path,
                    &selected.plan,
                )?);
            }
        }
        Ok(found)
    }

    /// Each plan's coverage: the rule over the changes and reasons, then the targets that name
    /// no path and those only touched.
    pub(super) fn evaluate(
        &self,
        plans: &[select::Selected],
        mut derivation: DerivedTargets,
        reasons: &Reasons,
    ) -> Result<Vec<PlanResult>, VerifyError> {
        let places_commits: Vec<CommitId> =
            std::iter::once(self.merge_base).chain(self.head).collect();
        let places = missing::Places {
            commits: &places_commits,
            worktree: self.head.is_none().then_some(self.workdir),
        };
        let new_side = match self.head {
            Some(head) => trivial::NewSide::Commit(head),
            None => trivial::NewSide::Worktree(self.workdir),
        };
        let mut sides = trivial::Sides::new(self.repo, self.merge_base, new_side);
        plans
            .iter()
            .enumerate()
            .map(|(i, selected)| {
                let entries = entries_for(i, plans, reasons.files);
                let plan = &selected.plan;
                let mut report =
                    coverage::evaluate(&plan.targets, reasons.changed, &entries, reasons.trailers);
                missing::mark_missing(self.repo, &mut report, &plan.targets, &places)?;
                trivial::mark_touched(&mut report, plan, &mut sides)?;
                if self.options.require_targets {
                    report.require_targets();
                }
                Ok(PlanResult {
                    path: selected.path.clone(),
                    id: plan.id.clone(),
                    title: plan.title.clone(),
                    coverage: report,
                    deleted: selected.deleted,
                    untargeted: std::mem::take(&mut derivation.untargeted[i]),
                    targets_source: if derivation.derived[i] {
                        TargetSource::Derived
                    } else {
                        TargetSource::Declared
                    },
                    named_by: reasons
                        .named_plans
                        .iter()
                        .find(|(path, _)| *path == selected.path)
                        .map(|(_, named)| named.clone())
                        .unwrap_or_default(),
                })
            })
            .collect()
    }
}
