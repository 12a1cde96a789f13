"""`miai train played`: a net's winrate against the teacher's on the positions of played games (no torch)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from miai.engine.cli.main import main
from miai.go.coords import Color, parse_gtp
from miai.go.sgf import SgfGame, format_sgf
from miai.go.state import GameState
from miai.nets.evaluator import Evaluation, UniformEvaluator
from miai.nets.train.metrics import played_value_gaps

MOVES = "E5 C5 E3 G5 D7 F7 C3 G3 E7 F6 B5 C6 H4 G4 D4 F2 G8 F8 B7 H6 C8 E6".split()  # 22 moves on 9x9
DEFAULT_NET = Path(__file__).resolve().parents[2] / "nets" / "default" / "miai-b6c64-9.onnx"


@dataclass
class Fixed(UniformEvaluator):
    """The uniform evaluator with a winrate for Black of ``black``, or for the side to move of ``to_move``."""

    black: float | None = None
    to_move: float | None = None

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:
        return [replace(e, win=self._win(s), loss=1.0 - self._win(s)) for s, e in zip(states, super().evaluate(states))]

    def _win(self, state: GameState) -> float:
        if self.to_move is not None:
            return self.to_move
        assert self.black is not None
        return self.black if state.to_play == Color.BLACK else 1.0 - self.black


def game(black: str = "miai 0.1.0 (A)", white: str = "miai 0.1.0 (B)") -> SgfGame:
    colors = [Color.BLACK, Color.WHITE] * len(MOVES)
    return SgfGame(size=9, komi=7.0, rules="chinese", black_player=black, white_player=white,
                   moves=[(c, parse_gtp(m, 9)) for c, m in zip(colors, MOVES)], comments=[None] * len(MOVES))


def test_a_net_that_favours_its_own_side_leans_its_way_everywhere() -> None:
    gaps = played_value_gaps(Fixed(max_batch=8, black=0.8), Fixed(max_batch=8, to_move=0.5), [(game(), Color.BLACK)])
    for who in ("after its own move", "after the opponent's move"):
        assert gaps[who]["moves 4-19"]["signed_gap"] == pytest.approx(0.3)
        assert gaps[who]["moves 20-39"]["abs_gap"] == pytest.approx(0.3)
    positions = [phase["positions"] for side in gaps.values() for phase in side.values()]
    assert sum(positions) == len(MOVES) - 4 + 1  # every position from 4 moves played to the last
    assert gaps["after its own move"]["moves 4-19"]["positions"] == 8  # Black moved last after 5, 7, .. 19 moves


def test_other_winner_counts_positions_where_the_two_nets_disagree_on_who_wins() -> None:
    record = [(game(), Color.BLACK)]
    opposed = played_value_gaps(Fixed(max_batch=8, black=0.8), Fixed(max_batch=8, black=0.3), record)
    agreed = played_value_gaps(Fixed(max_batch=8, black=0.8), Fixed(max_batch=8, black=0.6), record)
    for who in ("after its own move", "after the opponent's move"):
        assert opposed[who]["moves 20-39"]["other_winner"] == 1.0
        assert agreed[who]["moves 20-39"]["other_winner"] == 0.0


def test_phases_scale_with_the_board() -> None:
    moves = [(Color.BLACK if i % 2 == 0 else Color.WHITE, 19 * (i // 19) + i % 19) for i in range(100)]
    record = SgfGame(size=19, komi=7.5, rules="chinese", black_player="a (A)", white_player="b (B)", moves=moves,
                     comments=[None] * len(moves))
    gaps = played_value_gaps(Fixed(max_batch=8, black=0.8), Fixed(max_batch=8, black=0.3), [(record, Color.BLACK)])
    assert set(gaps["after its own move"]) == {"moves 4-88", "moves 89-177"}  # 9x9's 20 and 40 moves, 19x19's area


def test_a_net_that_favours_the_side_to_move_leans_against_whoever_just_moved() -> None:
    """After its own move the opponent is to move, so such a net sees its own side worse off than the teacher."""
    gaps = played_value_gaps(Fixed(max_batch=8, to_move=0.7), Fixed(max_batch=8, to_move=0.5), [(game(), Color.WHITE)])
    assert gaps["after its own move"]["moves 4-19"]["signed_gap"] == pytest.approx(-0.2)
    assert gaps["after the opponent's move"]["moves 20-39"]["signed_gap"] == pytest.approx(0.2)


@pytest.mark.slow
def test_played_reads_match_records_and_finds_no_gap_between_a_net_and_itself(tmp_path: Path) -> None:
    (tmp_path / "game-0001.sgf").write_text(format_sgf(game()), encoding="utf-8")
    (tmp_path / "game-0002.sgf").write_text(format_sgf(game("x (B)", "y (A)")), encoding="utf-8")
    runner = CliRunner()
    args = ["train", "played", "--sgf", str(tmp_path), "--net", str(DEFAULT_NET), "--teacher", str(DEFAULT_NET)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["games"] == 2
    assert all(abs(phase["abs_gap"]) < 1e-6 for side in ("after its own move", "after the opponent's move")
               for phase in report[side].values())
    assert json.loads(runner.invoke(main, args + ["--engine", "B"]).stdout)["games"] == 2
    (tmp_path / "game-0003.sgf").write_text("(;FF[4]SZ[9];B[ee];W[zz", encoding="utf-8")
    broken = runner.invoke(main, args)
    assert broken.exit_code == 1 and "game-0003.sgf" in broken.output


def test_played_names_a_folder_without_the_engine(tmp_path: Path) -> None:
    (tmp_path / "g.sgf").write_text(format_sgf(game("gnugo", "pachi")), encoding="utf-8")
    result = CliRunner().invoke(main, ["train", "played", "--sgf", str(tmp_path), "--net", "n.onnx", "--teacher",
                                       "t.bin.gz"])
    assert result.exit_code == 1 and "no game names a player '... (A)'" in result.output


def test_played_names_the_record_with_an_illegal_move(tmp_path: Path) -> None:
    moves = "".join(f";{c}[{p}]" for c, p in zip("BWBWB", ["ee", "ce", "ec", "ge", "ee"]))  # the fifth is on E5 again
    (tmp_path / "game-0001.sgf").write_text(f"(;FF[4]SZ[9]KM[7]PB[x (A)]PW[y (B)]{moves})", encoding="utf-8")
    result = CliRunner().invoke(main, ["train", "played", "--sgf", str(tmp_path), "--net", str(DEFAULT_NET),
                                       "--teacher", str(DEFAULT_NET)])
    assert result.exit_code == 1 and "illegal SGF move 5" in result.output, result.output


def test_played_refuses_games_of_two_board_sizes(tmp_path: Path) -> None:
    """Phases are counted per board area, so a folder mixing sizes would put 19x19 middle games with 9x9 ends."""
    big = SgfGame(size=19, komi=7.5, rules="chinese", black_player="x (A)", white_player="y (B)",
                  moves=[(Color.BLACK, parse_gtp("Q16", 19))], comments=[None])
    with pytest.raises(ValueError, match=r"2 board sizes \(9x9, 19x19\)"):
        played_value_gaps(Fixed(max_batch=8, to_move=0.5), Fixed(max_batch=8, to_move=0.5),
                          [(game(), Color.BLACK), (big, Color.BLACK)])
    (tmp_path / "game-0001.sgf").write_text(format_sgf(game()), encoding="utf-8")
    (tmp_path / "game-0002.sgf").write_text(format_sgf(big), encoding="utf-8")
    # Refused before any net is loaded (these files do not exist): a teacher can take minutes to convert.
    result = CliRunner().invoke(main, ["train", "played", "--sgf", str(tmp_path), "--net", "n.onnx",
                                       "--teacher", "t.bin.gz"])
    assert result.exit_code == 1 and "one size's games at a time" in result.output, result.output


def test_played_reads_an_old_record_with_a_warning_per_repair(tmp_path: Path) -> None:
    record = tmp_path / "old.sgf"
    record.write_text("(;GM[1]FF[4]SZ[9]PB[x (A)]PW[y (B)];B[ee]W[ce];B[ec])\nend of game\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["train", "played", "--sgf", str(tmp_path), "--net", "n.onnx",
                                       "--teacher", "t.bin.gz"])
    assert result.stderr.splitlines()[:2] == [
        f"warning: {record}: line 1, column 42: B[ee] and W[ce] in one node: the 2 moves are played in file order",
        f"warning: {record}: line 2, column 1: text after the game tree is ignored ('end of game')",
    ]
    assert result.exit_code == 1 and "cannot load a net" in result.stderr  # the record was read: the net is next
