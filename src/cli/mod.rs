//! The command line: one file per command, each a clap `Args` struct (its doc comment is the
//! help text) and a `run` function that translates arguments into a call of the domain.
//! No business logic lives here.

mod clean;
mod demo;
mod diff;
mod doctor;
mod finish;
mod list;
mod log;
mod pause;
mod resume;
mod review;
mod run;
mod status;
mod stop;
mod verify;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::{CliError, Exit};
use crate::git::Repo;
use crate::state::store::{Store, StoreError};
use crate::state::{RunId, RunState, RunStatus};

/// git-baton: a stage of coding-agent work counts as succeeded only when the repository proves it.
///
/// Plans declare `targets`, the paths the work must touch. git-baton checks the repository
/// against that declared intent: every target must have a changed path, or a recorded, specific
/// reason why it needed no change.
#[derive(Debug, Parser)]
#[command(
    name = "git-baton",
    bin_name = "git baton",
    version,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Run(run::RunArgs),
    Resume(resume::ResumeArgs),
    Status(status::StatusArgs),
    List(list::ListArgs),
    Log(log::LogArgs),
    Diff(diff::DiffArgs),
    Review(review::ReviewArgs),
    Finish(finish::FinishArgs),
    Clean(clean::CleanArgs),
    Doctor(doctor::DoctorArgs),
    Stop(stop::StopArgs),
    Pause(pause::PauseArgs),
    Verify(verify::VerifyArgs),
    Demo(demo::DemoArgs),
}

/// Parses the process arguments, runs the command and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints usage errors as `error: …` with exit 2, and help/version with exit 0.
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() {
                Exit::Input as u8
            } else {
                0
            });
        }
    };
    match run(cli) {
        Ok(exit) => exit.into(),
        Err(err) => {
            err.print(&mut std::io::stderr().lock());
            err.exit.into()
        }
    }
}

pub fn run(cli: Cli) -> Result<Exit, CliError> {
    let cwd = std::env::current_dir()
        .map_err(|err| CliError::input(format!("cannot read the current directory: {err}")))?;
    // Not locked for the whole command: actors' output is echoed from other threads meanwhile.
    let mut stdout = std::io::stdout();
    let exit = match cli.command {
        Command::Run(args) => run::run(&cwd, args, &mut stdout)?,
        Command::Resume(args) => resume::run(&cwd, args, &mut stdout)?,
        Command::Status(args) => status::run(&cwd, args, &mut stdout)?,
        Command::List(args) => list::run(&cwd, args, &mut stdout)?,
        Command::Log(args) => log::run(&cwd, args, &mut stdout)?,
        Command::Diff(args) => diff::run(&cwd, args, &mut stdout)?,
        Command::Review(args) => review::run(&cwd, args, &mut stdout)?,
        Command::Finish(args) => finish::run(&cwd, args, &mut stdout)?,
        Command::Clean(args) => clean::run(&cwd, args, &mut stdout)?,
        Command::Doctor(args) => doctor::run(&cwd, args, &mut stdout)?,
        Command::Stop(args) => stop::run(&cwd, args, &mut stdout)?,
        Command::Pause(args) => pause::run(&cwd, args, &mut stdout)?,
        Command::Verify(args) => verify::run(&cwd, args, &mut stdout)?,
        Command::Demo(args) => demo::run(&cwd, args, &mut stdout)?,
    };
    // A closed pipe (`| head`) is not a failure of the command.
    let _ = stdout.flush();
    Ok(exit)
}

/// The repository and its run store, as every run command needs them.
struct Context {
    repo: Repo,
    store: Store,
}

impl Context {
    fn open(cwd: &Path) -> Result<Context, CliError> {
        let repo = Repo::discover(cwd)?;
        let clock = crate::state::Clock::from_env().map_err(|e| CliError::input(e.to_string()))?;
        let store = Store::new(repo.common_dir(), clock);
        Ok(Context { repo, store })
    }

    /// The configuration, read only by the commands that drive runs: a broken `.baton.yml` must
    /// not hide the runs from `status` and `list`. It comes from the main worktree, so that every
    /// worktree of a repository, the runs' own included, drives runs the same way.
    fn config(&self) -> Result<crate::config::Config, CliError> {
        Ok(crate::config::load(&main_worktree(&self.repo)?)?)
    }

    fn workdir(&self) -> &Path {
        self.repo.workdir().unwrap_or(Path::new("."))
    }

    fn main_worktree(&self) -> Result<PathBuf, CliError> {
        main_worktree(&self.repo)
    }

    fn resolve(&self, name: &str) -> Result<RunId, CliError> {
        self.store.resolve(name).map_err(store_error)
    }
}

fn main_worktree(repo: &Repo) -> Result<PathBuf, CliError> {
    // The common dir of a non-bare repository is `<main worktree>/.git`.
    let common = repo.common_dir();
    match common.file_name() {
        Some(name) if name == ".git" => Ok(common.parent().unwrap_or(common).to_path_buf()),
        _ => Ok(repo.workdir()?.to_path_buf()),
    }
}

/// The attempt `--stage S --attempt N` names: by default the latest attempt of the latest stage
/// that ran. Shared by `log` and `diff`.
fn pick_attempt<'a>(
    state: &'a RunState,
    stage: Option<&str>,
    n: Option<u32>,
) -> Result<(&'a crate::state::Stage, &'a crate::state::Attempt), CliError> {
    let id = &state.run_id;
    let stage = match stage {
        Some(name) => state
            .stages()
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = state.stages().iter().map(|s| s.name.as_str()).collect();
                CliError::input(format!("run {id} has no stage `{name}`"))
                    .hinted(format!("its stages: {}", names.join(", ")))
            })?,
        None => state
            .stages()
            .iter()
            .rev()
            .find(|s| !s.attempts.is_empty())
            .ok_or_else(|| CliError::input(format!("run {id} has no attempts yet")))?,
    };
    let attempt = match n {
        Some(n) => stage.attempts.iter().find(|a| a.n == n),
        None => stage.attempts.last(),
    };
    let attempt = attempt.ok_or_else(|| {
        let which = n.map_or("any attempts yet".to_string(), |n| format!("attempt {n}"));
        CliError::input(format!("stage `{}` of run {id} has no {which}", stage.name))
            .hinted(format!("it has {} attempt(s)", stage.attempts.len()))
    })?;
    Ok((stage, attempt))
}

/// Refuses a request (`stop`, `pause`) to a run that no live process drives.
fn require_driver(ctx: &Context, id: &RunId) -> Result<(), CliError> {
    if ctx.store.holder(id).map_err(store_error)?.is_some() {
        return Ok(());
    }
    let state = ctx.store.load(id).map_err(store_error)?;
    Err(CliError::input(format!(
        "run {id} is not being driven by any process (status: {})",
        status_word(&ctx.store, &state)
    ))
    .hinted(format!("see `git baton status {id}`")))
}

fn store_error(err: StoreError) -> CliError {
    match err {
        StoreError::Busy { ref run, .. } => CliError {
            exit: Exit::Busy,
            hints: vec![format!(
                "wait for it to finish, or stop it with `git baton stop {run}`"
            )],
            message: err.to_string(),
        },
        StoreError::Unknown(_) => {
            CliError::input(err.to_string()).hinted("see the runs with `git baton list`")
        }
        StoreError::Ambiguous { .. } => {
            CliError::input(err.to_string()).hinted("type more of the run id")
        }
        other => CliError::input(other.to_string()),
    }
}

/// `--actor STAGE=NAME`.
fn parse_actor(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((stage, actor)) if !stage.is_empty() && !actor.is_empty() => {
            Ok((stage.to_string(), actor.to_string()))
        }
        _ => Err(format!("expected STAGE=NAME, got `{value}`")),
    }
}

/// A run's status word, with `(stale)` when the state says running but nobody holds the lock.
fn status_word(store: &Store, state: &RunState) -> String {
    let name = crate::report::status::word(state.status());
    if is_stale(store, state) {
        format!("{name} (stale)")
    } else {
        name
    }
}

fn is_stale(store: &Store, state: &RunState) -> bool {
    store.is_stale(state)
}

/// The exit code a run's state means (design §6).
fn exit_for(store: &Store, state: &RunState) -> Exit {
    match state.status() {
        RunStatus::Review | RunStatus::Paused | RunStatus::Finished => Exit::Success,
        RunStatus::Running | RunStatus::Pending if !is_stale(store, state) => Exit::Busy,
        _ => Exit::Failed,
    }
}

fn print_state_json(store: &Store, state: &RunState, out: &mut dyn Write) -> Result<(), CliError> {
    let view = status::json_view(store, state);
    let mut text = serde_json::to_string_pretty(&view).expect("serializes");
    text.push('\n');
    let _ = out.write_all(text.as_bytes());
    Ok(())
}

/// After driving: the summary (or JSON) and the exit code.
fn finish(
    store: &Store,
    state: &RunState,
    exit: Exit,
    json: bool,
    out: &mut dyn Write,
) -> Result<Exit, CliError> {
    if json {
        print_state_json(store, state, out)?;
    } else {
        let text = crate::report::status::render(state, false, None, store.now());
        eprint!("\n{text}");
    }
    Ok(exit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The help of every command, so that help-text drift shows up in review (docs/cli.md
    /// quotes it).
    #[test]
    fn help_text() {
        let mut cli = Cli::command().term_width(100);
        let mut all = cli.render_long_help().to_string();
        for sub in cli.get_subcommands_mut() {
            let name = sub.get_name().to_string();
            let help = sub
                .clone()
                .term_width(100)
                .bin_name(format!("git baton {name}"))
                .render_long_help();
            all.push_str(&format!("\n===== git baton {name} --help\n{help}"));
        }
        insta::assert_snapshot!(all);
    }
}
