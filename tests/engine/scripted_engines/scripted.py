#!/usr/bin/env python3
"""A tiny scripted GTP engine for testing the match runner; standalone on purpose (imports nothing of miai).

It keeps its own flood-fill board, so a referee bug in miai cannot hide behind shared code. Behaviours:

    --moves "C3 D4 pass"   answer genmove with these words in order (anything, e.g. resign or Z99), then go on
                           with the random mover or pass
    --random SEED          a legal random mover: no suicide, never repeats an earlier position (positional
                           superko, so its moves are legal under every ko rule), never fills its own one-point eye
    --pass-after N         pass from its N-th genmove on (default: never force)
    --final-score TEXT     answer final_score with TEXT (default: `? cannot score`)
    --crash-at N           exit with code 3 on the N-th genmove, writing a last word to stderr
    --hang-at N            never answer the N-th genmove
    --illegal-at N         answer the N-th genmove with an occupied point
    --reject-play          answer every `play` of a stone with `? illegal move`
    --die-on COMMAND       exit with code 4, without answering, the first time it receives COMMAND (e.g. play)
    --slow SECONDS         sleep this long before every genmove answer
    --name NAME            the name it reports
    --log FILE             append every command line it receives to FILE
    --kata KEY             also list kata-set-rules and kata-set-param; the latter accepts only the name KEY
    --free-handicap        also list set_free_handicap (placing the given Black stones)
    --fixed-handicap VS    also list fixed_handicap, answering it with the vertices VS ("C3 E5") and placing them
    --fresh-games          start every game afresh on clear_board (genmove count, --moves script, --random seed),
                           so a game's moves do not depend on the games the process played before

Genmove counts start at 1 and run across games (they are not reset by clear_board), so `--crash-at 3` crashes in
the first game and the restarted engine plays normally until its own third genmove.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


class Board:
    """A plain board: a dict-free list of 0 (empty), 1 (black), 2 (white), flat index y * size + x, y=0 top."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.points = [0] * (size * size)
        self.history = {tuple(self.points)}

    def neighbours(self, p: int) -> list[int]:
        x, y = p % self.size, p // self.size
        out = []
        if x > 0:
            out.append(p - 1)
        if x < self.size - 1:
            out.append(p + 1)
        if y > 0:
            out.append(p - self.size)
        if y < self.size - 1:
            out.append(p + self.size)
        return out

    def group(self, points: list[int], p: int) -> tuple[set[int], bool]:
        """The chain at p and whether it has a liberty."""
        color = points[p]
        chain, todo, has_liberty = {p}, [p], False
        while todo:
            q = todo.pop()
            for n in self.neighbours(q):
                if points[n] == 0:
                    has_liberty = True
                elif points[n] == color and n not in chain:
                    chain.add(n)
                    todo.append(n)
        return chain, has_liberty

    def after(self, p: int, color: int) -> list[int] | None:
        """The position after color plays p, or None if p is occupied or suicide."""
        if self.points[p] != 0:
            return None
        points = list(self.points)
        points[p] = color
        for n in self.neighbours(p):
            if points[n] == 3 - color:
                chain, alive = self.group(points, n)
                if not alive:
                    for q in chain:
                        points[q] = 0
        if not self.group(points, p)[1]:
            return None
        return points

    def play(self, p: int, color: int) -> None:
        points = self.after(p, color)
        if points is None:  # the referee's business, not ours: just place it
            points = list(self.points)
            points[p] = color
        self.points = points
        self.history.add(tuple(points))

    def is_own_eye(self, p: int, color: int) -> bool:
        return self.points[p] == 0 and all(self.points[n] == color for n in self.neighbours(p))

    def random_move(self, color: int, rng: random.Random) -> int | None:
        candidates = list(range(self.size * self.size))
        rng.shuffle(candidates)
        for p in candidates:
            if self.is_own_eye(p, color):
                continue
            points = self.after(p, color)
            if points is not None and tuple(points) not in self.history:
                return p
        return None


def vertex(p: int | None, size: int) -> str:
    if p is None:
        return "pass"
    return f"{COLUMNS[p % size]}{size - p // size}"


def parse_vertex(text: str, size: int) -> int | None:
    text = text.upper()
    if text == "PASS":
        return None
    return (size - int(text[1:])) * size + COLUMNS.index(text[0])


class Engine:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.size = 19
        self.board = Board(self.size)
        self.script = args.moves.split() if args.moves else []
        self.rng = random.Random(args.random)
        self.genmoves = 0

    def genmove(self, color: int) -> str:
        self.genmoves += 1
        n = self.genmoves
        if self.args.slow:
            time.sleep(self.args.slow)
        if n == self.args.crash_at:
            sys.stderr.write("scripted engine: crashing on purpose\n")
            sys.stderr.flush()
            sys.exit(3)
        if n == self.args.hang_at:
            while True:
                time.sleep(60)
        if n == self.args.illegal_at:
            occupied = [p for p in range(self.size * self.size) if self.board.points[p] != 0]
            if occupied:
                return vertex(occupied[0], self.size)
        if self.script:
            text = self.script.pop(0)
            try:
                p = parse_vertex(text, self.size)
            except (ValueError, IndexError):  # "resign" or deliberate garbage: answer it as written
                return text
            if p is not None and not 0 <= p < self.size * self.size:
                return text
        elif self.args.pass_after and n >= self.args.pass_after:
            p = None
        elif self.args.random is not None:
            p = self.board.random_move(color, self.rng)
        else:
            p = None
        if p is not None:
            self.board.play(p, color)
        return vertex(p, self.size)

    def handle(self, words: list[str]) -> str:
        """Answer one command; raise ValueError(message) for a failure."""
        name, args = words[0], words[1:]
        if name == "protocol_version":
            return "2"
        if name == "name":
            return self.args.name
        if name == "version":
            return "1.0"
        commands = COMMANDS + (["kata-set-rules", "kata-set-param"] if self.args.kata else [])
        commands += ["set_free_handicap"] if self.args.free_handicap else []
        commands += ["fixed_handicap"] if self.args.fixed_handicap else []
        commands += ["kgs-time_settings", "kata-time_settings"] if self.args.kgs_time else []
        if name == "list_commands":
            return "\n".join(commands)
        if name == "known_command":
            return "true" if args and args[0] in commands else "false"
        if name == "boardsize":
            self.size = int(args[0])
            self.board = Board(self.size)
            return ""
        if name == "clear_board":
            self.board = Board(self.size)
            if self.args.fresh_games:
                self.script = self.args.moves.split() if self.args.moves else []
                self.rng = random.Random(self.args.random)
                self.genmoves = 0
            return ""
        if name in ("komi", "time_settings", "time_left", "quit"):
            return ""
        if name in ("kgs-time_settings", "kata-time_settings") and name in commands:
            return ""
        if name == "play":
            color = 1 if args[0].lower().startswith("b") else 2
            p = parse_vertex(args[1], self.size)
            if p is not None:
                if self.args.reject_play:
                    raise ValueError("illegal move")
                self.board.play(p, color)
            return ""
        if name == "genmove":
            return self.genmove(1 if args[0].lower().startswith("b") else 2)
        if name in ("set_free_handicap", "fixed_handicap") and name in commands:
            vertices = args if name == "set_free_handicap" else self.args.fixed_handicap.split()
            for v in vertices:
                self.board.play(parse_vertex(v, self.size), 1)
            return "" if name == "set_free_handicap" else " ".join(vertices)
        if name == "kata-set-rules" and self.args.kata:
            return ""
        if name == "kata-set-param" and self.args.kata:
            if len(args) != 2 or args[0] != self.args.kata:
                raise ValueError("unknown parameter")
            return ""
        if name == "final_score":
            if self.args.final_score is None:
                raise ValueError("cannot score")
            return self.args.final_score
        raise ValueError("unknown command")


COMMANDS = [
    "protocol_version", "name", "version", "list_commands", "known_command", "boardsize", "clear_board", "komi",
    "play", "genmove", "final_score", "time_settings", "time_left", "quit",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--moves", default="")
    parser.add_argument("--random", type=int, default=None)
    parser.add_argument("--pass-after", type=int, default=0)
    parser.add_argument("--final-score", default=None)
    parser.add_argument("--crash-at", type=int, default=0)
    parser.add_argument("--hang-at", type=int, default=0)
    parser.add_argument("--illegal-at", type=int, default=0)
    parser.add_argument("--reject-play", action="store_true")
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--name", default="scripted")
    parser.add_argument("--log", default=None)
    parser.add_argument("--die-on", default=None)
    parser.add_argument("--free-handicap", action="store_true")
    parser.add_argument("--fixed-handicap", default=None)
    parser.add_argument("--kata", default=None)
    parser.add_argument("--fresh-games", action="store_true")
    parser.add_argument("--kgs-time", action="store_true")  # list kgs-time_settings and kata-time_settings
    args = parser.parse_args()
    engine = Engine(args)
    for line in sys.stdin:
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(line)
        words = line.split("#")[0].split()
        if not words:
            continue
        command_id = ""
        if words[0].isdigit():
            command_id, words = words[0], words[1:]
        if words and words[0] == args.die_on:
            sys.exit(4)
        try:
            text = engine.handle(words)
            reply = f"={command_id} {text}"
        except ValueError as exc:
            reply = f"?{command_id} {exc}"
        sys.stdout.write(reply.rstrip(" ") + "\n\n")
        sys.stdout.flush()
        if words[0] == "quit":
            break


if __name__ == "__main__":
    main()
