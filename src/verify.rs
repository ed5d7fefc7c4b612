//! The verify gate: plans, a diff and evidence in, one coverage report per plan out.
//!
//! Two modes, as in design §7. With a head commit the diff is `merge-base(base, head)..head`, the
//! pull-request diff. Without one it is the cumulative diff of the current worktree against
//! `merge-base(base, HEAD)`: using the merge base rather than `base` itself keeps commits that
//! landed on the base branch after this branch forked from counting as this branch's work.
//!
//! The diff is scoped to the plans' targets, so a gate over a few targets costs O(targets).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::ConfigError;
use crate::coverage::{self, EvidenceEntry, EvidenceError, Report};
use crate::files::{io_reason, repo_relative};
use crate::git::{GitError, Repo, Scope};
use crate::plan::{self, Plan, PlanError};

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
}

impl VerifyError {
    /// What to do next, for this variant.
    pub fn hints(&self) -> Vec<String> {
        let hint = match self {
            VerifyError::Git(err) => err.hint(),
            VerifyError::Config(err) => err.hint(),
            VerifyError::Plan(err) => err.hint.clone(),
            VerifyError::Evidence(_) => {
                Some("see docs/plan-format.md#evidence for the evidence format".into())
            }
            VerifyError::NotUtf8 { .. }
            | VerifyError::ReadNamed { .. }
            | VerifyError::Read { .. } => None,
        };
        hint.into_iter().collect()
    }
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
}

#[derive(Debug, Serialize)]
pub struct Verification {
    pub passed: bool,
    /// The revision as given, and the commit the diff starts from (the merge base).
    pub base: String,
    pub merge_base: String,
    /// The head revision, or `None` when the worktree was checked.
    pub head: Option<String>,
    pub head_commit: Option<String>,
    pub require_targets: bool,
    pub plans: Vec<PlanResult>,
    /// Set when no plan was named and none changed in the range.
    pub plans_dir: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct PlanResult {
    /// Repo-relative, `/`-separated: what annotations point at.
    pub path: String,
    pub id: String,
    pub title: Option<String>,
    pub coverage: Report,
}

pub fn verify(cwd: &Path, options: &Options) -> Result<Verification, VerifyError> {
    let repo = Repo::discover(cwd)?;
    if options.head.is_none() {
        repo.prepare_worktree_diff();
    }
    let workdir = repo.workdir()?.to_path_buf();
    let config = crate::config::load(&workdir)?;

    let base_rev = match &options.base {
        Some(rev) => rev.clone(),
        None if repo.resolve_commit("@{upstream}").is_ok() => "@{upstream}".to_string(),
        None => "HEAD".to_string(),
    };
    let base_commit = repo.resolve_commit(&base_rev)?;
    let head_commit = match &options.head {
        Some(rev) => Some(repo.resolve_commit(rev)?),
        None => None,
    };
    let tip = match head_commit {
        Some(id) => id,
        None => repo.resolve_commit("HEAD")?,
    };
    let head_name = options.head.as_deref().unwrap_or("HEAD");
    let merge_base = repo.merge_base(base_commit, tip, (&base_rev, head_name))?;
    let diff = |scope: &Scope| match head_commit {
        Some(head) => repo.tree_changes(merge_base, head, scope),
        None => repo.worktree_changes(merge_base, scope),
    };

    let plans = if options.plans.is_empty() {
        let dir = Scope::prefixes([config.plans_dir.as_str()]);
        let candidates: Vec<String> = diff(&dir)?
            .into_iter()
            .filter(|p| p.ends_with(".md") && !p.ends_with('/'))
            .collect();
        let mut plans = Vec::new();
        for path in candidates {
            let text = match head_commit {
                Some(head) => repo.read_file_at(head, &path)?,
                None => read_optional(&workdir.join(&path))?,
            };
            // A deleted plan is not a plan to check.
            if let Some(bytes) = text {
                plans.push(parse_plan(&path, bytes)?);
            }
        }
        plans
    } else {
        let mut plans = Vec::new();
        for arg in &options.plans {
            let full = cwd.join(arg);
            let relative = repo_relative(&workdir, &full);
            let shown = relative
                .clone()
                .unwrap_or_else(|| arg.display().to_string());
            // With --head the plan is the one in that commit; one the commit lacks (not yet
            // committed, or kept outside the repository) is read from disk.
            let committed = match (head_commit, &relative) {
                (Some(head), Some(rel)) => repo.read_file_at(head, rel)?,
                _ => None,
            };
            let bytes = match committed {
                Some(bytes) => bytes,
                None => std::fs::read(&full).map_err(|source| VerifyError::ReadNamed {
                    what: "plan",
                    path: arg.clone(),
                    source,
                })?,
            };
            plans.push(parse_plan(&shown, bytes)?);
        }
        plans
    };

    let mut file_entries: Vec<EvidenceEntry> = Vec::new();
    for path in &options.evidence {
        let shown = path.display().to_string();
        let text =
            std::fs::read_to_string(cwd.join(path)).map_err(|source| VerifyError::ReadNamed {
                what: "evidence",
                path: path.clone(),
                source,
            })?;
        file_entries.extend(coverage::parse_evidence(&shown, &text)?.entries);
    }
    let mut trailer_entries = Vec::new();
    for (id, message) in repo.commit_messages(merge_base, tip)? {
        trailer_entries.extend(coverage::parse_trailers(&id.to_string(), &message));
    }

    let scope = Scope::prefixes(
        plans
            .iter()
            .flat_map(|(_, p)| p.targets.iter().map(|t| t.scope())),
    );
    let changed = if plans.iter().any(|(_, p)| !p.targets.is_empty()) {
        diff(&scope)?
    } else {
        Vec::new()
    };

    let results: Vec<PlanResult> = plans
        .iter()
        .enumerate()
        .map(|(i, (path, plan))| {
            let entries = entries_for(i, &plans, &file_entries);
            let mut report =
                coverage::evaluate(&plan.targets, &changed, &entries, &trailer_entries);
            if options.require_targets {
                report.require_targets();
            }
            PlanResult {
                path: path.clone(),
                id: plan.id.clone(),
                title: plan.title.clone(),
                coverage: report,
            }
        })
        .collect();

    Ok(Verification {
        passed: results.iter().all(|r| r.coverage.passed),
        base: base_rev.clone(),
        merge_base: merge_base.to_string(),
        head: options.head.clone(),
        head_commit: head_commit.map(|id| id.to_string()),
        require_targets: options.require_targets,
        plans_dir: options.plans.is_empty().then(|| config.plans_dir.clone()),
        plans: results,
    })
}

/// With several plans, each sees the evidence entries for its own targets; an entry no plan
/// declares goes to the first plan, so it is reported once, as an unknown target.
fn entries_for(
    index: usize,
    plans: &[(String, Plan)],
    entries: &[EvidenceEntry],
) -> Vec<EvidenceEntry> {
    if plans.len() == 1 {
        return entries.to_vec();
    }
    let declares = |plan: &Plan, target: &str| plan.targets.iter().any(|t| t.spec == target);
    entries
        .iter()
        .filter(|e| {
            declares(&plans[index].1, &e.target)
                || (index == 0 && !plans.iter().any(|(_, p)| declares(p, &e.target)))
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

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, VerifyError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(VerifyError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}
