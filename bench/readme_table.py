#!/usr/bin/env python3
"""bench/readme_table.py - the README's benchmark table, from the CSV of one bench/run.

    python3 bench/readme_table.py [FILE.csv]   (default: build-bench/bench/results/latest.csv)

Prints the markdown table that README.md shows under its chart: for each row below, every
peer's value at the largest N that run measured (scenarios 1-3; scenarios 4 and 8 run at
10^6 timers, 7 has no N). A peer that the run left out (timeout.c without --timeout-src)
loses its column; a value the run did not measure is an empty cell. The chart beside it is
the same run's SVG (FILE.svg), copied to bench/chart.svg, so that the two agree.
"""
import csv
import os
import sys

COLUMNS = [("hwtimer", "hwtimer"), ("hwtimer_lock", "hwtimer + locks"),
           ("hwtimer_worker", "hwtimer worker"), ("heap", "binary heap"), ("libuv", "libuv"),
           ("libevent", "libevent"), ("timeout_c", "timeout.c")]
ROWS = [(1, "schedule", "1. schedule, from the loop's time (hwtimer_schedule_ticks)"),
        (1, "schedule, reading the clock", "1. schedule, reading the clock (hwtimer_schedule)"),
        (1, "cancel", "1. cancel, in schedule order"),
        (1, "cancel in random order", "1. cancel, in random order"),
        (2, "schedule+expire", "2. schedule + expire, per timer"),
        (3, "reschedule", "3. reschedule (push an idle timeout later)"),
        (4, "advance through the span, CPU",
         "4. 1 h of 1 ms ticks, 10^6 timers of 1 s to 1 h: CPU s"),
        (7, "one timeout due in 1 h", "7. idle worker: wake-ups per second"),
        (8, "per pending timeout", "8. bytes per pending timeout")]


def number(value):
    """Three significant digits (5.30, 41.8), whole numbers from 100 on and for counts that
    are whole (as the bench prints them)."""
    if value >= 100 or value == int(value):
        return f"{value:.0f}"
    return f"{value:#.3g}"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build-bench", "bench", "results",
        "latest.csv")
    best = {}  # (scenario, metric, peer) -> (n, value) at the largest n
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (int(r["scenario"]), r["metric"], r["peer"])
            n = int(r["n"])
            if key not in best or n > best[key][0]:
                best[key] = (n, float(r["value"]))
    ns = {n for (s, _, _), (n, _) in best.items() if s in (1, 2, 3)}
    if not ns:
        sys.exit(f"{path}: no results of scenarios 1-3")
    peers = [(key, title) for key, title in COLUMNS if any(k[2] == key for k in best)]
    big_n = max(ns)
    exponent = len(str(big_n)) - 1
    head = f"N = 10^{exponent}" if big_n == 10 ** exponent else f"N = {big_n}"
    print(f"| {head}, ns per operation | " + " | ".join(t for _, t in peers) + " |")
    print("|---|" + "---:|" * len(peers))
    for scenario, metric, label in ROWS:
        cells = [best.get((scenario, metric, key)) for key, _ in peers]
        print(f"| {label} | " +
              " | ".join(number(c[1]) if c else "" for c in cells) + " |")


if __name__ == "__main__":
    main()
