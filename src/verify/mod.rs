//! The verify gate: plans, a diff and evidence in, one coverage report per plan out.
//!
//! Two modes, as in design §7. With a head commit the diff is `merge-base(base, head)..head`, the
//! pull-request diff. Without one it is the cumulative diff of the current worktree against
//! `merge-base(base, HEAD)`: using the merge base rather than `base` itself keeps commits that
//! landed on the base branch after this branch forked from counting as this branch's work.
//!
//! # Who is trusted
//!
//! With a head commit the gate judges a pull request, which must not be able to change its own
//! gate. The merge base is the trusted side: the configuration is read from it, and a plan that
//! existed there keeps its targets there whatever the pull request does to it (see [`select`]
//! for the rules and docs/ci.md for the threat model). Without a head commit the user checks
//! their own worktree, which is trusted as it is.
//!
//! In both modes the text that agents and pull requests write is bounded here or in
//! [`crate::coverage`] (evidence files, reasons) and escaped by every human renderer
//! ([`crate::report`]); trailers of merge commits give no reasons.
//!
//! Commits name the plan of their run in `Baton-Plan` trailers; without PLAN arguments those
//! plans are checked too (see [`select`]), and `--require-plans` fails a gate that checked none.
//!
//! The diff is scoped to the plans' targets, so a gate over a few targets costs O(targets); in
//! range mode without plan arguments the plans are found in the whole diff of the range, which
//! costs O(changed paths).

pub mod ignored;
pub mod missing;
mod select;
pub mod targets;
pub mod trivial;
mod verifier;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::{Config, ConfigError};
use crate::coverage::{self, EvidenceEntry, EvidenceError, Report};
use crate::files::io_reason;
use crate::git::{CommitId, GitError, Repo};
use crate::plan::{self, Plan, PlanError};
use crate::state::TargetSource;
use verifier::{Reasons, Verifier};

pub use select::{PlanChange, PlanChangeKind};

/// Why the gate could not be evaluated (as opposed to evaluated and failed).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    #[error("{path}:{line}:{column}: plan is not valid UTF-8")]
    NotUtf8 {
        path: String,
        line: usize,
        column: usize,
    },
    /// `what` is `plan` or `evidence`; `path` as the user named it.
    #[error("cannot read {what} {}: {}", .path.display(), io_reason(.source))]
    ReadNamed {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {}: {}", .path.display(), io_reason(.source))]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Refused before it is read: see [`coverage::MAX_EVIDENCE_BYTES`].
    #[error(
        "evidence file {} is larger than {} MiB, the limit for an evidence file",
        .path.display(),
        coverage::MAX_EVIDENCE_BYTES / (1024 * 1024)
    )]
    EvidenceTooLarge { path: PathBuf },
    /// A `Baton-Plan` trailer whose value could name something outside the repository's tree.
    #[error("commit {commit}: `Baton-Plan: {path}` does not name a path inside the repository")]
    TrailerPlanPath { commit: String, path: String },
    /// A `Baton-Plan` trailer naming a plan that is nowhere the gate may read it.
    #[error("commit {commit} names plan `{path}` (Baton-Plan), which {missing}")]
    TrailerPlanMissing {
        commit: String,
        path: String,
        /// Where it was looked for, as the end of the sentence.
        missing: &'static str,
    },
    /// In range mode the plans directory comes from the merge base, and must be there.
    #[error("plans_dir `{dir}/` does not exist at the merge base {merge_base}")]
    PlansDirMissing {
        dir: String,
        merge_base: String,
        /// The directory that differs only in case, when there is one.
        suggestion: Option<String>,
    },
}

/// What to verify, as the CLI received it.
pub struct Options {
    /// Plan files named on the command line, relative to `cwd`. Empty: discover changed plans.
    pub plans: Vec<PathBuf>,
    /// `None`: the current branch's upstream, else `HEAD`.
    pub base: Option<String>,
    pub head: Option<String>,
    pub evidence: Vec<PathBuf>,
    pub require_targets: bool,
    /// Accept what a range does to the plans that gate it (see [`PlanChange`]): the plans are
    /// then checked as the head has them, and every change is still reported.
    pub allow_plan_changes: bool,
    /// Fail when no plan was checked.
    pub require_plans: bool,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Verification {
    pub passed: bool,
    /// The revision as given, and the commit the diff starts from (the merge base).
    pub base: String,
    pub merge_base: String,
    /// The head revision, or `None` when the worktree was checked.
    pub head: Option<String>,
    pub head_commit: Option<String>,
    pub require_targets: bool,
    /// Set when `--require-plans` was given: the gate fails when `plans` is empty.
    #[serde(skip_serializing_if = "is_false")]
    pub require_plans: bool,
    pub plans: Vec<PlanResult>,
    /// Set when no plan was named and none changed in the range.
    pub plans_dir: Option<String>,
    /// Set when `--allow-plan-changes` was given.
    #[serde(skip_serializing_if = "is_false")]
    pub allow_plan_changes: bool,
    /// What the range did to the plans that gate it; each fails the gate unless allowed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan_changes: Vec<PlanChange>,
    /// Merge commits of the range whose `Baton-Unchanged` trailers were not used.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_trailers: Vec<IgnoredTrailers>,
    /// Anything else the reader should know about how the gate was evaluated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Worktree mode: targets the ignore rules exclude, where no new file can count.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_targets: Vec<ignored::IgnoredTarget>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PlanResult {
    /// Repo-relative, `/`-separated: what annotations point at.
    pub path: String,
    pub id: String,
    pub title: Option<String>,
    pub coverage: Report,
    /// The range deleted the plan; it was checked as it is at the merge base.
    #[serde(skip_serializing_if = "is_false")]
    pub deleted: bool,
    /// `derived` when the plan declares no targets and `derive_targets: body` gave it those its
    /// body names (absent when declared).
    #[serde(skip_serializing_if = "TargetSource::is_declared")]
    pub targets_source: TargetSource,
    /// Paths the plan's body names that no declared target covers: warnings, not failures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub untargeted: Vec<targets::Named>,
    /// The commits whose `Baton-Plan` trailer names this plan, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub named_by: Vec<NamedBy>,
}

/// A commit whose trailers name a plan: a run branch's `finish` commit, typically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct NamedBy {
    pub commit: String,
    /// The commit's `Baton-Run` trailers: the runs whose work it is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
}

impl PlanResult {
    pub fn passed(&self) -> bool {
        self.coverage.passed
    }
}

/// The trailers of a merge commit, which give no reasons: a merge's message is written from
/// text nobody reviews as a change (another branch's commits, a pull request's description), so
/// a reason there would count for work the merge did not do.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IgnoredTrailers {
    pub commit: String,
    /// How many `Baton-Unchanged` trailers it had.
    pub count: usize,
}

fn is_false(value: &bool) -> bool {
    !*value
}

pub fn verify(cwd: &Path, options: &Options) -> Result<Verification, VerifyError> {
    let repo = Repo::discover(cwd)?;
    if options.head.is_none() {
        repo.prepare_worktree_diff();
    }
    let workdir = repo.workdir()?.to_path_buf();
    // The worktree's configuration is the user's own; a pull request's is read from the merge
    // base below, once it is known.
    let local_config = match options.head {
        None => Some(crate::config::load(&workdir)?),
        Some(_) => None,
    };
    let verifier = Verifier::resolve(&repo, cwd, &workdir, options)?;

    let trailers = trailers(&repo, verifier.merge_base, verifier.tip)?;
    let mut selection = verifier.select(local_config, &trailers)?;
    // A run named without its plan matters only where trailers name plans.
    if options.plans.is_empty() {
        selection.notes.extend(trailers.notes);
    }
    let derived = verifier.derive_targets(&mut selection)?;
    let file_entries = verifier.evidence()?;
    let Trailers {
        unchanged: trailer_entries,
        ignored: ignored_trailers,
        plans: named_plans,
        ..
    } = trailers;
    let plans = &selection.plans;
    let changed = verifier.changed(plans)?;
    let ignored_targets = verifier.ignored_targets(plans)?;
    let results = verifier.evaluate(
        plans,
        derived,
        &Reasons {
            changed: &changed,
            files: &file_entries,
            trailers: &trailer_entries,
            named_plans: &named_plans,
        },
    )?;

    Ok(Verification {
        passed: results.iter().all(PlanResult::passed)
            && selection.changes.iter().all(|c| c.allowed)
            && !(options.require_plans && results.is_empty()),
        base: verifier.base_rev.clone(),
        merge_base: verifier.merge_base.to_string(),
        head: options.head.clone(),
        head_commit: verifier.head.map(|id| id.to_string()),
        require_targets: options.require_targets,
        require_plans: options.require_plans,
        plans_dir: options
            .plans
            .is_empty()
            .then(|| selection.config.plans_dir.clone()),
        plans: results,
        allow_plan_changes: options.allow_plan_changes,
        plan_changes: selection.changes,
        ignored_trailers,
        notes: selection.notes,
        ignored_targets,
    })
}

/// What the commits of a range say in their trailers.
struct Trailers {
    /// `Baton-Unchanged` reasons of ordinary commits, newest commit first.
    unchanged: Vec<EvidenceEntry>,
    /// Merge commits whose reasons were left out.
    ignored: Vec<IgnoredTrailers>,
    /// Each plan path a `Baton-Plan` trailer names, in the order first named (newest commit
    /// first), with every commit that names it.
    plans: Vec<(String, Vec<NamedBy>)>,
    /// Commits that name a run but no plan.
    notes: Vec<String>,
}

/// The git-baton trailers of `base..tip`. A merge commit gives no reasons, but may name plans:
/// a plan named is one more plan checked, never one less.
fn trailers(repo: &Repo, base: CommitId, tip: CommitId) -> Result<Trailers, VerifyError> {
    let mut found = Trailers {
        unchanged: Vec::new(),
        ignored: Vec::new(),
        plans: Vec::new(),
        notes: Vec::new(),
    };
    for (id, message) in repo.commit_messages(base, tip)? {
        let commit = id.to_string();
        let parsed = coverage::parse_commit_trailers(&commit, &message);
        if !parsed.unchanged.is_empty() {
            if repo.is_merge(id)? {
                found.ignored.push(IgnoredTrailers {
                    commit: commit.clone(),
                    count: parsed.unchanged.len(),
                });
            } else {
                found.unchanged.extend(parsed.unchanged);
            }
        }
        if parsed.plans.is_empty() {
            for run in &parsed.runs {
                found.notes.push(format!(
                    "commit {} names run {run} (Baton-Run) but no plan (Baton-Plan), so no plan \
                     was checked for it; name the plan to check it",
                    crate::git::short_hex(&commit)
                ));
            }
        }
        for path in parsed.plans {
            let named = NamedBy {
                commit: commit.clone(),
                runs: parsed.runs.clone(),
            };
            match found.plans.iter_mut().find(|(p, _)| *p == path) {
                Some((_, all)) => all.push(named),
                None => found.plans.push((path, vec![named])),
            }
        }
    }
    Ok(found)
}

/// `.baton.yml` as the merge base has it (the defaults when it has none), named in messages the
/// way git names a file of a commit: `<commit>:.baton.yml`.
fn committed_config(repo: &Repo, merge_base: CommitId) -> Result<Config, VerifyError> {
    let file = format!("{}:{}", merge_base.short(), crate::config::FILE_NAME);
    let Some(bytes) = repo.read_file_at(merge_base, crate::config::FILE_NAME)? else {
        return Ok(Config::default());
    };
    let text = String::from_utf8(bytes).map_err(|_| ConfigError::Read {
        file: file.clone(),
        reason: "not UTF-8".into(),
    })?;
    Ok(crate::config::parse_committed(&file, &text)?)
}

/// An evidence file, refused unread when it is over the limit.
fn read_evidence(full: &Path, shown: &Path) -> Result<String, VerifyError> {
    let named = |source| VerifyError::ReadNamed {
        what: "evidence",
        path: shown.to_path_buf(),
        source,
    };
    let bytes = crate::files::read_limited(full, coverage::MAX_EVIDENCE_BYTES)
        .map_err(named)?
        .ok_or_else(|| VerifyError::EvidenceTooLarge {
            path: shown.to_path_buf(),
        })?;
    String::from_utf8(bytes).map_err(|_| {
        named(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

/// With several plans, each sees the evidence entries for its own targets; an entry no plan
/// declares goes to the first plan, so it is reported once, as an unknown target.
fn entries_for(
    index: usize,
    plans: &[select::Selected],
    entries: &[EvidenceEntry],
) -> Vec<EvidenceEntry> {
    if plans.len() == 1 {
        return entries.to_vec();
    }
    let declares = |plan: &Plan, target: &str| plan.targets.iter().any(|t| t.spec == target);
    entries
        .iter()
        .filter(|e| {
            declares(&plans[index].plan, &e.target)
                || (index == 0 && !plans.iter().any(|s| declares(&s.plan, &e.target)))
        })
        .cloned()
        .collect()
}

pub fn parse_plan(path: &str, bytes: Vec<u8>) -> Result<(String, Plan), VerifyError> {
    let text = String::from_utf8(bytes).map_err(|err| {
        // Located like every other plan error: the line and column of the first bad byte.
        let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
        let valid = std::str::from_utf8(valid).unwrap_or_default();
        let line = valid.matches('\n').count() + 1;
        let column = valid
            .rsplit('\n')
            .next()
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        VerifyError::NotUtf8 {
            path: path.into(),
            line,
            column,
        }
    })?;
    let plan = plan::parse(path, &text)?;
    Ok((path.to_string(), plan))
}
