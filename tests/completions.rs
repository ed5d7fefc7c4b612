//! `git baton completions <SHELL>`: every shell gets a script from the real binary, and the
//! bash one completes in a real bash, both as `git-baton` and inside git's own completion
//! (`git baton <TAB>` calls `_git_baton`).

use std::path::Path;
use std::process::Command;

use crate::support::TestRepo;

/// Runs `script` in a non-interactive bash after sourcing the bash completion script, and
/// returns its stdout: the completion candidates it prints.
fn bash(script_file: &Path, script: &str) -> String {
    let out = Command::new("bash")
        .arg("--norc")
        .arg("--noprofile")
        .arg("-c")
        .arg(format!("source {}\n{script}", script_file.display()))
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn candidates(output: &str) -> Vec<&str> {
    output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn every_shell_gets_a_script() {
    let repo = TestRepo::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = repo.baton(["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {run}");
        assert!(run.stderr.is_empty(), "{shell}: {run}");
        for word in ["git-baton", "verify", "completions", "--format"] {
            assert!(
                run.stdout.contains(word),
                "{shell}: no `{word}` in\n{}",
                run.stdout
            );
        }
    }
    let unknown = repo.baton(["completions", "tcsh"]);
    assert_eq!(unknown.code, 2, "{unknown}");
    assert!(unknown.stderr.contains("tcsh"), "{unknown}");
}

#[test]
fn bash_completes_commands_and_options() {
    let repo = TestRepo::new();
    let run = repo.baton(["completions", "bash"]);
    assert_eq!(run.code, 0, "{run}");
    let file = repo.path("git-baton.bash");
    std::fs::write(&file, &run.stdout).unwrap();

    // As bash calls it for `git-baton ver<TAB>` and `git-baton verify --for<TAB>`.
    let direct = |words: &[&str]| {
        let cword = words.len() - 1;
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        bash(
            &file,
            &format!(
                "COMP_WORDS=({}); COMP_CWORD={cword}\n$(complete -p git-baton | sed 's/.*-F \\([^ ]*\\).*/\\1/') git-baton '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
                quoted.join(" "),
                words[cword],
                words[cword - 1],
            ),
        )
    };
    assert_eq!(candidates(&direct(&["git-baton", "ver"])), ["verify"]);
    let options = direct(&["git-baton", "verify", "--for"]);
    assert_eq!(candidates(&options), ["--format"]);
    let subcommands = direct(&["git-baton", ""]);
    for command in ["run", "resume", "status", "verify", "completions"] {
        assert!(candidates(&subcommands).contains(&command), "{subcommands}");
    }

    // As git's completion calls the hook: its own `words`, `cword`, `cur`, `prev`, and the
    // command's index (`git -C dir baton …` moves it).
    let hooked = bash(
        &file,
        "words=(git -C . baton verify --for); cword=5; cur=--for; prev=verify; __git_cmd_idx=3\n\
         _git_baton\nprintf '%s\\n' \"${COMPREPLY[@]}\"",
    );
    assert_eq!(candidates(&hooked), ["--format"]);
}

/// With git's own bash completion loaded, `git baton ver<TAB>` completes through `_git_baton`.
/// Runs where git's completion script is installed at its usual Debian place, as on the
/// project's machines.
#[test]
fn git_completion_calls_the_hook() {
    let git_completion = Path::new("/usr/share/bash-completion/completions/git");
    if !git_completion.exists() {
        eprintln!(
            "skipped: git_completion_calls_the_hook: git's bash completion is not installed at {}",
            git_completion.display()
        );
        return;
    }
    let repo = TestRepo::new();
    let run = repo.baton(["completions", "bash"]);
    // Installed as bash-completion's `completions/git-baton`: git's completion asks the loader
    // for `git-baton` when `_git_baton` is not defined yet, and the loader sources that file.
    let file = repo.path("git-baton");
    std::fs::write(&file, &run.stdout).unwrap();
    let loader = repo.path("loader.bash");
    std::fs::write(
        &loader,
        format!(
            "_completion_loader() {{ [ \"$1\" = git-baton ] && source '{}'; }}\n",
            file.display()
        ),
    )
    .unwrap();
    let file = loader;
    let complete = |line: &str| {
        let words: Vec<String> = line.split(' ').map(|w| format!("'{w}'")).collect();
        bash(
            &file,
            &format!(
                "source {}\nCOMP_LINE='{line}'; COMP_POINT={}; COMP_WORDS=({}); COMP_CWORD={}\n\
                 __git_wrap__git_main\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
                git_completion.display(),
                line.len(),
                words.join(" "),
                words.len() - 1,
            ),
        )
    };
    assert_eq!(candidates(&complete("git baton ver")), ["verify"]);
    assert_eq!(
        candidates(&complete("git baton verify --for")),
        ["--format"]
    );
}

/// fish completes without a terminal (`complete -C`), so where fish is installed the script is
/// tried as the docs install it (`conf.d`): `git-baton …` directly, and `git baton …` through
/// fish's own git completion.
#[test]
fn fish_completes_both_spellings() {
    if Command::new("fish").arg("--version").output().is_err() {
        eprintln!("skipped: fish_completes_both_spellings: fish is not installed");
        return;
    }
    let repo = TestRepo::new();
    let run = repo.baton(["completions", "fish"]);
    let conf = repo.path("config/fish/conf.d");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("git-baton.fish"), &run.stdout).unwrap();
    let complete = |line: &str| {
        // The temporary XDG_CONFIG_HOME's conf.d is all the user configuration fish loads.
        let out = Command::new("fish")
            .arg("-c")
            .arg(format!("complete -C '{line}'"))
            .env("XDG_CONFIG_HOME", repo.path("config"))
            .env("HOME", repo.tmp())
            .current_dir(repo.tmp())
            .output()
            .expect("fish runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(complete("git-baton ver"), ["verify"]);
    assert_eq!(complete("git-baton verify --for"), ["--format"]);
    assert_eq!(complete("git baton ver"), ["verify"]);
    assert_eq!(complete("git -C . baton verify --for"), ["--format"]);
}
