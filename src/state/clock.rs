//! Where a run's timestamps and the noise of its id come from: the system, or, for tests, two
//! environment variables read here and nowhere else.
//!
//! - `GIT_BATON_TIMESTAMP` (an RFC 3339 instant): every reading of the clock returns that instant,
//!   then the next reading returns it one second later, and so on. Durations of attempts are the
//!   difference of the two readings around them instead of a monotonic measurement.
//! - `GIT_BATON_RANDOMNESS_SEED` (an integer): run ids take their noise from a generator seeded
//!   with it.
//!
//! Together they make every id, timestamp and duration a command prints a function of its inputs,
//! so tests compare whole outputs instead of normalising them (jj's `JJ_TIMESTAMP` and
//! `JJ_RANDOMNESS_SEED` do the same). A test harness advances both between commands.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

pub const TIMESTAMP_VAR: &str = "GIT_BATON_TIMESTAMP";
pub const SEED_VAR: &str = "GIT_BATON_RANDOMNESS_SEED";

/// How far an injected clock advances at each reading.
const STEP: SignedDuration = SignedDuration::from_secs(1);

/// A testing hook set to something unusable.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    #[error("{TIMESTAMP_VAR}=`{value}` is not an RFC 3339 timestamp: {source}")]
    Timestamp { value: String, source: jiff::Error },
    #[error("{SEED_VAR}=`{value}` is not a non-negative integer")]
    Seed { value: String },
}

/// The source of time and of id noise; clones share it, so readings stay ordered across them.
#[derive(Debug, Clone)]
pub struct Clock {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug)]
struct Inner {
    /// `None`: the system clock.
    next: Option<Timestamp>,
    /// `None`: fresh randomness per id.
    seed: Option<u64>,
}

impl Clock {
    /// The system's clock and randomness.
    pub fn system() -> Clock {
        Clock::with(None, None)
    }

    /// A clock that starts at `start` and advances one second per reading, and ids whose noise
    /// is seeded with `seed`.
    pub fn fixed(start: Timestamp, seed: u64) -> Clock {
        Clock::with(Some(start), Some(seed))
    }

    /// The system clock, unless the testing hooks say otherwise. The one place that reads them.
    pub fn from_env() -> Result<Clock, ClockError> {
        let next = match std::env::var(TIMESTAMP_VAR) {
            Ok(value) => Some(
                value
                    .parse::<Timestamp>()
                    .map_err(|source| ClockError::Timestamp { value, source })?,
            ),
            Err(_) => None,
        };
        let seed = match std::env::var(SEED_VAR) {
            Ok(value) => Some(value.parse().map_err(|_| ClockError::Seed { value })?),
            Err(_) => None,
        };
        Ok(Clock::with(next, seed))
    }

    fn with(next: Option<Timestamp>, seed: Option<u64>) -> Clock {
        Clock {
            inner: Arc::new(Mutex::new(Inner { next, seed })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Now, to the millisecond (the precision of the RunState).
    pub fn now(&self) -> Timestamp {
        let mut inner = self.lock();
        match inner.next {
            Some(at) => {
                inner.next = Some(at.saturating_add(STEP).unwrap_or(at));
                at
            }
            None => {
                let now = Timestamp::now();
                now.round(jiff::Unit::Millisecond).unwrap_or(now)
            }
        }
    }

    /// Now, without advancing an injected clock: for what is shown but never ordered, such as
    /// the lease of a run's lock, refreshed by a thread at times no test controls.
    pub fn peek(&self) -> Timestamp {
        self.lock().next.unwrap_or_else(Timestamp::now)
    }

    /// How long an attempt took: `measured` by a monotonic clock, or with an injected clock the
    /// difference of its readings `started` and `ended`.
    pub fn duration_ms(&self, measured: Duration, started: Timestamp, ended: Timestamp) -> u64 {
        if self.lock().next.is_some() {
            let ms = ended.duration_since(started).as_millis();
            u64::try_from(ms).unwrap_or(0)
        } else {
            u64::try_from(measured.as_millis()).unwrap_or(u64::MAX)
        }
    }

    /// A duration measured by a monotonic clock as recorded: itself, or 0 under an injected
    /// clock, so that what tests compare does not depend on the machine's speed.
    pub fn measured_ms(&self, measured: Duration) -> u64 {
        if self.lock().next.is_some() {
            0
        } else {
            u64::try_from(measured.as_millis()).unwrap_or(u64::MAX)
        }
    }

    /// Noise for a new run id.
    pub fn noise(&self) -> u64 {
        let mut inner = self.lock();
        match inner.seed.as_mut() {
            Some(state) => splitmix64(state),
            None => random_u64(),
        }
    }
}

/// One step of SplitMix64: a small, well-mixed generator, plenty for three characters of an id.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fresh randomness without a dependency: std's randomly keyed hasher over the time and pid.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn an_injected_clock_advances_one_second_per_reading_and_peeking_does_not() {
        let clock = Clock::fixed(at("2026-01-01T00:00:00Z"), 7);
        assert_eq!(clock.now().to_string(), "2026-01-01T00:00:00Z");
        assert_eq!(clock.peek().to_string(), "2026-01-01T00:00:01Z");
        let shared = clock.clone();
        assert_eq!(shared.now().to_string(), "2026-01-01T00:00:01Z");
        assert_eq!(clock.now().to_string(), "2026-01-01T00:00:02Z");
    }

    #[test]
    fn injected_durations_are_the_difference_of_the_readings() {
        let clock = Clock::fixed(at("2026-01-01T00:00:00Z"), 0);
        let (a, b) = (clock.now(), clock.now());
        assert_eq!(clock.duration_ms(Duration::from_millis(3), a, b), 1000);
        let system = Clock::system();
        assert_eq!(system.duration_ms(Duration::from_millis(3), a, b), 3);
    }

    #[test]
    fn the_same_seed_gives_the_same_noise() {
        let (a, b) = (
            Clock::fixed(Timestamp::UNIX_EPOCH, 1),
            Clock::fixed(Timestamp::UNIX_EPOCH, 1),
        );
        let first: Vec<u64> = (0..3).map(|_| a.noise()).collect();
        assert_eq!(first, (0..3).map(|_| b.noise()).collect::<Vec<_>>());
        assert_ne!(first[0], first[1]);
        assert_ne!(Clock::fixed(Timestamp::UNIX_EPOCH, 2).noise(), first[0]);
    }

    #[test]
    fn the_system_clock_keeps_milliseconds() {
        let now = Clock::system().now();
        assert_eq!(now.subsec_nanosecond() % 1_000_000, 0);
    }
}
