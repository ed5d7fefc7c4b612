//! The agent CLIs' host files — the Claude Code plugin, the Gemini CLI extension and the Codex
//! hooks file of the repository's `packaging/` directory — embedded at build time, so that
//! `git baton init --packaging DIR` can write them where no checkout of the repository is (a
//! `cargo install`). `packaging/` stays their one source: these are its bytes.
//!
//! Pure: the table only; `ops::packaging` writes it.

/// One file of `packaging/`.
#[derive(Debug)]
pub struct PackagedFile {
    /// The preset's name of the agent it is for (`claude`, `gemini`, `codex`).
    pub agent: &'static str,
    /// Its path below `packaging/` (and below the directory `init --packaging` writes),
    /// `/`-separated; the first component is the agent's directory.
    pub path: &'static str,
    pub bytes: &'static [u8],
}

macro_rules! packaged {
    ($agent:literal, $path:literal) => {
        PackagedFile {
            agent: $agent,
            path: $path,
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/packaging/", $path)),
        }
    };
}

/// Every file of `packaging/`, by agent (a test compares it with the directory).
pub const FILES: &[PackagedFile] = &[
    packaged!("claude", "claude-code/.claude-plugin/plugin.json"),
    packaged!("claude", "claude-code/hooks/hooks.json"),
    packaged!("gemini", "gemini/gemini-extension.json"),
    packaged!("gemini", "gemini/hooks/hooks.json"),
    packaged!("gemini", "gemini/policies/git-baton.toml"),
    packaged!("codex", "codex/hooks.json"),
];

/// The agents with host files, in the order of [`FILES`].
pub fn agents() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = FILES.iter().map(|f| f.agent).collect();
    names.dedup();
    names
}

/// The files of `agent` (a preset's name), or of every agent when `None`; empty for an agent
/// without host files.
pub fn files(agent: Option<&str>) -> Vec<&'static PackagedFile> {
    FILES
        .iter()
        .filter(|f| agent.is_none_or(|a| a == f.agent))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // That the table is packaging/ byte for byte, every file of it, is held end to end by
    // tests/runs/packaging.rs, through what `init --packaging` writes.

    #[test]
    fn each_agent_has_its_own_directory_and_a_preset() {
        assert_eq!(agents(), ["claude", "gemini", "codex"]);
        for f in FILES {
            assert!(crate::agent::preset::find(f.agent).is_some(), "{}", f.agent);
            let dir = f.path.split('/').next().unwrap();
            let owners: Vec<&str> = FILES
                .iter()
                .filter(|g| g.path.starts_with(&format!("{dir}/")))
                .map(|g| g.agent)
                .collect();
            assert!(owners.iter().all(|a| *a == f.agent), "{}", f.path);
        }
        assert!(files(Some("aider")).is_empty());
        assert_eq!(files(None).len(), FILES.len());
    }
}
