"""The JSON manifest that goes next to every exported net (``<net>.json`` beside ``<net>.onnx``).

It records what the net is (architecture, parameter count, file size and sha256), what it was
trained on (positions per board size, teacher), how (training config, steps, wall time, final
losses) and the command that reproduces it. Measured strength and speed figures are added under
``measured`` once they exist. ``verify_manifest`` checks a manifest against its file (numpy-free,
torch-free: the tests and the engine may call it).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from miai.nets.train import TrainError

__all__ = ["write_manifest", "verify_manifest", "manifest_path", "origin_of", "record_match", "portable_command",
           "TEACHER"]

_LOSS_KEYS = ("total", "policy", "value", "score", "ownership")
TEACHER = "g170-b6c96-s175395328-d26788732.bin.gz (KataGo, MIT licence)"


def manifest_path(onnx_path: Path) -> Path:
    """``foo.onnx`` -> ``foo.json``."""
    return Path(onnx_path).with_suffix(".json")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _last_log(run_directory: Path) -> dict[str, Any]:
    log = run_directory / "log.jsonl"
    if not log.is_file():
        return {}
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return json.loads(lines[-1]) if lines else {}


def _trained_sizes(counts: dict[int, int], train_config: dict[str, Any]) -> dict[str, int]:
    """Positions per board size the run drew batches from (the data set may hold other sizes too)."""
    weights = train_config.get("size_weights") or {}
    return {str(k): v for k, v in counts.items() if not weights or float(weights.get(str(k), 0.0)) > 0.0}


def write_manifest(
    checkpoint: Path, onnx_path: Path, name: str, command: str = "", board_sizes: tuple[int, int] | None = None
) -> Path:
    """Export ``checkpoint`` to ``onnx_path`` and write its manifest; returns the manifest path.

    ``board_sizes`` (lo, hi), when given, are the sizes the net plays as a bundled net (``miai.nets.bundled``).

    Measured figures of an existing manifest for the same file name are kept only when the new
    file has the same sha256 (otherwise they described another net).
    """
    from miai.nets.train.export import export_onnx
    from miai.nets.train.trainer import load_checkpoint

    net, data = load_checkpoint(checkpoint)
    sha = export_onnx(net, onnx_path, name, {"miai_trained_by": "miai train", "miai_teacher": TEACHER})
    target = manifest_path(onnx_path)
    previous: dict[str, Any] = {}
    if target.is_file():
        previous = json.loads(target.read_text(encoding="utf-8"))
    last = _last_log(Path(checkpoint).parent)
    manifest: dict[str, Any] = {
        "name": name,
        "file": Path(onnx_path).name,
        "sha256": sha,
        "bytes": Path(onnx_path).stat().st_size,
        "format": "ONNX, KataGo model version 8 layout (converter interface, dynamic board size)",
        "architecture": {
            **data["model_config"],
            "parameters": sum(p.numel() for p in net.parameters()),
            "activation": "relu",
            "norm": "batch norm (running statistics)",
        },
        "teacher": TEACHER,
        "data": {"positions_per_size": _trained_sizes(data["data"], data["train_config"])},
        "training": {
            **data["train_config"],
            "steps_done": data["step"],
            "wall_seconds": round(float(data["elapsed"]), 1),
            "final_losses": {k: round(v, 4) for k, v in last.items() if k in _LOSS_KEYS},
        },
        "exported": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command,
        "measured": previous.get("measured", {}) if previous.get("sha256") == sha else {},
    }
    if data.get("origin"):
        manifest["started_from"] = data["origin"]
    if board_sizes is not None:
        manifest["board_sizes"] = list(board_sizes)
    target.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return target


def origin_of(onnx_path: Path) -> dict[str, Any]:
    """What a run that starts from ``onnx_path`` records about it: the file's name and sha256, and
    from its manifest (when one matches the file) the name, data, steps, command and its own origin."""
    try:
        manifest = verify_manifest(onnx_path)  # reads the file's sha256 once and checks the manifest against it
    except TrainError:
        return {"file": Path(onnx_path).name, "sha256": _sha256(Path(onnx_path))}
    origin: dict[str, Any] = {"file": Path(onnx_path).name, "sha256": manifest["sha256"]}
    training = manifest.get("training", {})
    origin.update({
        "name": manifest.get("name"),
        "data": manifest.get("data"),
        "steps": training.get("steps_done"),
        "wall_seconds": training.get("wall_seconds"),
        "command": manifest.get("command"),
    })
    if manifest.get("started_from"):
        origin["started_from"] = manifest["started_from"]
    return origin


def verify_manifest(onnx_path: Path) -> dict[str, Any]:
    """The manifest of ``onnx_path`` after checking that it names the file and its sha256.

    Raises:
        TrainError: no manifest, or it does not match the file.
    """
    target = manifest_path(onnx_path)
    if not target.is_file():
        raise TrainError(f"{onnx_path} has no manifest {target.name}")
    manifest: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
    if manifest.get("file") != Path(onnx_path).name:
        raise TrainError(f"{target.name} describes {manifest.get('file')!r}, not {Path(onnx_path).name!r}")
    actual = _sha256(Path(onnx_path))
    if manifest.get("sha256") != actual:
        raise TrainError(f"{target.name}: sha256 {manifest.get('sha256')} does not match the file ({actual})")
    return manifest


def portable_command(command: str) -> str:
    """``command`` with every absolute or home path (``/x/y/net.onnx``, ``~/net.onnx``, ``--model=/x/net.onnx``)
    cut to its file name: a manifest ships with the net, and the directories of the machine that measured it mean
    nothing elsewhere (the file names say which nets played). Commands without such paths come back unchanged."""
    try:
        tokens = shlex.split(command)
    except ValueError:  # unbalanced quotes: leave the text as the user typed it
        return command
    portable = [_portable_token(token) for token in tokens]
    return command if portable == tokens else shlex.join(portable)


def _portable_token(token: str) -> str:
    """One argument: ``/x/net.onnx`` -> ``net.onnx``, ``KEY=/x/net.onnx`` -> ``KEY=net.onnx``, others as they are."""
    key, value = "", token
    if "=" in token and not token.startswith(("/", "~")):
        key, _, value = token.partition("=")
    if not value.startswith(("/", "~")) or value.rstrip("/") in ("", "~"):
        return token
    return f"{key}={Path(value).name}" if key else Path(value).name


def record_match(onnx_path: Path, key: str, entry: dict[str, Any], note: str = "",
                 merge: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Store a match result (``miai.match.summary.result_entry``) as the manifest's ``measured.matches[key]``,
    its engine commands made portable (``portable_command``). With ``merge`` (``miai.match.summary.combine_entries``:
    a schedule resumed in a later session), the result joins the one already stored under ``key``:
    ``merge(stored, new)`` is stored instead, both with portable commands.

    Returns the stored entry. Raises ``TrainError`` when the manifest does not match its net, or ``merge`` is given
    and nothing is stored under ``key``; lets ``merge``'s errors through with the manifest unchanged."""
    manifest = verify_manifest(onnx_path)
    entry = dict(entry)
    for side in ("A", "B"):
        if isinstance(entry.get(side), str):
            entry[side] = portable_command(entry[side])
    matches = manifest.setdefault("measured", {}).setdefault("matches", {})
    if merge is not None:
        if not isinstance(matches.get(key), dict):
            raise TrainError(f"{manifest_path(onnx_path)} holds no match {key!r}")
        entry = merge(matches[key], entry)
    if note:
        entry["note"] = note
    matches[key] = entry
    manifest_path(onnx_path).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return entry
