"""Selection formulas and playouts working together: a minimal textbook UCT finds an obvious capture.

The real search lives in miai.engine.core.search; this loop is the four classic phases (selection by UCB with untried
moves first in random order, expansion of one node, a random playout, backup of the result) written out in a few
lines, so that the selection functions and the playout board are checked as a classic MCTS would use them.
"""

from __future__ import annotations

import math
import random

import pytest

from miai.engine.core.selection import SelectionRule, pick_untried, ucb_scores
from miai.go.coords import PASS
from miai.nets.playouts import PlayoutBoard, PlayoutPosition, final_score, play_out


class _Node:
    def __init__(self, board: PlayoutBoard, to_play: int) -> None:
        self.untried = [p for p in board.empties if board.is_legal(p, to_play)] or [PASS]
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.wins = 0.0  # wins of the player who moved into this node


def _uct(position: PlayoutPosition, rule: SelectionRule, iterations: int, seed: int) -> dict[int, int]:
    rng = random.Random(seed)
    c = math.sqrt(2.0) if rule is SelectionRule.UCB1 else 1.0
    root_board = PlayoutBoard.from_stones(position.stones, position.size)
    root = _Node(root_board, position.to_play)
    for _ in range(iterations):
        board, color, node, path = root_board.copy(), position.to_play, root, [root]
        while not node.untried and node.children:  # selection
            moves = list(node.children)
            children = [node.children[m] for m in moves]
            scores = ucb_scores(rule, node.visits, [c.visits for c in children], [c.wins / c.visits for c in children], c)
            i = int(scores.argmax())
            board.play(moves[i], color)
            node, color = children[i], 3 - color
            path.append(node)
        if node.untried:  # expansion
            move = node.untried.pop(pick_untried(len(node.untried), rng))
            board.play(move, color)
            child = node.children[move] = _Node(board, 3 - color)
            node, color = child, 3 - color
            path.append(node)
        play_out(board, color, rng.random)  # simulation
        white_wins = final_score(board, board.owners(), position) > 0
        for k, visited in enumerate(path):  # backup: path[k] was entered by the player to move at path[k-1]
            mover = position.to_play if k % 2 == 1 else 3 - position.to_play
            visited.visits += 1
            visited.wins += 1.0 if white_wins == (mover == 2) else 0.0
    return {move: child.visits for move, child in root.children.items()}


# Both sides are alive; the only open point is E5 (x=4, y=2). Black there captures four white stones and wins
# by 4.5 whatever happens next; anything else (Black can only fill an own eye) lets White connect and win by 5.5.
CAPTURE_WINS = """
    . X . X O . O
    X X X X O O O
    X X O O . O .
    X X O O X O O
    X . X X X O .
    X X X . X O O
    . X . X X O .
"""


@pytest.mark.parametrize("rule", [SelectionRule.UCB1, SelectionRule.UCB1_TUNED])
def test_uct_with_random_playouts_finds_the_capture(rule: SelectionRule) -> None:
    rows = [line.split() for line in CAPTURE_WINS.strip().splitlines()]
    stones = tuple({".": 0, "X": 1, "O": 2}[c] for row in rows for c in row)
    position = PlayoutPosition(size=7, stones=stones, to_play=1, komi=12.5)
    iterations = 300
    visits = _uct(position, rule, iterations=iterations, seed=5)
    capture = PlayoutBoard(7).geometry.points[2 * 7 + 4]
    # The capture and Black's six eye-filling moves: all tried (untried first), the capture chosen most by far.
    assert len(visits) == 7 and all(v >= 1 for v in visits.values())
    assert max(visits, key=lambda m: visits[m]) == capture
    assert visits[capture] > iterations // 2
