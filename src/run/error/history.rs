//! What the record of attempts does not hold: a stage, an attempt or its snapshot that a
//! command asked for.

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("run {run} has no stage `{stage}`")]
    NoStage {
        run: String,
        stage: String,
        known: Vec<String>,
    },
    #[error("run {run} has no attempts yet")]
    NoAttempts { run: String },
    #[error(
        "stage `{stage}` of run {run} has no {}",
        .n.map_or("any attempts yet".to_string(), |n| format!("attempt {n}"))
    )]
    NoAttempt {
        run: String,
        stage: String,
        n: Option<u32>,
        count: usize,
    },
    #[error(
        "attempt {n} of stage `{stage}` has no snapshot (it is still running, or its snapshot failed)"
    )]
    NoSnapshot { stage: String, n: u32 },
}
