"""What a match is, apart from its engines: games, board, rules, clocks, time limits, openings, where it writes."""

from __future__ import annotations

from dataclasses import dataclass

from miai.go.clock import TimeControl, TimeSystem
from miai.go.rules import Rules
from miai.go.state import GameState, max_fixed_handicap
from miai.match.elo import SprtConfig

__all__ = ["MatchConfig"]

# The clocks the referee keeps and can tell an engine about (time_settings, kgs-time_settings, kata-time_settings).
_MATCH_CLOCKS = (TimeSystem.ABSOLUTE, TimeSystem.CANADIAN, TimeSystem.BYOYOMI, TimeSystem.FISCHER)


@dataclass(frozen=True)
class MatchConfig:
    """Everything about a match except the engines and callbacks. Times are in seconds."""

    games: int = 2
    first_game: int = 1  # resume a long schedule: play games first_game..games with their openings and colours
    size: int = 9
    komi: float = 7.5
    rules: str = "chinese"  # rules as kata-set-rules takes them (usually a preset name): the referee's rules, also sent as `kata-set-rules` if listed
    alternate: bool = True  # swap colours every game (A is Black in games 1, 3, ...)
    time: TimeControl | None = None  # a clock per engine (absolute, Canadian, byo-yomi, Fischer), with time_left
    times: tuple[TimeControl, ...] = ()  # instead of `time`: game N is played under times[(N - 1) % len(times)]
    time_margin: float = 1.0  # lag allowance before a clock overrun is a loss on time
    move_timeout: float = 600.0  # hard cap on any genmove (the per-move time limit without a clock)
    command_timeout: float = 30.0  # cap on every other command (play, boardsize, final_score, ...)
    start_timeout: float = 120.0  # cap on the first answer of a freshly started engine (it may load a net)
    visits: int | None = None  # sent as `kata-set-param maxVisits V` (or max_visits) where kata-set-param is listed
    max_moves: int | None = None  # move limit; default 4 * size * size
    openings: str | None = None  # file of openings (see load_openings)
    handicap: int = 0  # fixed handicap stones for Black (GNU Go's points); White then moves first
    sgf_dir: str | None = None  # one SGF per game is written here
    sprt: SprtConfig | None = None  # run an SPRT for A against B ...
    sprt_stop: bool = True  # ... and stop as soon as it accepts H0 or H1
    log_dir: str | None = None  # engines' stderr is appended to <log_dir>/A.stderr and B.stderr (A2.stderr, ...)
    concurrency: int = 1  # games played at once, each by its own pair of engine processes

    def __post_init__(self) -> None:
        if self.games < 1:
            raise ValueError("games must be at least 1")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if not 1 <= self.first_game <= self.games:
            raise ValueError(f"the first game must be in 1..{self.games} (the number of games), got {self.first_game}")
        if not 2 <= self.size <= 25:
            raise ValueError(f"board size {self.size} outside 2..25")
        if min(self.move_timeout, self.command_timeout, self.start_timeout) <= 0:
            raise ValueError("timeouts must be positive")
        for control in (self.time, *self.times):
            if control is not None and control.system not in _MATCH_CLOCKS:
                raise ValueError(f"a match clock is absolute, Canadian, byo-yomi or Fischer, not "
                                 f"{control.system.value}")
        if self.time is not None and self.times:
            raise ValueError("give one clock (time) or a cycle of them (times), not both")
        Rules.parse(self.rules)  # fail early on unknown rules (a preset name, JSON or compact string)
        if self.handicap and not 2 <= self.handicap <= max_fixed_handicap(self.size):
            raise ValueError(f"handicap on {self.size}x{self.size} is 0 or 2..{max_fixed_handicap(self.size)}")

    def new_state(self) -> GameState:
        """The referee's empty game for this match, with the handicap stones placed."""
        state = GameState(self.size, Rules.parse(self.rules), self.komi)
        if self.handicap:
            state.fixed_handicap(self.handicap)
        return state

    def clock(self, number: int) -> TimeControl | None:
        """The clock of game ``number`` (1-based): ``time``, or the ``times`` in turn."""
        if self.times:
            return self.times[(number - 1) % len(self.times)]
        return self.time

    @property
    def move_limit(self) -> int:
        """The number of moves after which a game is stopped and scored."""
        return self.max_moves if self.max_moves is not None else 4 * self.size * self.size
