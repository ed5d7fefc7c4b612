//! The GitHub Action's script (scripts/action/gate.sh, all that action.yml runs), run as a
//! script against fixture repositories: the release archive comes from an HTTP server on
//! 127.0.0.1 in this process, built from the binary under test, so that the download, the
//! checksum check, the fallback and the gate itself all run for real.
//!
//! The fallback's `cargo install` is the one part replaced: compiling git-baton in a test would
//! take minutes, so `GIT_BATON_CARGO` names a small script that records its arguments and
//! installs the binary under test where `--root` says. The script's decision to fall back, and
//! the command line it falls back to, are what is checked.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use git_baton::hermetic::{Hermetic, Person};

use crate::support::{Run, TestRepo};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const TARGET: &str = "x86_64-unknown-linux-gnu";
/// Long enough for any sane machine; the server stops serving after it.
const DEADLINE: Duration = Duration::from_secs(120);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action/gate.sh")
}

/// A static file server on 127.0.0.1 for the files under `root`, recording each request path.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(root: PathBuf) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, stopped) = (Arc::clone(&requests), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            while !stopped.load(Ordering::Relaxed) && started.elapsed() < DEADLINE {
                match listener.accept() {
                    Ok((stream, _)) => serve(stream, &root, &seen),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Server {
            url,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One HTTP/1.1 request: the file under `root` at its path, or 404.
fn serve(stream: TcpStream, root: &Path, seen: &Mutex<Vec<String>>) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(&stream);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    // The headers, bounded; none is needed.
    for _ in 0..100 {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let path = request.split(' ').nth(1).unwrap_or("/").to_owned();
    seen.lock().unwrap().push(path.clone());
    let file = root.join(path.trim_start_matches('/'));
    let mut out = &stream;
    let safe = !path.contains("..");
    match std::fs::read(&file) {
        Ok(body) if safe && file.is_file() => {
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = out.write_all(&body);
        }
        _ => {
            let _ = out.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    }
}

/// A release as the release workflow publishes it, under `dir`: `v<version>/<archive>.tar.gz`
/// holding `<archive>/git-baton` (the binary under test), and `<archive>.sha256` with a
/// sha256sum line for it. `checksum` replaces the right one when given.
fn publish(dir: &Path, checksum: Option<&str>) {
    let archive = format!("git-baton-v{VERSION}-{TARGET}");
    let release = dir.join(format!("v{VERSION}"));
    let stage = dir.join("stage");
    std::fs::create_dir_all(stage.join(&archive)).unwrap();
    std::fs::create_dir_all(&release).unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_git-baton"),
        stage.join(&archive).join("git-baton"),
    )
    .unwrap();
    let tarball = release.join(format!("{archive}.tar.gz"));
    // The fastest gzip level: the debug binary is large.
    let tar = Command::new("sh")
        .args(["-c", "tar -cf - -C \"$1\" \"$2\" | gzip -1 > \"$3\"", "sh"])
        .arg(&stage)
        .arg(&archive)
        .arg(&tarball)
        .status()
        .unwrap();
    assert!(tar.success());
    let sum = Command::new("sha256sum").arg(&tarball).output().unwrap();
    assert!(sum.status.success());
    let right = String::from_utf8(sum.stdout).unwrap();
    let right = right.split(' ').next().unwrap();
    std::fs::write(
        release.join(format!("{archive}.sha256")),
        format!("{}  {archive}.tar.gz\n", checksum.unwrap_or(right)),
    )
    .unwrap();
}

/// A `cargo` for the fallback: records its arguments in `<dir>/cargo-args` and installs the
/// binary under test into `<root>/bin`, as `cargo install --root <root>` would.
fn fake_cargo(dir: &Path) -> PathBuf {
    let path = dir.join("cargo");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\nroot=\nwhile [ $# -gt 0 ]; do\n  \
             [ \"$1\" = --root ] && root=$2\n  shift\ndone\nmkdir -p \"$root/bin\"\n\
             cp '{bin}' \"$root/bin/git-baton\"\n",
            log = dir.join("cargo-args").display(),
            bin = env!("CARGO_BIN_EXE_git-baton"),
        ),
    )
    .unwrap();
    let chmod = Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    assert!(chmod.success());
    path
}

/// The repository of a pull request: `main` with a plan of two targets, `feature` changing one
/// of them, with `message` (which may carry trailers).
fn pull_request(message: &str) -> TestRepo {
    TestRepo::with().two_docs().with_a_edited(message)
}

/// One run of the action's script as a workflow step: in the repository's root, for
/// [`TARGET`], with `BASE=main` and the `INPUT_*` variables of [`Step::input`], installing
/// under `work`.
struct Step<'a> {
    repo: &'a TestRepo,
    dir: &'a Path,
    work: &'a Path,
    inputs: Vec<(&'a str, &'a str)>,
    target: Option<&'a str>,
    env: Vec<(&'a str, &'a Path)>,
}

impl<'a> Step<'a> {
    fn new(repo: &'a TestRepo, work: &'a Path) -> Step<'a> {
        Step {
            repo,
            dir: &repo.root,
            work,
            inputs: vec![("BASE", "main")],
            target: Some(TARGET),
            env: Vec::new(),
        }
    }

    /// The step's input `name` (`PLANS`, …), replacing any given before.
    fn input(mut self, name: &'a str, value: &'a str) -> Step<'a> {
        self.inputs.retain(|(n, _)| *n != name);
        self.inputs.push((name, value));
        self
    }

    /// Releases downloaded from `url`.
    fn releases(self, url: &'a str) -> Step<'a> {
        self.input("RELEASE_URL", url)
    }

    /// Run in `dir` instead of the repository's root.
    fn in_dir(mut self, dir: &'a Path) -> Step<'a> {
        self.dir = dir;
        self
    }

    /// For the platform the script detects.
    fn detected_platform(mut self) -> Step<'a> {
        self.target = None;
        self
    }

    /// An environment variable as the runner sets them (`GITHUB_OUTPUT`).
    fn env(mut self, name: &'a str, value: &'a Path) -> Step<'a> {
        self.env.push((name, value));
        self
    }

    fn run(&self) -> Run {
        let mut cmd = Command::new("bash");
        cmd.arg(script()).current_dir(self.dir);
        Hermetic::new(&self.repo.home)
            .identity(
                Person::new("Test Author", "author@example.com"),
                Person::new("Test Committer", "committer@example.com"),
            )
            .apply(&mut cmd);
        cmd.env("GIT_BATON_INSTALL_DIR", self.work.join("install"))
            .env("GIT_BATON_CARGO", self.work.join("cargo"));
        if let Some(target) = self.target {
            cmd.env("GIT_BATON_TARGET", target);
        }
        for (name, value) in &self.inputs {
            cmd.env(format!("INPUT_{name}"), value);
        }
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        Run::new(cmd.output().unwrap(), &[])
    }
}

fn workdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("baton-action")
        .tempdir()
        .unwrap()
}

/// The right checksum installs the release binary, and the gate's verdict (here: a failure,
/// exit 1, in the github format) is the step's.
#[test]
fn a_verified_release_is_installed_and_the_gate_decides() {
    let work = workdir();
    publish(&work.path().join("release"), None);
    fake_cargo(work.path());
    let server = Server::start(work.path().join("release"));
    let repo = pull_request("Two docs\n\nBaton-Run: 0abc123xyz\nBaton-Plan: plans/p.md\n");
    let step = Step::new(&repo, work.path()).releases(&server.url);

    let run = step.run();
    assert_eq!(run.code, 1, "the gate's exit code comes through:\n{run}");
    assert!(
        run.stdout
            .contains("::error file=plans/p.md,line=5,title=uncovered target docs/b.md::"),
        "{run}"
    );
    assert!(
        run.stderr.contains(&format!(
            "installed the release binary v{VERSION} for {TARGET}"
        )),
        "{run}"
    );
    let archive = format!("/v{VERSION}/git-baton-v{VERSION}-{TARGET}");
    assert_eq!(
        server.requests(),
        [format!("{archive}.tar.gz"), format!("{archive}.sha256")]
    );
    assert!(
        !work.path().join("cargo-args").exists(),
        "nothing was built"
    );

    // A reason in a commit passes the gate: exit 0, with the binary already installed.
    repo.commit_all(
        "Reason\n\nBaton-Unchanged: docs/b.md: it already states the rule in its first section\n",
    );
    let run = step.run();
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("gate passed"), "{run}");
    assert_eq!(server.requests().len(), 2, "installed once");

    // Bad input is exit 2, and --require-plans through its input is exit 1.
    let run = Step::new(&repo, work.path())
        .input("BASE", "no-such-branch")
        .releases(&server.url)
        .run();
    assert_eq!(run.code, 2, "{run}");
    repo.git(["checkout", "-q", "-b", "unrelated", "main"]);
    repo.write("README.md", "hello\n");
    repo.commit_all("unrelated");
    let run = Step::new(&repo, work.path())
        .releases(&server.url)
        .input("REQUIRE_PLANS", "true")
        .input("FORMAT", "text")
        .run();
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout
            .starts_with("error: no plan was checked and --require-plans was given"),
        "{run}"
    );

    // Plans and extra arguments reach verify, split on spaces and never globbed.
    let run = Step::new(&repo, work.path())
        .releases(&server.url)
        .input("PLANS", " plans/p.md ")
        .input("ARGS", "--require-targets  --allow-plan-changes")
        .input("FORMAT", "json")
        .run();
    assert_eq!(run.code, 1, "{run}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["plans"][0]["path"], "plans/p.md");
    assert_eq!(json["require_targets"], true);
    assert_eq!(json["allow_plan_changes"], true);
    let run = Step::new(&repo, work.path())
        .releases(&server.url)
        .input("PLANS", "plans/*.md")
        .run();
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("cannot read plan plans/*.md"), "{run}");
}

/// An archive that does not match its checksum is never installed, and never replaced by a
/// build either: the step fails.
#[test]
fn a_wrong_checksum_is_refused() {
    let work = workdir();
    publish(&work.path().join("release"), Some(&"0".repeat(64)));
    fake_cargo(work.path());
    let server = Server::start(work.path().join("release"));
    let repo = pull_request("Two docs");
    let run = Step::new(&repo, work.path()).releases(&server.url).run();
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "error: git-baton-v{VERSION}-{TARGET}.tar.gz does not match its checksum (expected \
             sha256 {}",
            "0".repeat(64)
        )),
        "{run}"
    );
    assert!(!work.path().join("install/bin/git-baton").exists());
    assert!(
        !work.path().join("cargo-args").exists(),
        "nothing was built"
    );
}

/// No release for this version or platform: the action builds the pinned source with
/// `cargo install --locked`, then runs the gate.
#[test]
fn a_missing_release_falls_back_to_cargo_install() {
    let work = workdir();
    std::fs::create_dir_all(work.path().join("release")).unwrap();
    fake_cargo(work.path());
    let server = Server::start(work.path().join("release"));
    let repo = pull_request("Two docs\n\nBaton-Plan: plans/p.md\n");
    let run = Step::new(&repo, work.path())
        .detected_platform()
        .releases(&server.url)
        .run();
    assert_eq!(run.code, 1, "{run}");
    // The archive of this platform was asked for, when there is one for it.
    let platform = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("x86_64-unknown-linux-gnu"),
        ("linux", "aarch64") => Some("aarch64-unknown-linux-gnu"),
        ("macos", "x86_64") => Some("x86_64-apple-darwin"),
        ("macos", "aarch64") => Some("aarch64-apple-darwin"),
        _ => None,
    };
    match platform {
        Some(target) => {
            assert!(run.stderr.contains("no release archive at"), "{run}");
            assert_eq!(
                server.requests(),
                [format!("/v{VERSION}/git-baton-v{VERSION}-{target}.tar.gz")]
            );
        }
        None => assert_eq!(server.requests(), Vec::<String>::new()),
    }
    let args = std::fs::read_to_string(work.path().join("cargo-args")).unwrap();
    assert_eq!(
        args.trim(),
        format!(
            "install --locked --quiet --path {} --root {}",
            env!("CARGO_MANIFEST_DIR"),
            work.path().join("install").display()
        )
    );
    assert!(run.stdout.contains("uncovered target docs/b.md"), "{run}");

    // Another version than the action's own is built from crates.io.
    let other = workdir();
    fake_cargo(other.path());
    let run = Step::new(&repo, other.path())
        .releases(&server.url)
        .input("VERSION", "v9.9.9")
        .run();
    assert_eq!(run.code, 1, "{run}");
    let args = std::fs::read_to_string(other.path().join("cargo-args")).unwrap();
    assert!(
        args.starts_with("install --locked --quiet git-baton --version =9.9.9 --root "),
        "{args}"
    );
}

/// `sarif:` writes the gate as a SARIF log beside the step's own format, whatever the verdict,
/// and names it in the step output; the step's exit code is still the gate's.
#[test]
fn the_sarif_input_writes_a_log_for_code_scanning() {
    let work = workdir();
    std::fs::create_dir_all(work.path().join("release")).unwrap();
    fake_cargo(work.path());
    let repo = pull_request("Two docs\n\nBaton-Plan: plans/p.md\n");
    let sarif = work.path().join("out.sarif");
    let output = work.path().join("github-output");
    let run = Step::new(&repo, work.path())
        .input("SARIF", sarif.to_str().unwrap())
        .env("GITHUB_OUTPUT", &output)
        .env("RUNNER_TEMP", work.path())
        .run();
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains("::error file=plans/p.md,line=5"),
        "{run}"
    );
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["runs"][0]["results"][0]["ruleId"], "baton/uncovered");
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        format!("sarif-file={}\n", sarif.display())
    );

    // `true` writes it to the runner's temporary directory; `false` writes nothing.
    let run = Step::new(&repo, work.path())
        .input("SARIF", "true")
        .input("FORMAT", "text")
        .env("RUNNER_TEMP", work.path())
        .run();
    assert_eq!(run.code, 1, "{run}");
    assert!(work.path().join("git-baton.sarif").is_file(), "{run}");
    std::fs::remove_file(work.path().join("git-baton.sarif")).unwrap();
    let run = Step::new(&repo, work.path())
        .input("SARIF", "false")
        .env("RUNNER_TEMP", work.path())
        .run();
    assert_eq!(run.code, 1, "{run}");
    assert!(!work.path().join("git-baton.sarif").exists(), "{run}");
}

/// A shallow clone lacks the merge base: the action says so, and how to fix it, before it
/// installs anything.
#[test]
fn a_shallow_checkout_fails_clearly() {
    let work = workdir();
    fake_cargo(work.path());
    let repo = pull_request("Two docs");
    let shallow = repo.tmp().join("shallow");
    let url = format!("file://{}", repo.root.display());
    repo.git([
        "clone",
        "-q",
        "--depth",
        "1",
        "--branch",
        "feature",
        &url,
        shallow.to_str().unwrap(),
    ]);
    let run = Step::new(&repo, work.path())
        .in_dir(&shallow)
        .input("BASE", "origin/main")
        .releases("http://127.0.0.1:9")
        .run();
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(
        run.stderr,
        "error: the checkout is shallow, so the merge base of the pull request is missing; the \
         gate never guesses one\nhint: give actions/checkout `fetch-depth: 0` (or run `git fetch \
         --unshallow` before this step)\n"
    );
    assert!(!work.path().join("install/bin/git-baton").exists());
    assert!(!work.path().join("cargo-args").exists());
}

/// A YAML file of the repository, as a JSON value.
fn yaml(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// action.yml hands every input to the script under the name the script reads, and the script
/// reads no input action.yml does not declare.
#[test]
fn action_yml_gives_the_script_every_input() {
    let action = yaml("action.yml");
    let script = std::fs::read_to_string(script()).unwrap();
    let inputs = action["inputs"].as_object().unwrap();
    let step = &action["runs"]["steps"][0];
    assert_eq!(action["runs"]["using"], "composite");
    assert_eq!(
        step["run"],
        "bash \"$GITHUB_ACTION_PATH/scripts/action/gate.sh\""
    );
    let env = step["env"].as_object().unwrap();
    for name in inputs.keys() {
        let var = format!("INPUT_{}", name.to_uppercase().replace('-', "_"));
        assert_eq!(
            env[&var],
            format!("${{{{ inputs.{name} }}}}"),
            "{name} is passed as {var}"
        );
        assert!(
            script.contains(&format!("${{{var}")),
            "the script reads {var}"
        );
    }
    let read: std::collections::BTreeSet<&str> = script
        .match_indices("${INPUT_")
        .map(|(at, _)| {
            let rest = &script[at + 2..];
            &rest[..rest.find([':', '}']).unwrap()]
        })
        .collect();
    for var in read {
        assert!(env.contains_key(var), "{var} is read but not passed");
    }
}

/// The release workflow publishes what the script downloads: `git-baton-v<version>-<target>`
/// archives with a sha256 file, for every target the script asks for, holding the man pages and
/// completions.
#[test]
fn the_release_workflow_publishes_what_the_action_downloads() {
    let release = yaml(".github/workflows/release.yml");
    let script = std::fs::read_to_string(script()).unwrap();
    assert!(script.contains("local archive=\"git-baton-v$version-$target\""));
    let job = &release["jobs"]["upload-assets"];
    let upload = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("taiki-e/upload-rust-binary-action@"))
        })
        .unwrap();
    let with = &upload["with"];
    assert_eq!(with["bin"], "git-baton");
    assert_eq!(with["archive"], "$bin-$tag-$target");
    assert_eq!(with["leading-dir"], true);
    assert_eq!(with["checksum"], "sha256");
    let include = with["include"].as_str().unwrap();
    for part in ["dist/man", "dist/completions"] {
        assert!(include.split(',').any(|p| p == part), "{include}");
    }
    let mut built: Vec<&str> = job["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["target"].as_str().unwrap())
        .collect();
    built.sort_unstable();
    let mut asked: Vec<&str> = script
        .lines()
        .filter_map(|l| l.split(") target=").nth(1))
        .map(|t| t.trim_end_matches(" ;;"))
        .filter(|t| !t.is_empty() && *t != ";;")
        .collect();
    asked.sort_unstable();
    assert_eq!(built, asked);
    // Tags are v<version>, as the script asks for.
    assert_eq!(release["on"]["push"]["tags"][0], "v[0-9]+.*");
}

/// The pre-commit hooks run the worktree-mode gate on pre-push, and their entry is a working
/// command line: it fails an uncovered plan and passes a covered one.
#[test]
fn pre_commit_hooks_run_the_worktree_gate_before_a_push() {
    let hooks = yaml(".pre-commit-hooks.yaml");
    let hooks = hooks.as_array().unwrap();
    assert_eq!(hooks.len(), 2);
    let repo = pull_request("Two docs\n\nBaton-Plan: plans/p.md\n");
    for hook in hooks {
        assert_eq!(hook["stages"], serde_json::json!(["pre-push"]), "{hook}");
        assert_eq!(hook["pass_filenames"], false, "{hook}");
        assert_eq!(hook["always_run"], true, "{hook}");
        let entry: Vec<&str> = hook["entry"].as_str().unwrap().split(' ').collect();
        assert_eq!(entry[0], "git-baton", "{hook}");
        // As pre-commit runs it, with the `args:` docs/ci.md shows.
        let args: Vec<&str> = entry[1..]
            .iter()
            .copied()
            .chain(["--base", "main"])
            .collect();
        let run = repo.baton(&args);
        assert_eq!(run.code, 1, "{run}");
        assert!(run.stdout.contains("uncovered  docs/b.md"), "{run}");
    }
    repo.write("docs/b.md", "b, edited but not committed\n");
    let run = repo.baton(["verify", "--base", "main"]);
    assert_eq!(run.code, 0, "{run}");
}

/// The GitLab example is valid YAML whose job runs the action's script on merge requests with
/// the whole history.
#[test]
fn the_gitlab_example_runs_the_script_with_the_whole_history() {
    let ci = yaml("examples/ci/gitlab-ci.yml");
    let job = &ci["git-baton"];
    assert_eq!(job["variables"]["GIT_DEPTH"], "0");
    assert_eq!(
        job["rules"][0]["if"],
        "$CI_PIPELINE_SOURCE == \"merge_request_event\""
    );
    let script = job["script"].as_array().unwrap();
    assert!(
        script
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .ends_with("bash /tmp/git-baton-action/scripts/action/gate.sh"),
        "{script:?}"
    );
}
