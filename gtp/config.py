"""The GTP layer's settings: the engine's name and version, the game a session starts with, pondering, analysis."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import version

from miai.go.coords import MAX_SIZE, MIN_SIZE
from miai.go.rules import Rules


def _default_version() -> str:
    """The package version, the same text as ``miai --version`` (Lizzie splits it on dots and reads the second
    part, so ``X.Y.Z`` suits it as well as ``X.Y``)."""
    return version("miai")  # the one source is pyproject.toml


@dataclass(frozen=True)
class GtpConfig:
    """Settings of the GTP layer (the engine's search settings live in its own config)."""

    name: str = "miai"  # answer to `name`
    version: str = field(default_factory=_default_version)  # answer to `version` (read when made, not at import)
    board_size: int = 19  # size of the board at start
    komi: float = 7.5  # komi at start; `clear_board` keeps the current komi
    rules: str = "tromp-taylor"  # rules preset at start (kata-set-rules / kgs-rules change it)
    ponder: bool = False  # let the player think while waiting for input
    analysis_interval_cs: int = 100  # analysis interval when the command gives none (centiseconds)
    exit_on_game_over: bool = False  # end the session after answering kgs-game_over (kgsGtp then starts a new one)
    ogs_chat_to_stderr: bool = False  # KataGo's ogsChatToStderr: a MALKOVICH: line on stderr after every genmove

    def __post_init__(self) -> None:
        if not MIN_SIZE <= self.board_size <= MAX_SIZE:
            raise ValueError(f"board_size must be in {MIN_SIZE}..{MAX_SIZE}, got {self.board_size}")
        if self.analysis_interval_cs < 0:
            raise ValueError("analysis_interval_cs must be >= 0")
        if not self.name or any(c.isspace() for c in self.name) or not self.version.strip():
            raise ValueError("name must be one word and version non-empty")
        Rules.parse(self.rules)  # fail early on unknown rules (a preset name, JSON or compact string)
