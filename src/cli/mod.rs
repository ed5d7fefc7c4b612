//! The command line: one file per command, each a clap `Args` struct (its doc comment is the
//! help text) and a `cmd_<verb>` function: arguments in, one call of [`crate::ops`] (or of a
//! read-only library function), output out, an outcome for the exit code. No business logic
//! lives here; all of git-baton's printing does. Arguments several commands share are in [`args`]; the CLI error
//! is in [`error`], and [`exit`] is the one place where outcomes become exit codes.

mod args;
mod check;
mod clean;
mod completions;
mod cycle;
mod demo;
mod diff;
mod doctor;
mod error;
mod exit;
mod fetch;
mod finish;
#[cfg(test)]
mod generated;
mod hints;
mod hold;
mod init;
mod list;
mod log;
mod mcp;
mod pager;
mod pause;
mod push;
mod release;
mod resume;
mod review;
mod run;
mod status;
mod stop;
mod targets;
mod unchanged;
mod verify;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde::Serialize;

pub use error::{Class, CliError};
pub use exit::{Ending, Exit};

use crate::ops::{Drove, Workspace};
use crate::run::note::{Note, Sink};
use crate::state::RunState;
use crate::state::store::{Holder, Store};
use crate::state::view::RunView;

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
    /// Run as if started in DIR, like `git -C` (repeatable, each relative to the one before).
    #[arg(
        short = 'C',
        value_name = "DIR",
        global = true,
        action = clap::ArgAction::Append,
        help_heading = "Global options"
    )]
    pub dirs: Vec<PathBuf>,

    /// Colour in reports (auto: a terminal, unless NO_COLOR is set); never in JSON.
    #[arg(
        long,
        value_name = "WHEN",
        global = true,
        default_value = "auto",
        help_heading = "Global options"
    )]
    pub color: crate::term::colour::When,

    /// Print diff, log and review without a pager (GIT_PAGER, core.pager, PAGER or less).
    #[arg(long, global = true, help_heading = "Global options")]
    pub no_pager: bool,

    /// No status line during a stage; the actors' output only in their logs.
    #[arg(short, long, global = true, help_heading = "Global options")]
    pub quiet: bool,

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
    Push(push::PushArgs),
    Fetch(fetch::FetchArgs),
    Clean(clean::CleanArgs),
    Doctor(doctor::DoctorArgs),
    Stop(stop::StopArgs),
    Pause(pause::PauseArgs),
    Cycle(cycle::CycleArgs),
    Hold(hold::HoldArgs),
    Release(release::ReleaseArgs),
    Verify(verify::VerifyArgs),
    Demo(demo::DemoArgs),
    Init(init::InitArgs),
    Unchanged(unchanged::UnchangedArgs),
    Check(check::CheckArgs),
    Mcp(mcp::McpArgs),
    Targets(targets::TargetsArgs),
    Completions(completions::CompletionsArgs),
}

/// Parses the process arguments, runs the command, prints its error if it failed, and exits
/// with the code [`exit::code`] gives its outcome.
pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Known before clap parses: a hook's command line that clap refuses fails open too.
    let hook = check::hook_mode(&args);
    let result = match Cli::try_parse_from(&args) {
        Ok(cli) => dispatch(cli),
        // clap words usage errors itself; help and version are not errors.
        Err(err) if err.use_stderr() => Err(CliError::usage(err)),
        Err(err) => {
            let _ = err.print();
            Ok(Ending::Done)
        }
    };
    let mut result = after_signals(result);
    if hook && let Err(err) = &result {
        // Claude Code reads exit 2 as "block": whatever went wrong, the hook fails open.
        err.print(&mut crate::term::stderr());
        result = Ok(Ending::HookFailedOpen);
    }
    if let Err(err) = &result {
        err.print(&mut crate::term::stderr());
    }
    exit::code(&result).into()
}

/// A command that a signal reached while it waited on a git command (see [`crate::signals`])
/// was interrupted, whatever it returned: an error is an interruption (130), and so is success
/// unless a driver owned the signals and said itself how the run ended.
fn after_signals(result: Result<Ending, CliError>) -> Result<Ending, CliError> {
    let Some(signal) = crate::signals::received() else {
        return result;
    };
    match result {
        Err(err) => Err(CliError {
            kind: Class::Interrupted,
            ..err
        }),
        Ok(_) if !crate::signals::owned() => Err(CliError::interrupted(signal)),
        ok => ok,
    }
}

/// Runs the command a parsed command line names.
pub fn dispatch(cli: Cli) -> Result<Ending, CliError> {
    crate::term::configure(crate::term::Settings {
        colour: cli.color,
        quiet: cli.quiet,
    });
    for dir in &cli.dirs {
        // As git does: the process moves, so relative paths in arguments follow it.
        std::env::set_current_dir(dir).map_err(|err| {
            CliError::input(format!("cannot change to `{}`: {err}", dir.display()))
        })?;
    }
    let cwd = std::env::current_dir()
        .map_err(|err| CliError::input(format!("cannot read the current directory: {err}")))?;
    let pager = pager::for_command(&cli.command, cli.no_pager, &cwd);
    // Not locked for the whole command: actors' output is echoed from other threads meanwhile.
    let (pager, mut stdout) = match pager {
        Some((pager, input)) => (Some(pager), input),
        // An actor's log and a completion script are passed on byte for byte.
        None if matches!(cli.command, Command::Log(_) | Command::Completions(_)) => {
            (None, crate::term::stdout_raw())
        }
        None => (None, crate::term::stdout()),
    };
    let out = &mut stdout;
    let outcome = match cli.command {
        Command::Run(args) => run::cmd_run(&cwd, args, out),
        Command::Resume(args) => resume::cmd_resume(&cwd, args, out),
        Command::Status(args) => status::cmd_status(&cwd, args, out),
        Command::List(args) => list::cmd_list(&cwd, args, out),
        Command::Log(args) => log::cmd_log(&cwd, args, out),
        Command::Diff(args) => diff::cmd_diff(&cwd, args, out),
        Command::Review(args) => review::cmd_review(&cwd, args, out),
        Command::Finish(args) => finish::cmd_finish(&cwd, args, out),
        Command::Push(args) => push::cmd_push(&cwd, args, out),
        Command::Fetch(args) => fetch::cmd_fetch(&cwd, args, out),
        Command::Clean(args) => clean::cmd_clean(&cwd, args, out),
        Command::Doctor(args) => doctor::cmd_doctor(&cwd, args, out),
        Command::Stop(args) => stop::cmd_stop(&cwd, args, out),
        Command::Pause(args) => pause::cmd_pause(&cwd, args, out),
        Command::Cycle(args) => cycle::cmd_cycle(&cwd, args, out),
        Command::Hold(args) => hold::cmd_hold(&cwd, args, out),
        Command::Release(args) => release::cmd_release(&cwd, args, out),
        Command::Verify(args) => verify::cmd_verify(&cwd, args, out),
        Command::Demo(args) => demo::cmd_demo(args, out),
        Command::Init(args) => init::cmd_init(&cwd, args, out),
        Command::Unchanged(args) => unchanged::cmd_unchanged(&cwd, args, out),
        Command::Check(args) => check::cmd_check(&cwd, args, out),
        Command::Mcp(args) => mcp::cmd_mcp(&cwd, args, out),
        Command::Targets(args) => targets::cmd_targets(&cwd, args, out),
        Command::Completions(args) => completions::cmd_completions(args, out),
    };
    // A closed pipe (`| head`, a pager that quit) is not a failure of the command.
    let _ = stdout.flush();
    if let Some(pager) = pager {
        pager.finish(stdout);
    }
    outcome
}

/// The command line's side of the notes the operations hand up: each on stderr as it comes,
/// prefixed by its level; and, while a run is driven, its actors' output echoed and the status
/// line shown.
struct Terminal {
    echo: bool,
}

impl Terminal {
    /// For a command that only changes a run's record.
    fn notes() -> Terminal {
        Terminal { echo: false }
    }

    /// For a command that drives a run: actors echoed unless `echo` is false or `--quiet`.
    fn driving(echo: bool) -> Terminal {
        Terminal {
            echo: echo && !crate::term::quiet(),
        }
    }
}

impl Sink for Terminal {
    fn note(&self, note: Note) {
        match note.level().prefix() {
            Some(prefix) => crate::term::errln!("{prefix}: {note}"),
            None => crate::term::errln!("{note}"),
        }
    }

    fn echo(&self, stream: crate::term::Stream) -> Option<Box<dyn Write + Send>> {
        self.echo.then(|| crate::term::echo(stream))
    }

    fn running(&self, stage: &str, actor: &str, n: u32) -> Option<Box<dyn Send>> {
        let shown = crate::term::status::show(stage, actor, n)?;
        Some(Box::new(shown))
    }
}

/// The RunState with every derived fact, plus what only the store knows at read time: what
/// `--json` prints for a run (`status`, `list`, `run`, `resume`).
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "git-baton status --json"))]
struct JsonView<'a> {
    #[serde(flatten)]
    state: RunView<'a>,
    /// `status` is `running` but no live process holds the run: it crashed.
    stale: bool,
    /// Who drives the run right now, if anyone.
    lock: Option<Holder>,
    run_dir: String,
    /// For a published run or one only a remote has (`list`, `status`): how its record here
    /// stands against the remote's, as last fetched.
    #[serde(skip_serializing_if = "Option::is_none")]
    sync: Option<crate::run::remote::Standing>,
    /// For a run only a remote has: its record is that remote's claim, and whether this clone
    /// judged the coverage it shows (docs/state.md, "Who is trusted for what").
    #[serde(skip_serializing_if = "Option::is_none")]
    claim: Option<&'a crate::run::remote::RemoteClaim>,
    /// For `list` and `status`: the rate limit the run's next attempt waits for — its actor's
    /// account is on hold until `until` (docs/cycle.md, "Holds"); absent when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    hold: Option<HoldView>,
}

/// A hold on the account of a run's next actor, as `--json` shows it.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct HoldView {
    /// The actor the run's next attempt uses, and the account its limits count against.
    actor: String,
    account: String,
    until: jiff::Timestamp,
    /// The run whose rate-limited attempt put the account on hold, and the reset as its agent
    /// wrote it.
    run: String,
    text: String,
}

/// Every account on hold now, read once from every run listed (docs/cycle.md, "Holds").
struct Holds {
    rules: crate::run::schedule::Rules,
    holds: std::collections::BTreeMap<String, crate::run::schedule::Hold>,
}

impl Holds {
    /// The holds `runs` put on their accounts, as `list` has them loaded already.
    fn of(ctx: &Workspace, runs: &[Listed]) -> Holds {
        Holds::of_states(ctx, runs.iter().map(Listed::state))
    }

    /// The holds of every run, for a command about one run (`status`, the MCP `status` tool).
    /// Only the attempts count: the runs are read as recorded — those only a remote has
    /// without judging their coverage, which `list` does for showing them — and one that does
    /// not read is passed over, as `doctor`'s to report.
    fn read(ctx: &Workspace) -> Result<Holds, CliError> {
        let mut states: Vec<RunState> = Vec::new();
        let here = ctx.store.list()?;
        states.extend(here.iter().filter_map(|id| ctx.store.load(id).ok()));
        for (remote, id) in crate::run::remote::tracked_runs(&ctx.repo)? {
            if here.contains(&id) {
                continue;
            }
            if let Ok(Some(state)) = crate::run::remote::tracked_state(&ctx.repo, &remote, &id) {
                states.push(state);
            }
        }
        Ok(Holds::of_states(ctx, states.iter()))
    }

    fn of_states<'a>(ctx: &Workspace, states: impl Iterator<Item = &'a RunState>) -> Holds {
        // A configuration that does not load names no accounts: each actor is its own.
        let config = ctx.config().ok();
        let rules = crate::run::schedule::Rules::of(
            config.as_ref(),
            crate::ops::cycle::MAX_RESUMES,
            crate::ops::cycle::MAX_RESET,
        );
        let seen: Vec<crate::run::schedule::Seen> = states
            .map(|state| crate::run::schedule::Seen {
                state,
                stale: false,
                busy: false,
            })
            .collect();
        let holds = crate::run::schedule::holds(&seen, &rules, ctx.store.now());
        Holds { rules, holds }
    }

    fn view(&self, state: &RunState) -> Option<HoldView> {
        let (actor, hold) = crate::run::schedule::waiting_for(state, &self.holds, &self.rules)?;
        Some(HoldView {
            account: self.rules.account(&actor).to_owned(),
            actor,
            until: hold.until,
            run: hold.run.clone(),
            text: hold.text.clone(),
        })
    }

    /// `claude on hold until <time>`, for `list`'s CYCLE column.
    fn words(&self, state: &RunState) -> Option<String> {
        self.view(state)
            .map(|h| format!("{} on hold until {}", h.actor, h.until))
    }
}

fn json_view<'a>(store: &Store, state: &'a RunState) -> JsonView<'a> {
    JsonView {
        state: state.view(),
        stale: store.is_stale(state),
        lock: store.holder(&state.run_id).ok().flatten(),
        run_dir: store.run_dir(&state.run_id).display().to_string(),
        sync: None,
        claim: None,
        hold: None,
    }
}

/// A run as this clone has it, or as only a remote has it.
enum Listed {
    Here(RunState),
    /// Its state with the coverage this clone judged in place of the record's ([`RemoteClaim`]).
    ///
    /// [`RemoteClaim`]: crate::run::remote::RemoteClaim
    OnRemote {
        remote: String,
        state: RunState,
        claim: crate::run::remote::RemoteClaim,
    },
}

impl Listed {
    /// A run only `remote` has, as its record states it: shown with the coverage judged here.
    fn on_remote(repo: &crate::git::Repo, remote: String, state: RunState) -> Listed {
        let (state, claim) = crate::run::remote::judge_remote(repo, &remote, state);
        Listed::OnRemote {
            remote,
            state,
            claim,
        }
    }

    fn state(&self) -> &RunState {
        match self {
            Listed::Here(state) | Listed::OnRemote { state, .. } => state,
        }
    }

    /// The remote it is published to or only exists on, with how the two records stand.
    fn sync(&self, repo: &crate::git::Repo) -> Option<(String, crate::run::remote::Standing)> {
        match self {
            Listed::Here(state) => {
                let remote = state.remote()?;
                let sync = crate::run::remote::sync_of(repo, &state.run_id, remote).ok()?;
                Some((remote.to_owned(), sync))
            }
            Listed::OnRemote { remote, .. } => {
                Some((remote.clone(), crate::run::remote::Standing::RemoteOnly))
            }
        }
    }

    /// Its `--json` document, with the hold its next attempt waits for, if any.
    fn json<'a>(&'a self, ctx: &Workspace, holds: &Holds) -> JsonView<'a> {
        let sync = self.sync(&ctx.repo).map(|(_, sync)| sync);
        let hold = holds.view(self.state());
        match self {
            Listed::Here(state) => JsonView {
                sync,
                hold,
                ..json_view(&ctx.store, state)
            },
            // Nothing of it is here to hold a lock or to be stale: neither is asked (which
            // would draw this clone's id in a read-only command).
            Listed::OnRemote {
                remote,
                state,
                claim,
            } => {
                let mut view = JsonView {
                    state: state.view(),
                    stale: false,
                    lock: None,
                    run_dir: ctx.store.run_dir(&state.run_id).display().to_string(),
                    sync,
                    claim: Some(claim),
                    hold,
                };
                // The record names the remote as the clone that saved it calls it; here it is
                // this clone's name for it that says where the run is.
                view.state.remote = Some(remote);
                view
            }
        }
    }
}

/// Every run of this clone, then those only a remote has (as last fetched), oldest first within
/// each; an unreadable one is a warning, never a reason to hide the others.
fn listed_runs(ctx: &Workspace) -> Result<Vec<Listed>, CliError> {
    let mut runs = Vec::new();
    let here = ctx.store.list()?;
    for id in &here {
        match ctx.store.load(id) {
            Ok(state) => runs.push(Listed::Here(state)),
            Err(err) => crate::term::errln!("warning: {err}"),
        }
    }
    // Ids order runs by the second they were made in; the millisecond of `created_at` orders
    // the runs one `run PLAN…` made within one second as they were made: the queue's order.
    runs.sort_by_key(|run| (run.state().created_at, run.state().run_id.clone()));
    let mut seen: std::collections::BTreeSet<crate::state::RunId> = here.into_iter().collect();
    for (remote, id) in crate::run::remote::tracked_runs(&ctx.repo)? {
        if !seen.insert(id.clone()) {
            continue;
        }
        match crate::run::remote::tracked_state(&ctx.repo, &remote, &id) {
            Ok(Some(state)) => runs.push(Listed::on_remote(&ctx.repo, remote, state)),
            Ok(None) => {}
            Err(err) => crate::term::errln!("warning: {err}"),
        }
    }
    Ok(runs)
}

/// Every `--json`: pretty-printed, one trailing newline.
fn write_json(out: &mut dyn Write, value: &impl Serialize) {
    let mut text = serde_json::to_string_pretty(value).expect("serializes");
    text.push('\n');
    let _ = out.write_all(text.as_bytes());
}

/// After driving: the summary on stderr (or the RunState as JSON), and how the drive ended.
fn print_summary(
    store: &Store,
    drove: Drove,
    json: bool,
    out: &mut dyn Write,
) -> Result<Ending, CliError> {
    let state = &drove.state;
    if json {
        write_json(out, &json_view(store, state));
    } else {
        let text = crate::report::status::render(state, false, None, store.now());
        crate::term::err!("\n{text}");
    }
    Ok(Ending::Driven(drove.driven))
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
