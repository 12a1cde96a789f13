"""The game: rules, komi, side to move, history with push/pop, superko, and the three hashes.

``GameState`` wraps a ``Board`` with everything that depends on history: the move stack (undo records), prisoners,
consecutive passes, the superko history (miai.go.superko), and the hashes KataGo keeps (cpp/game/board.cpp, boardhistory.cpp and
graphhash.cpp in lightvector/KataGo):

* ``position_hash``: the stones and the board size (the superko key under positional superko);
* ``situation_hash`` (H): position, side to move, the simple-ko point, every point superko bans for the player to
  move, komi from the mover's view, the rules, and the pass state;
* ``graph_hash`` (G): H chained through recent history until a move with S + E > ``rep_bound``.

How passes end the game follows KataGo 1.17.2 (cpp/game/boardhistory.cpp; docs/nets.md): two consecutive passes,
or, under simple ko, a pass by a player in a position where that player already passed with the same stones
(``passWouldEndPhase``). Under button rules the first pass of the game takes the button (half a point) and does
not count towards ending the game; taking it also clears the superko history.

>>> from miai.go.coords import parse_gtp
>>> s = GameState(9, komi=7.5)
>>> s.push(parse_gtp("E5", 9)); s.push(PASS)
>>> s.to_play, s.consecutive_passes, len(s.moves)
(<Color.BLACK: 1>, 1, 2)
>>> s.pop()
(<Color.WHITE: 2>, -1)
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import NamedTuple, SupportsIndex

import numpy as np
from numpy.typing import NDArray

from miai.go import scoring, zobrist
from miai.go.board import NO_POINT, Board, PlayRecord, colors_array
from miai.go.coords import PASS, Color, check_size
from miai.go.geometry import symmetric_points
from miai.go.errors import IllegalMoveError, IllegalReason, InvalidMoveError, SetupError
from miai.go.rules import KoRule, Rules, Scoring, Tax
from miai.go.superko import SuperkoHistory

_COLORS = (Color.EMPTY, Color.BLACK, Color.WHITE)
_TROMP_TAYLOR = Rules.preset("tromp-taylor")


def _pass_key(passes: int) -> int:
    """Pass state of H: the pass count, plus flags for "a pass now ends the game" and "the game is over" (as the
    count alone sets them; a repeated pass under simple ko sets them too, see ``_compute_state_hash``)."""
    key = zobrist.passes_key(passes)
    if passes == 1:
        key ^= zobrist.PASS_ENDS_GAME
    elif passes >= 2:
        key ^= zobrist.GAME_OVER
    return key


_PASS_KEYS = tuple(_pass_key(n) for n in range(8))


class _ButtonUndo(NamedTuple):
    """What taking the button cleared, for ``_unpass`` to put back."""

    superko: SuperkoHistory  # the superko history before it (taking the button starts a fresh one)
    pass_positions: dict[tuple[int, int], int]  # where each player had passed (under simple ko)


class _PassUndo(NamedTuple):
    """What ``_unpass`` restores of a pass (made only by passes, which are rare: the names cost nothing)."""

    ko: tuple[int, int]  # the simple-ko ban the pass lifted (Board.clear_ko's record)
    phase_start: int
    button_taker: int
    button: _ButtonUndo | None  # what taking the button cleared, if this pass took it


# Builds an _Undo from a plain tuple, skipping NamedTuple's __new__, a Python function: play and pop are the search's
# hot path (about ten of each per playout on 9x9). A play and its pop took 3.9 us with a plain tuple, 4.2 us so and
# 4.3 us through _Undo(...) (a loop of play_unchecked and pop on a 9x9 game, CPU time, the three interleaved); the
# tenth field (``over`` apart from a pass's record) and the superko history in its own object cost nothing measurable.
_new_undo = tuple.__new__


class _Undo(NamedTuple):
    """One entry of the move stack: the move and what ``pop`` puts back."""

    move: int  # the move played, PASS included
    color: int  # who played it
    board: PlayRecord | None  # Board.play's record for a stone (only the board reads it); None for a pass
    to_play: int  # the player to move before it
    passes: int  # consecutive passes before it
    state_hash: int
    graph_hash: int
    bans: tuple[int, ...]  # the superko bans before it
    over: bool  # whether the game had ended before it
    passed: _PassUndo | None  # a pass's bookkeeping (None for a stone)


class GameState:
    """A game of Go under ``rules``, mutable through ``push``/``pop``."""

    # The history a setup restarts (set by ``_reset_history``).
    _over: bool
    _phase_start: int
    _button_taker: int
    _pass_positions: dict[tuple[int, int], int]
    _salt: tuple[int, ...]
    _history: SuperkoHistory  # the positions so far (kept under positional and situational superko only)
    _bans: tuple[int, ...]
    _state_hash: int
    _graph_hash: int

    def __init__(self, size: int = 19, rules: Rules = _TROMP_TAYLOR, komi: float = 7.5, rep_bound: int = 11) -> None:
        check_size(size)
        if not 3 <= rep_bound <= 50:
            raise ValueError("rep_bound must be in 3..50")
        self._size = size
        self._rules = rules
        self._rep_bound = rep_bound
        self._komi = float(komi)
        self._superko = rules.ko is not KoRule.SIMPLE
        # Under simple ko a pass in a position where the same player passed before ends the game (KataGo's
        # "spight-like" ending); the positions where each player passed are kept for that.
        self._repeat_pass_ends = rules.ko is KoRule.SIMPLE
        self._situational = rules.ko is KoRule.SITUATIONAL
        self._suicide = rules.multi_stone_suicide
        self.board = Board(size)
        self.handicap = 0
        self.moves: list[tuple[Color, int]] = []
        self.consecutive_passes = 0
        self._to_play = 1
        self._stack: list[_Undo] = []
        self._setup_colors = [0] * (size * size)
        self._setup_to_play = 1
        self._ko_keys = zobrist.point_keys("ko", size)
        self._ban_keys = zobrist.point_keys("ban", size)
        self._rules_key = zobrist.rules_key(rules.to_json())
        self._reset_history()

    def __repr__(self) -> str:
        return (
            f"GameState(size={self._size}, rules={self._rules.name!r}, komi={self._komi:g}, "
            f"moves={len(self.moves)}, to_play={self.to_play.name})"
        )

    # ----------------------------------------------------------------- simple reads
    @property
    def size(self) -> int:
        """Board size (fixed for the life of the state)."""
        return self._size

    @property
    def rules(self) -> Rules:
        """The rules (fixed: build a new state, e.g. by replaying ``moves``, to change them)."""
        return self._rules

    @property
    def rep_bound(self) -> int:
        """The graph hash's repetition bound (KATAGO.md section 1)."""
        return self._rep_bound

    @property
    def komi(self) -> float:
        """Komi (points added to White's score). Setting it recomputes the hashes of the whole history."""
        return self._komi

    @komi.setter
    def komi(self, value: float) -> None:
        moves = [self.pop() for _ in range(len(self._stack))][::-1]
        self._komi = float(value)
        self._reset_history()
        for color, move in moves:
            self._play(move, int(color))

    @property
    def to_play(self) -> Color:
        """The player to move."""
        return _COLORS[self._to_play]

    @property
    def position_hash(self) -> int:
        """Zobrist hash of the stones and the board size."""
        return self.board.hash

    @property
    def situation_hash(self) -> int:
        """The state hash H of KATAGO.md section 1."""
        return self._state_hash

    @property
    def graph_hash(self) -> int:
        """The cycle-aware graph hash G of KATAGO.md section 1."""
        return self._graph_hash

    def is_over(self) -> bool:
        """True after two consecutive passes (the button pass does not count), or after a pass that repeats one
        by the same player in the same position under simple ko."""
        return self._over

    def pass_ends_game(self) -> bool:
        """Would a pass by the player to move end the game (KataGo's ``passWouldEndPhase``)?"""
        if self._button_taker == 0 and self._rules.has_button:
            return False  # that pass takes the button
        return self.consecutive_passes >= 1 or self.pass_repeats_position()

    def pass_ends_game_outright(self) -> bool:
        """KataGo's ``passWouldEndGame``: a pass would end the game itself, which needs area scoring. Under territory
        scoring two passes end only KataGo's main phase (its encore follows, which miai does not play; miai ends the
        game there: ``pass_ends_game`` is KataGo's passWouldEndPhase)."""
        return self._rules.scoring == Scoring.AREA and self.pass_ends_game()

    def pass_is_friendly(self) -> bool:
        """Would a pass now end the game only as a friendly pass (KataGo's shouldSuppressEndGameFromFriendlyPass):
        the rules allow friendly passes under area scoring, the opponent has just passed, and the pass does not
        repeat an earlier one. KataGo's net then sees no history, and its search keeps going past such a pass."""
        rules = self._rules
        return (rules.friendly_pass_ok and rules.scoring == Scoring.AREA and int(self.consecutive_passes) == 1
                and not self.pass_repeats_position())

    def pass_repeats_position(self) -> bool:
        """Under simple ko: has the player to move passed before in this very position (same stones)?"""
        return self._repeat_pass_ends and (self._to_play, self.board.hash) in self._pass_positions

    @property
    def button_available(self) -> bool:
        """Button rules, and nobody has passed yet: the next pass takes the button."""
        return self._rules.has_button and self._button_taker == 0

    def button_bonus(self) -> float:
        """Points the button gives White: +0.5 if White took it, -0.5 if Black did, 0 without button rules.
        When the game is scored before anyone passed, the player to move gets it (as KataGo does)."""
        if not self._rules.has_button:
            return 0.0
        taker = self._button_taker or self._to_play
        return 0.5 if taker == 2 else -0.5

    def moves_this_phase(self) -> int:
        """Moves since the game last ended, counting the pass that ended it (all moves if it never ended): the
        moves the net may see as history (KataGo's ``numApproxValidTurnsThisPhase``)."""
        return len(self.moves) - self._phase_start

    def captures(self, color: Color | int) -> int:
        """Stones of ``color``'s opponent that ``color`` captured (including the opponent's suicides)."""
        return self.board.prisoners[int(color)]

    def color_at(self, move: int) -> Color:
        """The colour of a board point."""
        return _COLORS[self.board.color_at(move)]

    def stones(self) -> np.ndarray:
        """int8 colours (0/1/2) in flat order."""
        return self.board.stones()

    def own_eyes(self, color: Color | int) -> list[int]:
        """Flat moves of ``color``'s single-point true eyes (``Board.own_eyes``)."""
        return self.board.own_eyes(int(color))

    def local_pattern(self, move: int, radius: int = 2) -> tuple[int, ...]:
        """The colours (0/1/2, 3 off the board; 4 added to a stone whose chain is in atari) of the square of side
        ``2 * radius + 1`` centred on ``move``, row by row, then the simple-ko point the side to move may not take
        (PASS if none): the local shape the search's subtree value bias groups positions by (KataGo's 5x5
        LocalPatternHasher, which marks stones with one liberty, with the ko ban of SubtreeValueBiasTable::get)."""
        board = self.board
        size, width, color, chains = self.size, board.geo.width, board.color, board.chain
        row, col = divmod(move, size)
        out = []
        for dy in range(-radius, radius + 1):
            y = row + dy
            base = (y + 1) * width + 1
            for dx in range(-radius, radius + 1):
                x = col + dx
                if not (0 <= y < size and 0 <= x < size):
                    out.append(3)
                    continue
                c = color[base + x]
                chain = chains[base + x] if c else None
                out.append(c + 4 if chain is not None and len(chain.libs) == 1 else c)
        ko = board.ko_move if board.ko_color == self._to_play else PASS
        out.append(ko)
        return tuple(out)

    def liberties(self) -> np.ndarray:
        """int16 liberties of the chain at each point (0 on empty points)."""
        return self.board.liberties()

    def chain(self, move: int) -> list[int]:
        """The points of the chain at ``move`` (empty list on an empty point)."""
        return self.board.chain_at(move)

    def board_history(self, k: int) -> np.ndarray:
        """The ``stones()`` array ``k`` moves ago (moves before the start give the earliest board)."""
        colors = self.board.colors()
        for entry in reversed(self._stack[len(self._stack) - min(k, len(self._stack)) :]):
            if entry.board is not None:  # a stone (a pass changed no stone)
                self.board.unplay_colors(entry.board, colors)
        return colors_array(colors)

    # ----------------------------------------------------------------- legality
    def legality(self, move: int, color: Color | int | None = None) -> IllegalReason | None:
        """Why ``color`` (default: the player to move) may not play ``move``; None if it may.

        Raises:
            InvalidMoveError: for a move off the board or a colour other than black or white.
        """
        c = self._to_play if color is None else int(color)
        if c not in (1, 2):
            raise InvalidMoveError(f"cannot play for colour {color!r}")
        if move == PASS:
            return None
        if not 0 <= move < self._size * self._size:
            raise InvalidMoveError(f"move {move} is off the {self._size}x{self._size} board")
        reason = self.board.legality(move, c, self._suicide)
        if reason is None and self._superko:
            # The mover's bans are already known (computed after the last move); other colours are checked directly.
            if move in self._bans if c == self._to_play else self.repeats_history(move, c):
                return IllegalReason.SUPERKO
        return reason

    def repeats_history(self, move: int, color: Color | int) -> bool:
        """Would ``color`` playing the (pseudo-legal) ``move`` recreate an earlier position (or situation, under
        situational superko)? Checked directly from the hash after the move. Always False under simple ko, where
        no position history is kept."""
        return self._history.repeats(self.board, move, int(color))

    def is_legal(self, move: int, color: Color | int | None = None) -> bool:
        """True if ``color`` (default: the player to move) may play ``move``."""
        return self.legality(move, color) is None

    def legal_moves(self, color: Color | int | None = None) -> list[int]:
        """All legal board points (pass, always legal, is not listed).

        Raises:
            InvalidMoveError: for a colour other than black or white.
        """
        c = self._to_play if color is None else int(color)
        if c not in (1, 2):
            raise InvalidMoveError(f"cannot play for colour {color!r}")
        moves = self.board.legal_moves(c, self._suicide)
        if not self._superko:
            return moves
        if c == self._to_play:
            return [m for m in moves if m not in self._bans] if self._bans else moves
        return [m for m in moves if not self.repeats_history(m, c)]

    def legal_mask(self) -> NDArray[np.bool_]:
        """bool ``[size*size + 1]``: the legal moves of the player to move, pass (always legal) last; what the nets'
        policy is masked with, built in a bytearray (a list of moves turned into numpy indices costs twice as much)."""
        area = self._size * self._size
        flags = bytearray(area + 1)
        for move in self.legal_moves():
            flags[move] = 1
        flags[area] = 1
        return np.frombuffer(flags, dtype=np.bool_)

    def symmetries(self) -> list[int]:
        """The board symmetries (``geometry.symmetric_points``) that leave the stones where they are, 0 first; only
        0 while a point is banned by ko or superko (KataGo's ``markDuplicateMoveLocs``: such a board is never taken
        for symmetric). The history is not looked at, as in KataGo."""
        if self.banned_points():
            return [0]
        stones = self.stones().tolist()
        images = symmetric_points(self.size)
        return [0] + [s for s in range(1, 8) if all(stones[images[s][p]] == c for p, c in enumerate(stones))]

    def banned_points(self) -> list[int]:
        """Empty points the player to move may not play because of ko or superko (KataGo plane 6)."""
        board = self.board
        banned = list(self._bans)
        if board.ko_point != NO_POINT and board.ko_color == self._to_play:
            banned.append(board.ko_move)
        return sorted(banned)

    # ----------------------------------------------------------------- play
    def push(self, move: SupportsIndex, color: Color | int | None = None, *, superko: bool = True) -> None:
        """Play ``move`` for ``color`` (default: the player to move) after checking legality.

        ``superko=False`` plays a move that only superko forbids (a game record of a game played without
        superko, as SGF readers replay it); simple ko, occupied points and suicide are still checked.

        Raises:
            IllegalMoveError: if the rules forbid the move (``reason`` says why).
            InvalidMoveError: for a move off the board or a colour other than black or white.
        """
        point = operator.index(move)  # an int: numpy integers would otherwise leak into ``moves``
        c = self._to_play if color is None else int(color)
        reason = self.legality(point, c)
        if reason is IllegalReason.SUPERKO and not superko:
            reason = None
        if reason is not None:
            raise IllegalMoveError(reason)
        self._play(point, c)

    def give_turn(self, color: Color | int) -> None:
        """Make ``color`` the player to move without a move (SGF PL after moves, or a record with one colour twice
        in a row): the stones stay, the ko, superko bans and hashes become those of ``color`` to move. ``pop`` undoes
        the last move as before; ``copy`` keeps the player to move.

        Raises:
            SetupError: for a colour other than black or white.
        """
        c = int(color)
        if c not in (1, 2):
            raise SetupError(f"bad colour {color!r}")
        if c == self._to_play:
            return
        if self._superko:
            self._history.forget(self.board, self._to_play)  # under situational superko the mover is in the key
        self._to_play = c
        if self._superko:
            self._history.remember(self.board, c)
            self._bans = self._history.bans(self.board, c)
        self._state_hash = self._compute_state_hash()
        self._graph_hash = zobrist.chain_graph_hash(self._graph_hash, self._state_hash)

    def play_unchecked(self, move: int) -> None:
        """Play ``move`` for the player to move without checking legality (the search's hot path)."""
        self._play(move, self._to_play)

    def _play(self, move: int, c: int) -> None:
        board = self.board
        over = self._over
        record: PlayRecord | None
        passed: _PassUndo | None
        if move == PASS:
            record = None
            passes, passed = self._pass(c)
        else:
            record = board.play(move, c)
            passes, passed = 0, None
            self._over = False
        self._stack.append(
            _new_undo(_Undo, (move, c, record, self._to_play, self.consecutive_passes, self._state_hash,
                              self._graph_hash, self._bans, over, passed))
        )
        self._to_play = to_play = 3 - c
        self.consecutive_passes = passes
        self.moves.append((_COLORS[c], move))
        if self._superko:
            history = self._history
            history.remember(board, to_play)
            self._bans = history.bans(board, to_play)
        state_hash = self._compute_state_hash()
        self._state_hash = state_hash
        if move != PASS and board.exceeds_repetition_bound(move, self._rep_bound):
            self._graph_hash = state_hash
        else:
            self._graph_hash = zobrist.chain_graph_hash(self._graph_hash, state_hash)

    def pop(self) -> tuple[Color, int]:
        """Undo the last move; returns ``(colour, move)``.

        Raises:
            IndexError: when there is nothing to undo.
        """
        if not self._stack:
            raise IndexError("no move to undo")
        if self._superko:
            self._history.forget(self.board, self._to_play)
        entry = self._stack.pop()
        record = entry.board
        if record is not None:
            self.board.undo(record)
        else:
            passed = entry.passed
            assert passed is not None  # a pass's entry
            self._unpass(entry.color, passed)
        self._over = entry.over
        self._to_play = entry.to_play
        self.consecutive_passes = entry.passes
        self._state_hash = entry.state_hash
        self._graph_hash = entry.graph_hash
        self._bans = entry.bans
        self.moves.pop()
        return _COLORS[entry.color], entry.move

    def _pass(self, c: int) -> tuple[int, _PassUndo]:
        """Bookkeeping of a pass by ``c``: the new count of consecutive passes, and what ``_unpass`` needs."""
        undo = _PassUndo(self.board.clear_ko(), self._phase_start, self._button_taker, None)
        if self._rules.has_button and self._button_taker == 0:
            # Taking the button: not a game-ending pass, and a fresh start for superko and for repeated passes.
            self._button_taker = c
            undo = undo._replace(button=_ButtonUndo(self._history, self._pass_positions))
            self._history = self._history.fresh()
            self._pass_positions = {}
            return 0, undo
        passes = self.consecutive_passes + 1
        ends = passes >= 2
        if self._repeat_pass_ends:
            key = (c, self.board.hash)
            ends = ends or key in self._pass_positions
            self._pass_positions[key] = self._pass_positions.get(key, 0) + 1
        self._over = ends
        if ends:
            self._phase_start = len(self.moves)  # this pass is the first move of the next "phase"
        return passes, undo

    def _unpass(self, c: int, undo: _PassUndo) -> None:
        """Undo ``_pass`` (the position's superko entry is already forgotten; ``pop`` restores whether the game was
        over)."""
        self.board.restore_ko(undo.ko)
        self._phase_start, self._button_taker = undo.phase_start, undo.button_taker
        button = undo.button
        if button is not None:
            self._history, self._pass_positions = button.superko, button.pass_positions
        elif self._repeat_pass_ends:
            key = (c, self.board.hash)
            left = self._pass_positions[key] - 1
            if left:
                self._pass_positions[key] = left
            else:
                del self._pass_positions[key]

    # ----------------------------------------------------------------- hashes and superko
    def _compute_state_hash(self) -> int:
        board = self.board
        to_play = self._to_play
        passes = self.consecutive_passes
        h = board.hash ^ self._salt[to_play] ^ (_PASS_KEYS[passes] if passes < 8 else _pass_key(passes))
        if passes < 2 and self._over:  # ended by a repeated pass: "game over" replaces "a pass ends the game"
            h ^= zobrist.GAME_OVER ^ (zobrist.PASS_ENDS_GAME if passes == 1 else 0)
        elif passes == 0 and self._pass_positions and self.pass_repeats_position():
            h ^= zobrist.PASS_ENDS_GAME
        if self._rules.has_button:
            h ^= zobrist.BUTTON[self._button_taker]
        if board.ko_point != NO_POINT and board.ko_color == to_play:
            h ^= self._ko_keys[board.ko_move]
        ban_keys = self._ban_keys
        for move in self._bans:
            h ^= ban_keys[move]
        return h

    def _reset_history(self) -> None:
        """Make the current position the start of the game: fresh superko history and hashes."""
        self._stack.clear()
        self.moves.clear()
        self.consecutive_passes = 0
        self._over = False
        self._phase_start = 0
        self._button_taker = 0
        self._pass_positions = {}
        self.board.prisoners = [0, 0, 0]
        self._salt = tuple(
            self._rules_key ^ zobrist.TO_PLAY[c] ^ zobrist.komi_key(self._komi if c == 2 else -self._komi) if c else 0
            for c in range(3)
        )
        self._history = SuperkoHistory(self._situational, self._suicide)
        self._bans = ()
        if self._superko:
            self._history.remember(self.board, self._to_play)
        self._state_hash = self._compute_state_hash()
        self._graph_hash = self._state_hash

    # ----------------------------------------------------------------- setup
    def set_stones(self, black: Iterable[int], white: Iterable[int]) -> None:
        """Add setup stones (SGF AB/AW). Allowed only before any move; the result becomes the start of the game.

        Raises:
            SetupError: after moves, on occupied or repeated points, or if a chain would have no liberty.
        """
        if self._stack:
            raise SetupError("setup stones only before the first move")
        colors = self.board.colors()
        for c, points in ((1, black), (2, white)):
            for move in points:
                if not 0 <= move < self.size * self.size or colors[move]:
                    raise SetupError(f"bad setup point {move}")
                colors[move] = c
        self.board = Board.from_colors(self.size, colors)
        self._setup_colors = colors
        self._reset_history()

    @property
    def setup(self) -> tuple[tuple[int, ...], int]:
        """The position before the first move: setup/handicap colours per point (0/1/2) and the first player.

        Two games with equal ``setup`` and one move list a prefix of the other are the same game further on.
        """
        return tuple(self._setup_colors), self._setup_to_play

    def set_to_play(self, color: Color | int) -> None:
        """Choose who moves first (SGF ``PL``). Allowed only before the first move.

        Raises:
            SetupError: after moves, or for a colour other than black or white.
        """
        if self._stack:
            raise SetupError("the first player can only be set before the first move")
        if int(color) not in (1, 2):
            raise SetupError(f"bad colour {color!r}")
        self._to_play = self._setup_to_play = int(color)
        self._reset_history()

    def set_handicap(self, points: Iterable[int]) -> None:
        """Place black handicap stones on an empty board; White moves next.

        Raises:
            SetupError: if the board is not empty or the points are bad.
        """
        points = list(points)
        if self._stack or any(self._setup_colors):
            raise SetupError("board not empty")
        if not points or len(set(points)) != len(points):
            raise SetupError("bad vertex list")
        self.set_stones(points, [])
        self.handicap = len(points)
        self._to_play = self._setup_to_play = 2
        self._reset_history()

    def fixed_handicap(self, n: int) -> list[int]:
        """Place GNU Go's fixed handicap of ``n`` stones and return the points (top-left to bottom-right).

        Raises:
            SetupError: for a count this size does not allow, or a board that is not empty.
        """
        if self._stack or any(self._setup_colors):
            raise SetupError("board not empty")
        points = fixed_handicap_points(self.size, n)
        self.set_handicap(points)
        return points

    def copy(self) -> GameState:
        """An independent state with the same setup, moves and hashes (replays the moves)."""
        other = GameState(self.size, self.rules, self._komi, self.rep_bound)
        if any(self._setup_colors):
            other.set_stones(
                [m for m, v in enumerate(self._setup_colors) if v == 1],
                [m for m, v in enumerate(self._setup_colors) if v == 2],
            )
        other.handicap = self.handicap
        other._to_play = other._setup_to_play = self._setup_to_play
        other._reset_history()
        for color, move in self.moves:
            other._play(move, int(color))
        if other._to_play != self._to_play:  # the turn was given (give_turn) after the last move
            other.give_turn(self._to_play)
        return other

    def fresh_copy(self, to_play: Color | int) -> GameState:
        """The same stones, as setup stones, with ``to_play`` to move and no history: no moves, passes, or ko and
        superko bans, so a search looks at the position for itself (a move for the side not to move, a finished
        game's stones). The handicap count is not carried over."""
        other = GameState(self.size, self.rules, self._komi, self.rep_bound)
        stones = self.stones()
        other.set_stones([int(p) for p in np.flatnonzero(stones == 1)], [int(p) for p in np.flatnonzero(stones == 2)])
        other.set_to_play(to_play)
        return other

    # ----------------------------------------------------------------- scoring
    def score(self, dead: Iterable[int] = ()) -> float:
        """Final score from White's view (positive: White ahead) by the rules' scoring, with ``dead`` stones lifted
        (komi, handicap bonus and the button's half point included). Taxed area scoring counts as KataGo counts a
        finished game (:func:`miai.go.benson.taxed_area_margin`)."""
        colors, removed = scoring.remove_dead(self.board.colors(), dead)
        bonus = self.rules.handicap_bonus(self.handicap)
        if self.rules.scoring is Scoring.AREA and self.rules.tax is not Tax.NONE:
            from miai.go import benson  # (lazy, as below: stone arrays; only taxed area scoring needs it here)

            return benson.taxed_area_margin(colors, self.size, self.rules) + self._komi + bonus + self.button_bonus()
        if self.rules.scoring is Scoring.AREA:
            black, white = scoring.area(colors, self.size)
        else:
            black, white = scoring.territory(colors, self.size, self.rules.tax)
            black += self.board.prisoners[1] + removed[2]
            white += self.board.prisoners[2] + removed[1]
        return white - black + self._komi + bonus + self.button_bonus()

    def tromp_taylor_score(self) -> float:
        """Area score from White's view with every stone alive (Tromp-Taylor), with komi, handicap bonus and button."""
        black, white = scoring.area(self.board.colors(), self.size)
        return white - black + self._komi + self.rules.handicap_bonus(self.handicap) + self.button_bonus()

    @staticmethod
    def result_string(score: float) -> str:
        """``W+x``, ``B+x`` or ``0`` for a score from White's view.

        >>> GameState.result_string(-3.5), GameState.result_string(0.5), GameState.result_string(0)
        ('B+3.5', 'W+0.5', '0')
        """
        if score == 0:
            return "0"
        winner = "W" if score > 0 else "B"
        return f"{winner}+{abs(score):g}"

    def pass_alive_area(self) -> np.ndarray:
        """int8 per point: 1/2 for Benson pass-alive stones of that colour and the territory they enclose, else 0."""
        from miai.go import benson  # lazy: benson works on stone arrays and is only needed for net features

        return benson.pass_alive(self.stones(), self.size, multi_stone_suicide=self.rules.multi_stone_suicide)

    def area_map(self) -> np.ndarray:
        """The area map KataGo's planes 18/19 use under these rules (KATAGO.md section 3)."""
        from miai.go import benson

        return benson.area_map_for_rules(self.stones(), self.size, self.rules)


def max_fixed_handicap(size: int) -> int:
    """The largest fixed handicap GNU Go places on this size (9 on odd sizes >= 9, 4 on sizes >= 7, else 0)."""
    if size % 2 == 1 and size >= 9:
        return 9
    return 4 if size >= 7 else 0


def fixed_handicap_points(size: int, n: int) -> list[int]:
    """GNU Go's fixed handicap points, sorted top-left to bottom-right as its ``fixed_handicap`` lists them.

    Stones go on the third line (fourth above 11x11); 5, 7 and 9 add the centre, 6+ the side midpoints.

    Raises:
        SetupError: ``invalid handicap`` when ``n`` is outside ``2..max_fixed_handicap(size)``.

    >>> from miai.go.coords import to_gtp
    >>> [to_gtp(m, 19) for m in fixed_handicap_points(19, 2)]
    ['Q16', 'D4']
    """
    if not 2 <= n <= max_fixed_handicap(size):
        raise SetupError("invalid handicap")
    edge = 3 if size > 11 else 2
    low, high, mid = edge, size - 1 - edge, size // 2
    corners = [(high, low), (low, high), (low, low), (high, high)]  # (x, y): upper right, lower left, ...
    chosen = corners[: min(n, 4)]
    if n >= 6:
        chosen += [(low, mid), (high, mid)]
    if n >= 8:
        chosen += [(mid, low), (mid, high)]
    if n % 2 == 1 and n >= 5:
        chosen.append((mid, mid))
    return sorted(y * size + x for x, y in chosen)
