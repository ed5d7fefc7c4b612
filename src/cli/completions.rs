//! `git baton completions <SHELL>`: the shell completion script, generated from the clap
//! definitions at run time, so it always completes the commands and options of this binary.

use std::io::Write;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, CliError, Ending};

/// The program name the scripts complete: the binary git runs for `git baton`.
const BIN: &str = "git-baton";

/// Print the completion script for a shell
///
/// The script completes `git-baton`; the bash script also defines `_git_baton`, the function
/// git's own bash completion calls for `git baton`, so `git baton <TAB>` completes once both
/// are loaded. Install it where your shell loads completions, for example:
///
///   git baton completions bash > ~/.local/share/bash-completion/completions/git-baton
///   git baton completions zsh > ~/.zfunc/_git-baton
///   git baton completions fish > ~/.config/fish/conf.d/git-baton.fish
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

pub fn cmd_completions(args: CompletionsArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let _ = out.write_all(script(args.shell).as_bytes());
    Ok(Ending::Done)
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    if shell == Shell::Bash {
        return bash();
    }
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut text);
    let text = String::from_utf8_lossy(&text).into_owned();
    if shell == Shell::Fish {
        return text + GIT_FISH_HOOK;
    }
    text
}

/// The name the bash script is generated for. clap_complete's bash script spells the state of a
/// subcommand of a hyphenated program two ways, so that nothing after `git-baton verify`
/// completes (clap-rs/clap#6421, open in 4.6): it is generated for a name without a hyphen,
/// then registered for `git-baton`.
const BASH_NAME: &str = "gitbaton";

fn bash() -> String {
    let mut text = Vec::new();
    clap_complete::generate(Shell::Bash, &mut Cli::command(), BASH_NAME, &mut text);
    let text =
        String::from_utf8_lossy(&text).replace(&format!(" {BASH_NAME}\n"), &format!(" {BIN}\n"));
    text + GIT_BASH_HOOK
}

/// git's bash completion completes `git <command> …` by calling `_git_<command>` when such a
/// function exists, with its own `words`, `cword`, `cur` and `prev` set and the command's word
/// at `__git_cmd_idx` (options such as `-C dir` move it; older gits set no index and always
/// have it at 1). The generated function reads `COMP_WORDS` and `COMP_CWORD`, so the hook hands it the
/// words from `baton` on, as if `git-baton` had been typed, and lets it fill `COMPREPLY`.
const GIT_BASH_HOOK: &str = r#"
# `git baton <TAB>`: git's bash completion calls _git_baton for the `baton` command.
_git_baton() {
    local idx=${__git_cmd_idx:-1}
    local COMP_WORDS=(git-baton "${words[@]:idx+1}")
    local COMP_CWORD=$((cword - idx))
    _gitbaton git-baton "$cur" "$prev"
}
"#;

/// fish's git completion hands `git <command> …` to the completions of `git-<command>` for
/// the `git-*` programs it finds on `PATH`, but some fish builds register none (fish 3.6 as
/// Debian 12 ships it); this line registers git-baton the way that loop does. Loaded
/// from `conf.d`, it also makes `git baton` complete before anything loaded the `git-baton`
/// completions.
const GIT_FISH_HOOK: &str = r#"
# `git baton <TAB>`: hand the words after `baton` to git-baton's completions.
complete -c git -f -n '__fish_git_using_command baton' -a '(__fish_git_complete_custom_command baton)'
"#;
