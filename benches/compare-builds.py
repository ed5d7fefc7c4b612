#!/usr/bin/env python3
"""Before/after comparison of two git-baton builds against git, on the benchmark's repository.

usage (in the reference repository, e.g. the one `cargo bench --bench diff -- --keep DIR` left):
    python3 PATH/TO/benches/compare-builds.py OLD_BINARY NEW_BINARY [ROUNDS]

Each round runs every command once, in the same order (interleaved, so drift of a shared machine
hits all alike); 2 warm-up rounds are dropped. Prints the median and min wall time and the median
CPU time (user + system of the children, from getrusage) per command, and ratios against git. The
CPU ratio is the figure a loaded machine disturbs least: it does not depend on getting both cores.
The commands are the gates `cargo bench --bench diff` times through the CLI (plans and evidence
under target/, written by that benchmark). Unlike the benchmark it runs in the caller's
environment, git configuration included: the same for both builds and for git.
"""
import resource, statistics, subprocess, sys, time
base, new = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 15
cmds = {
    "git pair": [["git", "diff", "--no-renames", "--name-only", "base"], ["git", "ls-files", "--others", "--exclude-standard"]],
    "full gate, before": [[base, "verify", "target/plans/all.md", "--base", "base"]],
    "full gate, after": [[new, "verify", "target/plans/all.md", "--base", "base"]],
    "10 targets, before": [[base, "verify", "target/plans/p.md", "--base", "base", "--evidence", "target/evidence.json"]],
    "10 targets, after": [[new, "verify", "target/plans/p.md", "--base", "base", "--evidence", "target/evidence.json"]],
    "git diff base feature": [["git", "diff", "--name-only", "base", "feature"]],
    "range full, before": [[base, "verify", "target/plans/all.md", "--base", "base", "--head", "feature"]],
    "range full, after": [[new, "verify", "target/plans/all.md", "--base", "base", "--head", "feature"]],
    "range 10, before": [[base, "verify", "target/plans/p.md", "--base", "base", "--head", "feature", "--evidence", "target/evidence.json"]],
    "range 10, after": [[new, "verify", "target/plans/p.md", "--base", "base", "--head", "feature", "--evidence", "target/evidence.json"]],
}
wall = {k: [] for k in cmds}; cpu = {k: [] for k in cmds}
for r in range(rounds + 2):
    for k, argvs in cmds.items():
        before = resource.getrusage(resource.RUSAGE_CHILDREN); t = time.perf_counter()
        for argv in argvs:
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t = time.perf_counter() - t; after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r >= 2:
            wall[k].append(t * 1000)
            cpu[k].append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
med = lambda v: statistics.median(v)
for k in cmds:
    print(f"{k:24} wall median {med(wall[k]):7.1f} min {min(wall[k]):7.1f}  cpu median {med(cpu[k]):7.1f} ms")
def ratio(n, d):
    return f"wall {med(wall[n])/med(wall[d]):.3f} (mins {min(wall[n])/min(wall[d]):.3f}), cpu {med(cpu[n])/med(cpu[d]):.3f}"
for n, d in [("full gate, before", "git pair"), ("full gate, after", "git pair"), ("10 targets, before", "git pair"), ("10 targets, after", "git pair"),
             ("range full, before", "git diff base feature"), ("range full, after", "git diff base feature"), ("range 10, before", "git diff base feature"), ("range 10, after", "git diff base feature")]:
    print(f"{n:24} / {d:22} {ratio(n, d)}")
