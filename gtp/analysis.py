"""The analysis commands' text: argument parsing and ``info`` line formatting (GTP.md section 2).

Two flavours share one grammar:

- ``lz``: Leela Zero's format, read by Lizzie and Sabaki. Winrate, prior and lcb are integers in
  ten-thousandths (5213 = 52.13%).
- ``kata``: KataGo's format. The same values are decimals in [0, 1], always written with a ``.``, plus
  KataGo's extra fields (scoreLead, utility, ...) and the optional ``rootInfo``/``ownership`` sections.

Every value is from the view of the analysed colour, as the player reports it (see ``miai.gtp.player``).
Each ``info`` segment ends with ``pv`` and its moves, because Sabaki's parser requires the segment to end with
the vertex run (unless the controller asked for pvVisits/movesOwnership, which come after it as in KataGo).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal, TypedDict

from miai.go.coords import Color, parse_color, parse_gtp, to_gtp

from .errors import GtpSyntaxError
from .player import AnalysisSnapshot, AnalyzeRequest, MoveInfo, MoveRestriction

Flavour = Literal["lz", "kata"]

_FlagField = Literal["root_info", "ownership", "ownership_stdev", "moves_ownership", "pv_visits", "pv_edge_visits"]


class _Flags(TypedDict, total=False):
    """AnalyzeRequest's boolean flags, as keyword arguments of ``replace``."""

    root_info: bool
    ownership: bool
    ownership_stdev: bool
    moves_ownership: bool
    pv_visits: bool
    pv_edge_visits: bool


_FLAG_KEYS: dict[str, _FlagField] = {
    "rootinfo": "root_info",
    "ownership": "ownership",
    "ownershipstdev": "ownership_stdev",
    "movesownership": "moves_ownership",
    "pvvisits": "pv_visits",
    "pvedgevisits": "pv_edge_visits",
}
# KataGo's key that miai refuses: its search does not track the no-result outcome, so it has no value to print.
_UNSUPPORTED_FLAG_KEYS = {"noresultvalue": "noResultValue"}


def parse_analyze_args(
    tokens: Sequence[str], size: int, to_play: Color, default_interval_cs: int = 100, flavour: Flavour = "kata"
) -> tuple[Color, AnalyzeRequest]:
    """Parse ``[color] [interval] [key value ...]`` (lz-analyze, kata-analyze and the genmove_analyze forms).

    The colour defaults to ``to_play``; a bare number is the interval in centiseconds, as Leela Zero accepts
    it (Lizzie sends ``lz-analyze 10``). Every accepted key shows in the output; the ``lz`` flavour refuses
    KataGo's output keys (``ownership``, ``pvVisits``, ...), as KataGo's lz-analyze does, since Leela Zero's
    format has no place for them.

    Raises:
        GtpSyntaxError: an unknown or refused key, a missing value, or a bad number, colour or vertex (quoted).
    """
    rest = list(tokens)
    color = to_play
    if rest and _is_color(rest[0]):
        color = parse_color(rest.pop(0))
    request = AnalyzeRequest(interval=default_interval_cs / 100.0)
    if rest and rest[0][:1].isdigit():
        request = replace(request, interval=_count(rest.pop(0), "interval") / 100.0)
    while rest:
        request = _apply_key(request, rest, size, flavour)
    return color, request


def _is_color(token: str) -> bool:
    try:
        parse_color(token)
    except ValueError:
        return False
    return True


def _count(token: str, what: str) -> int:
    if not (token.isascii() and token.isdigit()):
        raise GtpSyntaxError(f"invalid {what} '{token}'")
    return int(token)


def _take(rest: list[str], key: str) -> str:
    if not rest:
        raise GtpSyntaxError(f"missing value after '{key}'")
    return rest.pop(0)


def _apply_key(request: AnalyzeRequest, rest: list[str], size: int, flavour: Flavour) -> AnalyzeRequest:
    """Consume one ``key value...`` group from ``rest`` and return the updated request."""
    key = rest.pop(0)
    lowered = key.lower()
    if lowered == "interval":
        return replace(request, interval=_count(_take(rest, key), "interval") / 100.0)
    if lowered in ("minmoves", "maxmoves"):
        count = _count(_take(rest, key), lowered)
        return replace(request, min_moves=count) if lowered == "minmoves" else replace(request, max_moves=count)
    if lowered in _UNSUPPORTED_FLAG_KEYS:
        raise GtpSyntaxError(f"'{key}' is not supported: miai's search does not track no-result outcomes")
    if lowered in _FLAG_KEYS:
        if flavour == "lz":
            raise GtpSyntaxError(f"'{key}' is a kata-analyze key; Leela Zero's format has no field for it")
        value = _take(rest, key).lower()
        if value not in ("true", "false"):
            raise GtpSyntaxError(f"invalid value '{value}' for '{key}' (expected true or false)")
        flags: _Flags = {}
        flags[_FLAG_KEYS[lowered]] = value == "true"
        return replace(request, **flags)
    if lowered in ("avoid", "allow"):
        return _apply_restriction(request, lowered, rest, size)
    raise GtpSyntaxError(f"unknown analysis key '{key}'")


def _apply_restriction(request: AnalyzeRequest, kind: str, rest: list[str], size: int) -> AnalyzeRequest:
    """``avoid|allow COLOR V1,V2,... UNTILDEPTH``; KataGo allows one ``allow`` and never both kinds."""
    color_token, moves_token, depth_token = _take(rest, kind), _take(rest, kind), _take(rest, kind)
    if not _is_color(color_token):
        raise GtpSyntaxError(f"invalid color '{color_token}' after '{kind}'")
    try:
        moves = tuple(parse_gtp(text, size) for text in moves_token.split(",") if text)
    except ValueError as error:
        raise GtpSyntaxError(f"invalid vertex list '{moves_token}' after '{kind}'") from error
    depth = _count(depth_token, "depth")
    if depth < 1:  # KataGo refuses it too: a restriction for no ply at all
        raise GtpSyntaxError(f"invalid depth '{depth_token}' after '{kind}' (at least 1)")
    restriction = MoveRestriction(parse_color(color_token), moves, depth)
    if kind == "allow":
        if request.allow or request.avoid:
            raise GtpSyntaxError("'allow' may be given once and not together with 'avoid'")
        return replace(request, allow=(restriction,))
    if request.allow:
        raise GtpSyntaxError("'avoid' cannot be combined with 'allow'")
    return replace(request, avoid=request.avoid + (restriction,))


def decimal(value: float) -> str:
    """A decimal that always contains a ``.`` and no exponent, at most 6 decimals: 1 -> ``1.0``.

    >>> decimal(0.5734114), decimal(1), decimal(-0.0), decimal(12.0119)
    ('0.573411', '1.0', '0.0', '12.0119')
    """
    text = f"{value:.6f}".rstrip("0")
    if text.endswith("."):
        text += "0"
    return "0.0" if text == "-0.0" else text


def ten_thousandths(value: float) -> str:
    """A [0, 1] value as Leela Zero's integer ten-thousandths: 0.52134 -> ``5213``."""
    return str(int(round(value * 10000)))


def _vertices(moves: Iterable[int], size: int) -> str:
    return " ".join(to_gtp(move, size) for move in moves)


def _numbers(values: Iterable[float]) -> str:
    return " ".join(decimal(float(value)) for value in values)


def _lz_segment(info: MoveInfo, order: int, size: int) -> str:
    pv = info.pv or (info.move,)
    return (
        f"info move {to_gtp(info.move, size)} visits {info.visits} winrate {ten_thousandths(info.winrate)} "
        f"prior {ten_thousandths(info.prior)} lcb {ten_thousandths(info.lcb)} order {order} "
        f"pv {_vertices(pv, size)}"
    )


def _kata_segment(info: MoveInfo, order: int, size: int, request: AnalyzeRequest) -> str:
    parts = [f"info move {to_gtp(info.move, size)} visits {info.visits}"]
    optional_before = (
        ("edgeVisits", info.edge_visits),
        ("utility", info.utility),
    )
    parts += [f"{key} {_field(value)}" for key, value in optional_before if value is not None]
    parts.append(f"winrate {decimal(info.winrate)}")
    parts += _score_fields(info.score_mean, info.score_stdev, info.score_lead)
    parts.append(f"prior {decimal(info.prior)} lcb {decimal(info.lcb)}")
    if info.utility_lcb is not None:
        parts.append(f"utilityLcb {decimal(info.utility_lcb)}")
    if info.weight is not None:
        parts.append(f"weight {decimal(info.weight)}")
    parts.append(f"order {order} pv {_vertices(info.pv or (info.move,), size)}")
    if request.pv_visits and info.pv_visits is not None:
        parts.append("pvVisits " + " ".join(str(v) for v in info.pv_visits))
    if request.pv_edge_visits and info.pv_edge_visits is not None:
        parts.append("pvEdgeVisits " + " ".join(str(v) for v in info.pv_edge_visits))
    if request.moves_ownership and info.ownership is not None:
        parts.append("movesOwnership " + _numbers(info.ownership))
    return " ".join(parts)


def _score_fields(mean: float | None, stdev: float | None, lead: float | None) -> list[str]:
    """kata-analyze's score fields as KataGo 1.17 writes them: ``scoreMean`` is the lead, for the tools that read
    it as one (Lizzie, older KaTrain), and the self-play mean follows as ``scoreSelfplay``. A player without a lead
    reports its mean as ``scoreMean``."""
    fields: list[str] = []
    shown_mean = lead if lead is not None else mean
    if shown_mean is not None:
        fields.append(f"scoreMean {decimal(shown_mean)}")
    if stdev is not None:
        fields.append(f"scoreStdev {decimal(stdev)}")
    if lead is not None:
        fields.append(f"scoreLead {decimal(lead)}")
        if mean is not None:
            fields.append(f"scoreSelfplay {decimal(mean)}")
    return fields


def _field(value: float | int) -> str:
    """Counts as integers (numpy's too), everything else as a decimal."""
    return str(int(value)) if isinstance(value, numbers.Integral) else decimal(float(value))


def format_snapshot(snapshot: AnalysisSnapshot, size: int, flavour: Flavour, request: AnalyzeRequest) -> str:
    """One output line for a snapshot (``""`` when there is nothing to report, which must not be written).

    ``maxmoves`` is applied here, so a player may report more candidates than asked.
    """
    moves = snapshot.moves[: request.max_moves] if request.max_moves > 0 else snapshot.moves
    if flavour == "lz":
        parts = [_lz_segment(info, order, size) for order, info in enumerate(moves)]
    else:
        parts = [_kata_segment(info, order, size, request) for order, info in enumerate(moves)]
        parts += _kata_extras(snapshot, request)
    return " ".join(parts)


def _kata_extras(snapshot: AnalysisSnapshot, request: AnalyzeRequest) -> list[str]:
    """The whole-position sections that follow the ``info`` segments in kata-analyze."""
    extras: list[str] = []
    root = snapshot.root
    if request.root_info and root is not None:
        fields = [f"rootInfo visits {root.visits}"]
        if root.utility is not None:
            fields.append(f"utility {decimal(root.utility)}")
        fields.append(f"winrate {decimal(root.winrate)}")
        fields += _score_fields(root.score_mean, root.score_stdev, root.score_lead)
        extras.append(" ".join(fields))
    if request.ownership and snapshot.ownership is not None:
        extras.append("ownership " + _numbers(snapshot.ownership))
    if request.ownership_stdev and snapshot.ownership_stdev is not None:
        extras.append("ownershipStdev " + _numbers(snapshot.ownership_stdev))
    return extras
