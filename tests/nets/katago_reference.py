"""Test helpers: KataGo reference positions and a minimal, self-contained input encoder.

The encoder covers only *quiet* positions, so that the converter can be checked against
KataGo's own outputs without depending on miai's full feature code: no captures, no ko, and
every chain (now and one and two moves ago) with at least 3 liberties, so the ladder planes are
empty. For those positions the input-version-7 planes (KATAGO.md section 3) reduce to stones,
liberty counts, recent moves and the simple area map, which this module computes directly.
`encode_quiet` returns None for anything else.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from tests.outside import reference_file, shared

NETS_DIR = shared("nets")

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"

# KATAGO.md section 6: (ko rule, area scoring, tax none, multi-stone suicide legal, handicap bonus).
RULES = {
    "tromp-taylor": ("positional", True, True, True, "0"),
    "chinese": ("simple", True, True, False, "N"),
    "chinese-ogs": ("positional", True, True, False, "N"),
    "chinese-kgs": ("positional", True, True, False, "N"),
    "japanese": ("simple", False, False, False, "0"),
    "korean": ("simple", False, False, False, "0"),
    "aga": ("situational", True, True, False, "N-1"),
    "new-zealand": ("situational", True, True, True, "0"),
    "stone-scoring": ("simple", True, False, False, "0"),
}

# Reference files and the net each was produced with (net file names as in the rows).
REFERENCE_FILES = {
    "pub_b6.jsonl": "g170-b6c96-s175395328-d26788732.bin.gz",
    "pub_t7a.jsonl": "b7c96h3tfrs-test5-cnorm.bin.gz",
    "pub_t7b.jsonl": "b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz",
    "pub_b15.jsonl": "g170e-b15c192-s1672170752-d466197061.bin.gz",
    "pub_nbt.jsonl": "kata1-b18c384nbt-s6582191360-d3422816034.bin.gz",
    "pub_tf.jsonl": "b10c384h6nbttflrs.bin.gz",
}


def load_rows(file_name: str) -> list[dict]:
    """All reference rows of one jsonl file."""
    with open(reference_file(file_name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def parse_vertex(text: str, size: int) -> int:
    """GTP vertex -> flat index y*size+x with y=0 the top row; -1 for pass."""
    if text.lower() == "pass":
        return -1
    x = COLUMNS.index(text[0].upper())
    y = size - int(text[1:])
    return y * size + x


def _neighbours(p: int, size: int) -> list[int]:
    y, x = divmod(p, size)
    out = []
    if y > 0:
        out.append(p - size)
    if y < size - 1:
        out.append(p + size)
    if x > 0:
        out.append(p - 1)
    if x < size - 1:
        out.append(p + 1)
    return out


def _chains(board: np.ndarray, size: int) -> list[tuple[set[int], set[int]]]:
    """(stones, liberties) of every chain."""
    seen: set[int] = set()
    out = []
    for p in range(size * size):
        if board[p] == 0 or p in seen:
            continue
        stones, libs, stack = {p}, set(), [p]
        while stack:
            q = stack.pop()
            for r in _neighbours(q, size):
                if board[r] == 0:
                    libs.add(r)
                elif board[r] == board[p] and r not in stones:
                    stones.add(r)
                    stack.append(r)
        seen |= stones
        out.append((stones, libs))
    return out


def _area(board: np.ndarray, size: int) -> np.ndarray:
    """Stones as their own colour; empty regions bordered by one colour only go to that colour."""
    area = board.copy()
    seen: set[int] = set()
    for p in range(size * size):
        if board[p] != 0 or p in seen:
            continue
        region, borders, stack = {p}, set(), [p]
        while stack:
            q = stack.pop()
            for r in _neighbours(q, size):
                if board[r] == 0 and r not in region:
                    region.add(r)
                    stack.append(r)
                elif board[r] != 0:
                    borders.add(int(board[r]))
        seen |= region
        if len(borders) == 1:
            area[list(region)] = borders.pop()
    return area


def _komi_wave(komi: float, size: int) -> float:
    parity = (size * size) % 2
    floor = math.floor(komi)
    if floor % 2 != parity:
        floor -= 1
    d = min(max(komi - floor, 0.0), 2.0)
    return d if d < 0.5 else (1.0 - d if d < 1.5 else d - 2.0)


@dataclass(frozen=True)
class Quiet:
    """Encoded inputs of a quiet reference position plus what decoding needs."""

    spatial: np.ndarray  # [22, size, size]
    global_: np.ndarray  # [19]
    white_to_play: bool
    drop_no_result: bool


def encode_quiet(row: dict) -> Quiet | None:
    """Input-version-7 planes for a quiet position, or None if the position is not quiet."""
    size = row["size"]
    ko, area_scoring, tax_none, suicide, bonus_rule = RULES[row["rules"]]
    board = np.zeros(size * size, np.int8)
    for v in row["handicap_stones"]:
        board[parse_vertex(v, size)] = 1
    history = [board.copy()]
    moves = []
    for colour, v in row["moves"]:
        c = 1 if colour == "b" else 2
        p = parse_vertex(v, size)
        moves.append((c, p))
        if p >= 0:
            if board[p] != 0:
                return None
            board[p] = c
        history.append(board.copy())
    for b in history[-3:]:
        if any(len(libs) < 3 for _, libs in _chains(b, size)):
            return None  # ladders or captures possible: not quiet
    pla = 2 if row["to_play"] == "w" else 1
    opp = 3 - pla
    spatial = np.zeros((22, size, size), np.float32)
    flat = spatial.reshape(22, -1)
    flat[0] = 1
    flat[1] = board == pla
    flat[2] = board == opp
    for stones, libs in _chains(board, size):
        if len(libs) <= 3:
            flat[2 + len(libs), list(stones)] = 1
    glob = np.zeros(19, np.float32)
    expected = opp
    for i, (c, p) in enumerate(reversed(moves[-5:])):
        if c != expected:
            break
        if p < 0:
            glob[i] = 1
        else:
            flat[9 + i, p] = 1
        expected = 3 - expected
    if area_scoring and tax_none:
        area = _area(board, size)
        flat[18] = area == pla
        flat[19] = area == opp
    n = len(row["handicap_stones"])
    bonus = {"0": 0, "N": n, "N-1": max(n - 1, 0)}[bonus_rule] if area_scoring and n > 0 else 0
    white_komi = row["komi"] + bonus
    if not area_scoring and pla == 2:
        # Observed in KataGo 1.17.2's outputs (every territory-scoring reference row with White to
        # move matches only this way): the net sees White's komi one point higher, as if counting
        # the extra stone Black has played.
        white_komi += 1.0
    komi = white_komi if pla == 2 else -white_komi
    glob[5] = komi / 20.0
    glob[6], glob[7] = {"simple": (0, 0), "positional": (1, 0.5), "situational": (1, -0.5)}[ko]
    glob[8] = float(suicide)
    glob[9] = float(not area_scoring)
    glob[10] = float(not tax_none)
    if area_scoring:
        glob[18] = _komi_wave(komi, size)
    drop_no_result = ko != "simple" and area_scoring
    return Quiet(spatial, glob, pla == 2, drop_no_result)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x))
    return e / e.sum()


def decode(outputs: dict[str, np.ndarray], quiet: Quiet, post_lead: float = 20.0) -> dict:
    """KataGo's white-view numbers (KATAGO.md section 5) from one position's raw outputs."""
    policy_logits = outputs["policy"][0].astype(np.float64)
    value = outputs["value"].astype(np.float64)
    if quiet.drop_no_result:
        win, loss = softmax(value[:2])
        no_result = 0.0
    else:
        win, loss, no_result = softmax(value)
    lead = post_lead * float(outputs["miscvalue"][2]) * (1.0 - no_result)
    own = np.tanh(outputs["ownership"].reshape(-1).astype(np.float64))
    sign = 1.0 if quiet.white_to_play else -1.0
    if not quiet.white_to_play:
        win, loss = loss, win
    return {
        "policy_logits": policy_logits,
        "white_win": float(win),
        "white_loss": float(loss),
        "no_result": float(no_result),
        "white_lead": sign * lead,
        "white_ownership": sign * own,
    }


def policy_probs(logits: np.ndarray, reference_policy: list[float]) -> np.ndarray:
    """Softmax of logits over the points KataGo reports as legal (-1 = illegal) plus pass."""
    legal = np.array([p >= 0 for p in reference_policy] + [True])
    masked = np.where(legal, logits, -np.inf)
    return softmax(masked)
