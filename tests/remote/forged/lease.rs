//! Leases forged on the remote to end further out than any lease of this clone could: they are
//! taken over, `clean --remote` takes them for none, and `status` shows them as not in force.

use super::*;

#[test]
fn a_lease_longer_than_the_longest_is_taken_over() {
    let world = World::new(Transport::File, "lease: 30s\n").unwrap();
    let far = "9000-01-01T00:00:00Z".to_string();
    // Skewed rather than forged: a day ahead, where the longest lease is 30 s.
    let tomorrow = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24)).to_string();
    for until in [far, tomorrow] {
        let (_a, id) = world.rate_limited_and_pushed();
        forge_record(
            &world.origin.bare,
            &id,
            |s| {
                s["lease"] = serde_json::json!({
                    "holder": "forger:1", "host": "nowhere",
                    "taken_at": jiff::Timestamp::now().to_string(), "until": until,
                });
            },
            &[],
        );
        let b = world.origin.machine();
        assert_eq!(b.live(["fetch"]).code, 0);
        let resumed = b.live(["resume", &id, "--actor", "executor=finisher"]);
        assert_eq!(
            resumed.code, 0,
            "a lease until {until} kept B out: {resumed}"
        );
        let state = status(&b, &id);
        assert_eq!(state["status"], "review");
        let takeovers = world.state_on_origin(&id)["takeovers"].clone();
        assert_eq!(takeovers[0]["from_holder"], "forger:1", "{takeovers:#}");
    }
}

/// The lease of another holder, forged on the remote's record of run `id`, until `until`.
fn forge_lease(world: &World, id: &str, until: &str) {
    forge_record(
        &world.origin.bare,
        id,
        |s| {
            s["lease"] = serde_json::json!({
                "holder": "forger:1", "host": "nowhere",
                "taken_at": jiff::Timestamp::now().to_string(), "until": until,
            });
        },
        &[],
    );
}

#[test]
fn clean_remote_takes_a_lease_longer_than_the_longest_for_none() {
    let world = World::new(Transport::File, "lease: 30s\n").unwrap();
    let far = "9000-01-01T00:00:00Z".to_string();
    let tomorrow = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24)).to_string();
    for until in [far, tomorrow] {
        let (_a, id) = world.rate_limited_and_pushed();
        let prefix = format!("refs/baton/runs/{id}/");
        // A lease as long as a fresh one would be keeps `clean --remote` out without --force…
        let soon = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(25)).to_string();
        forge_lease(&world, &id, &soon);
        let b = world.origin.machine();
        assert_eq!(b.live(["fetch"]).code, 0);
        assert_leased(&b.live(["clean", &id, "--remote"]), &id);
        assert!(!world.origin.refs(&prefix).is_empty());

        // …one that ends further out than that is no lease.
        forge_lease(&world, &id, &until);
        assert_eq!(b.live(["fetch"]).code, 0);
        let cleaned = b.live(["clean", &id, "--remote"]);
        assert_eq!(
            cleaned.code, 0,
            "a lease until {until} kept clean out: {cleaned}"
        );
        assert!(
            cleaned.stderr.contains(&format!(
                "removed run {id}'s record and snapshots from origin"
            )),
            "{cleaned}"
        );
        assert!(world.origin.refs(&prefix).is_empty());
    }
}

/// `status` applies the takeover rule to the lease it shows: a lease that ends further out than
/// any lease of this clone could (forged, or from a clock far ahead) is shown as not in force,
/// never as someone driving the run; one within the configured length is shown as leased.
#[test]
fn status_shows_a_lease_longer_than_the_longest_as_not_in_force() {
    let world = World::new(Transport::File, "lease: 30s\n").unwrap();
    let soon = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(20)).to_string();
    for (until, shown) in [
        ("9000-01-01T00:00:00Z".to_string(), "lease not in force"),
        (soon, "leased by forger:1"),
    ] {
        let (_a, id) = world.rate_limited_and_pushed();
        forge_lease(&world, &id, &until);
        let b = world.origin.machine();
        assert_eq!(b.live(["fetch"]).code, 0);
        let status = b.live(["status", &id]);
        assert_eq!(status.code, 0, "{status}");
        assert!(status.stdout.contains(shown), "{until}: {status}");
    }
}
