"""Soak test of a server bot: one ``miai gtp --config server`` process plays 9x9 games in a row against GNU Go
under real clocks (byo-yomi 5 x 1 s and Fischer 10 s + 1 s, game by game), refereed by ``miai match``.

    nice -n 19 python tests/tools/soak_server.py --games 100 --out soak/ [--until 10:30] [--gnugo PATH]

The engine is started through ``sh -c 'echo $$ >> PIDFILE; exec ...'`` so that its process id is known: a second
id in the file means it was restarted (a crash). After every game (the match rewrites its JSON summary) the
engine's resident memory (``VmRSS``) is read from /proc. At the end it prints, and writes to ``OUT/soak.json``:

- losses on time by miai (the referee's, with its 1 s lag margin) and, stricter, miai's moves that overran its
  clock as the server counts it with no margin at all, or lost a byo-yomi period (each move's time, as the
  referee measured it, replayed through a fresh clock);
- crashes and restarts of the engine;
- resident memory: the mean of the last 20 games against the first 20 (flat: within 10%), and the same for the
  games after the 20th (the evaluation cache, ``net.cache_size`` entries, fills during the first games);
- for games ended by two passes: how many both engines scored the same (identical ``final_score``), and of the
  others, those whose two answers differ by exactly the eyes of groups in seki on the final board. miai plays the
  match under KataGo's ``chinese`` rules, which count such an eye for its owner (Chinese rules do); GNU Go 3.8 does
  not count it even with ``--chinese-rules`` (miai's own count with ``Tax.SEKI`` gives GNU Go's answer there).

``--until HH:MM`` (UTC) stops the match at that time: the game being played then is dropped, the finished ones
count. ``--rescore`` recomputes the report from ``OUT/match.json`` and ``OUT/soak.json`` of a finished run. Exits 1
if any check fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from miai.go.clock import Clock, TimeControl
from miai.match.summary import parse_score

CLOCKS = "0+5x1,10+1f"  # byo-yomi: five periods of 1 s; Fischer: 10 s plus 1 s a move


def rss_kib(pid: int) -> int | None:
    """Resident memory of process ``pid`` in KiB, or None if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def pids(pidfile: Path) -> list[int]:
    return [int(x) for x in pidfile.read_text().split()] if pidfile.exists() else []


def clock_overruns(game: dict[str, Any], miai_label: str, controls: list[TimeControl]) -> tuple[int, int]:
    """(moves of miai over its clock with no margin, byo-yomi periods it lost) in one game record, replaying the
    referee's move times (Black's first, colours alternating: no handicap, no opening) through a fresh clock."""
    control = controls[(game["number"] - 1) % len(controls)]
    clock = Clock(control)
    color_index = 0 if game["black"] == miai_label else 1
    overruns = periods_lost = 0
    for elapsed in game["move_times"][color_index::2]:
        periods_before = clock.periods_left
        in_overtime = clock.in_overtime
        if clock.charge(elapsed) > 0:
            overruns += 1
        if in_overtime and clock.periods_left < periods_before:
            periods_lost += periods_before - clock.periods_left
    return overruns, periods_lost


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pidfile, summary_path, log_dir = out / "engine.pids", out / "match.json", out / "logs"
    pidfile.unlink(missing_ok=True)
    miai = f"{shlex.quote(sys.executable)} -m miai.engine gtp --config server" + "".join(
        f" --set {shlex.quote(option)}" for option in args.set)
    engine = f"sh -c {shlex.quote(f'echo $$ >> {shlex.quote(str(pidfile))}; exec {miai}')}"
    gnugo = f"{args.gnugo} --mode gtp --level {args.level} --chinese-rules"
    command = [sys.executable, "-m", "miai.engine", "match", "--black", engine, "--white", gnugo,
               "--games", str(args.games), "--size", "9", "--komi", "7.5", "--rules", "chinese",
               "--time", CLOCKS, "--json", str(summary_path), "--sgf-dir", str(out / "sgf"),
               "--log-dir", str(log_dir), "--concurrency", "1"]
    print("match command:", shlex.join(command), file=sys.stderr, flush=True)
    deadline = None
    if args.until:
        hour, minute = (int(x) for x in args.until.split(":"))
        now = dt.datetime.now(dt.timezone.utc)
        deadline = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    match = subprocess.Popen(command)
    rss: dict[int, int] = {}  # games finished -> engine RSS (KiB) read right after
    stopped = False
    while match.poll() is None:
        time.sleep(2.0)
        played = _games_played(summary_path)
        ids = pids(pidfile)
        if played and played not in rss and ids:
            value = rss_kib(ids[-1])
            if value is not None:
                rss[played] = value
                print(f"soak: {played} games, engine RSS {value / 1024:.1f} MiB", file=sys.stderr, flush=True)
        if deadline is not None and dt.datetime.now(dt.timezone.utc) >= deadline and not stopped:
            print("soak: deadline reached, stopping the match", file=sys.stderr, flush=True)
            match.terminate()  # SIGTERM: a match started in the background ignores SIGINT
            stopped = True
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {"games": []}
    report = _report(summary, rss, pids(pidfile))
    report["command"] = shlex.join(command)
    (out / "soak.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "rss_mib"}, indent=2))
    return 0 if report["ok"] else 1


def _games_played(path: Path) -> int:
    try:
        return int(json.loads(path.read_text())["games_played"])
    except (OSError, ValueError, KeyError):
        return 0


def _report(summary: dict[str, Any], rss: dict[int, int], engine_pids: list[int]) -> dict[str, Any]:
    games = summary["games"]
    controls = [TimeControl.parse_spec(spec) for spec in CLOCKS.split(",")]
    time_losses = sum(1 for g in games if g["method"] == "time" and g["culprit"] == "A")
    crashes = sum(1 for g in games if g["method"] == "crash" and g["culprit"] == "A")
    strict = [clock_overruns(g, "A", controls) for g in games]
    passes = [g for g in games if g["method"] in ("final_score", "count")]
    same = sum(1 for g in passes if g["engine_scores"][0] is not None
               and g["engine_scores"][0] == g["engine_scores"][1])
    seki = [g["number"] for g in passes if g["engine_scores"][0] != g["engine_scores"][1] and _seki_eyes_explain(g)]
    values = [rss[n] for n in sorted(rss)]
    window = min(20, len(values) // 2)
    first, last = _mean(values[:window]), _mean(values[-window:])
    drift = (last - first) / first if first else 0.0
    # The same after the first 20 games (the evaluation cache fills to net.cache_size entries in the first ones).
    later = values[20:]
    later_window = min(20, len(later) // 2)
    later_first, later_last = _mean(later[:later_window]), _mean(later[-later_window:])
    report = {
        "games": len(games),
        "miai_wins": sum(1 for g in games if g["winner"] == ("B" if g["black"] == "A" else "W")),
        "methods": {m: sum(1 for g in games if g["method"] == m) for m in sorted({g["method"] for g in games})},
        "time_losses": time_losses,
        "moves_over_the_clock_without_margin": sum(o for o, _ in strict),
        "byoyomi_periods_lost": sum(p for _, p in strict),
        "crashes": crashes,
        "engine_processes": len(engine_pids),
        "ended_by_two_passes": len(passes),
        "scored_the_same_by_both": same,
        "differ_only_by_eyes_in_seki": seki,
        "rss_first_mib": round(first / 1024, 1),
        "rss_last_mib": round(last / 1024, 1),
        "rss_window_games": window,
        "rss_drift": round(drift, 4),
        "rss_drift_after_20_games": round((later_last - later_first) / later_first, 4) if later_first else None,
        "rss_max_mib": round(max(values) / 1024, 1) if values else 0.0,
        "rss_mib": [round(v / 1024, 1) for v in values],
    }
    report["ok"] = bool(games) and time_losses == 0 and crashes == 0 and len(engine_pids) == 1 \
        and abs(drift) <= 0.10 and same + len(seki) == len(passes)
    return report


def _seki_eyes_explain(game: dict[str, Any]) -> bool:
    """Whether miai's and GNU Go's answers differ by exactly the eyes of groups in seki on the game's final board
    (counted by miai's rules, ``chinese``, not by GNU Go's)."""
    from miai.go.rules import Tax
    from miai.go.scoring import area
    from miai.go.sgf import load_sgf

    miai_index = 0 if game["black"] == "A" else 1
    mine = parse_score(game["engine_scores"][miai_index])  # White's margins
    theirs = parse_score(game["engine_scores"][1 - miai_index])
    if mine is None or theirs is None or not game.get("sgf_path"):
        return False
    state = load_sgf(Path(game["sgf_path"]).read_text(encoding="utf-8"), source=game["sgf_path"]).to_state(None)
    colors = [int(c) for c in state.stones()]
    black, white = area(colors, state.size)
    black_seki, white_seki = area(colors, state.size, Tax.SEKI)
    eyes = (black - white) - (black_seki - white_seki)  # Black's margin the seki eyes make
    return eyes != 0 and theirs - mine == eyes


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--out", default="soak")
    parser.add_argument("--until", default=None, help="HH:MM UTC: stop the match then (the game being played is "
                        "dropped)")
    parser.add_argument("--gnugo", default="/usr/games/gnugo")
    parser.add_argument("--level", type=int, default=10, help="GNU Go's level")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an option for the engine (miai gtp --set), e.g. net.cache_size=0")
    parser.add_argument("--rescore", action="store_true", help="recompute the report of a finished run in --out")
    args = parser.parse_args()
    return rescore(Path(args.out)) if args.rescore else run(args)


def rescore(out: Path) -> int:
    """The report of a finished run, from its match summary and the memory readings its report kept."""
    summary = json.loads((out / "match.json").read_text())
    old = json.loads((out / "soak.json").read_text())
    rss = {n + 1: round(mib * 1024) for n, mib in enumerate(old["rss_mib"])}
    report = _report(summary, rss, pids(out / "engine.pids"))
    report["command"] = old.get("command", "")
    (out / "soak.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "rss_mib"}, indent=2))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
