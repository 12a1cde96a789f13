"""``CachedEvaluator``, a cache of evaluations in front of any evaluator, and the rows it keeps them in.

A net's evaluation arrives as views into its batch's output arrays, which hold every head of every position in the
batch; kept as they are, a cache of 65,536 9x9 evaluations pinned about 3.4 kB each and grew a server bot's memory
for dozens of games. A row here holds the policy, the ownership and the nine scalar outputs of one evaluation, copied:
0.7 kB on 9x9, 2.9 kB on 19x19, and no Python object per entry for the garbage collector to walk. Rows are allocated
in chunks as the cache fills, up to its capacity, so that a large capacity (a KataGo config's
``nnCacheSizePowerOfTwo = 20``) costs memory only as far as it is used; ``net.cache_reserve`` takes the whole
capacity when a board size is first evaluated instead (a server bot's memory then stays flat).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from miai.nets import features
from miai.nets.evaluator import (Evaluation, Evaluator, Finish, RootEvaluator, same_advantage,
                                 set_playout_advantage, start_evaluation)

if TYPE_CHECKING:
    from miai.nets.protocol import NetPosition

CHUNK_ROWS = 2048
"""Rows allocated at a time."""

KEY_BYTES = 16
"""Bytes of a key's digest kept per slot (``features.input_key`` and ``situation_key`` are 16-byte digests)."""

_SCALARS = ("win", "loss", "no_result", "score_mean", "score_stdev", "lead", "var_time_left",
            "shortterm_winloss_error", "shortterm_score_error")


@dataclass(frozen=True)
class RowShape:
    """What a table's rows hold: the policy's length and type, and the ownership's (length 0: none)."""

    policy: int
    policy_dtype: np.dtype
    ownership: int
    ownership_dtype: np.dtype | None

    @staticmethod
    def of(evaluation: Evaluation) -> RowShape | None:
        """The shape of the row ``evaluation`` fits in, or None if it has more than rows hold (AMAF statistics)."""
        if evaluation.amaf is not None or evaluation.policy.ndim != 1:
            return None
        own = evaluation.ownership
        if own is not None and own.ndim != 1:
            return None
        return RowShape(len(evaluation.policy), evaluation.policy.dtype,
                        0 if own is None else len(own), None if own is None else own.dtype)


class EvaluationTable:
    """Evaluations of one ``RowShape`` in rows numbered from 0; the caller decides which row holds what."""

    def __init__(self, shape: RowShape) -> None:
        self.shape = shape
        self._policy: list[np.ndarray] = []
        self._ownership: list[np.ndarray] = []
        self._scalars: list[np.ndarray] = []
        self._free: list[int] = []
        self._rows = 0  # rows handed out at least once

    @property
    def allocated_rows(self) -> int:
        return len(self._scalars) * CHUNK_ROWS

    def nbytes(self) -> int:
        """Bytes held by the table's arrays."""
        return sum(a.nbytes for arrays in (self._policy, self._ownership, self._scalars) for a in arrays)

    def reserve(self, rows: int) -> None:
        """Allocate chunks for ``rows`` rows and write to them, so that the memory is resident now."""
        while self.allocated_rows < rows:
            self._add_chunk()
            for arrays in (self._policy, self._ownership, self._scalars):
                if arrays:
                    arrays[-1].fill(0)

    def add(self, evaluation: Evaluation) -> int:
        """Copy ``evaluation`` (of this table's shape) into a free row; its number."""
        row = self._free.pop() if self._free else self._new_row()
        self.put(row, evaluation)
        return row

    def put(self, row: int, evaluation: Evaluation) -> None:
        """Copy ``evaluation`` (of this table's shape) into ``row``, one handed out before, over what it held."""
        chunk, at = divmod(row, CHUNK_ROWS)
        self._policy[chunk][at] = evaluation.policy
        if self.shape.ownership:
            self._ownership[chunk][at] = evaluation.ownership
        self._scalars[chunk][at] = [getattr(evaluation, name) for name in _SCALARS]

    def get(self, row: int) -> Evaluation:
        """A copy of the evaluation in ``row``: the search may keep it after the row is reused."""
        chunk, at = divmod(row, CHUNK_ROWS)
        win, loss, no_result, score_mean, score_stdev, lead, var_time, wl_error, score_error = (
            self._scalars[chunk][at].tolist())
        ownership = self._ownership[chunk][at].copy() if self.shape.ownership else None
        return Evaluation(self._policy[chunk][at].copy(), win, loss, no_result, score_mean, score_stdev, lead,
                          ownership, var_time, wl_error, score_error)

    def release(self, row: int) -> None:
        """``row`` may be reused."""
        self._free.append(row)

    def _new_row(self) -> int:
        if self._rows == self.allocated_rows:
            self._add_chunk()
        self._rows += 1
        return self._rows - 1

    def _add_chunk(self) -> None:
        shape = self.shape
        self._policy.append(np.empty((CHUNK_ROWS, shape.policy), shape.policy_dtype))
        if shape.ownership:
            self._ownership.append(np.empty((CHUNK_ROWS, shape.ownership), shape.ownership_dtype))
        self._scalars.append(np.empty((CHUNK_ROWS, len(_SCALARS)), np.float64))


class _Store(Protocol):
    def add(self, evaluation: Evaluation) -> int: ...

    def put(self, row: int, evaluation: Evaluation) -> None: ...

    def get(self, row: int) -> Evaluation: ...

    def release(self, row: int) -> None: ...


class _ObjectStore:
    """Evaluations that do not fit in rows (with AMAF statistics), kept as they are."""

    def __init__(self) -> None:
        self._kept: dict[int, Evaluation] = {}
        self._next = 0

    def add(self, evaluation: Evaluation) -> int:
        self._next += 1
        self._kept[self._next] = evaluation
        return self._next

    def put(self, row: int, evaluation: Evaluation) -> None:
        self._kept[row] = evaluation

    def get(self, row: int) -> Evaluation:
        return self._kept[row]

    def release(self, row: int) -> None:
        del self._kept[row]


class CachedEvaluator:
    """A cache of evaluations in front of ``inner``, keyed by ``key`` (``features.CACHE_KEYS``): by default
    ``features.input_key``, so that positions reached by different move orders share an entry only when their
    net inputs agree; ``features.situation_key`` shares it whenever the situation agrees, as KataGo's NN cache.
    Duplicates within one batch are evaluated once.

    As KataGo's NN cache (``NNCacheTable``, cpp/neuralnet/nneval.cpp), the table has ``capacity`` slots and a key's
    slot is fixed by its digest: a new entry replaces whatever held its slot. The keys and the slots' rows live in
    numpy arrays, so a cache that fills and turns over for hundreds of games creates no Python object per entry: an
    LRU dictionary's keys and records, long-lived and scattered among the search's short-lived objects, kept
    Python's memory pools from ever being freed, and a server bot grew by 100 MB over 100 games (docs/gtp.md,
    "Soak"). Evaluations are copied into rows of an ``EvaluationTable`` per board size (a 19x19 entry with ownership
    takes 2.9 kB, a 9x9 one 0.7 kB): the default capacity of ``net.cache_size`` (65,536) holds at most 190 MB on
    19x19, taken as the cache fills.
    """

    def __init__(self, inner: Evaluator, capacity: int = 20_000,
                 key: Callable[[NetPosition], bytes] = features.input_key) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.inner = inner
        self.key = key
        self._advantage: tuple[int, float] = (0, 0.0)
        self.capacity = capacity
        self.max_batch = inner.max_batch
        self.hits = 0
        self.misses = 0
        self._empty_slots()
        # Guards the table (a GTP thread and a search thread may share the cache); the inner
        # evaluation runs outside it.
        self._lock = threading.Lock()

    def _empty_slots(self) -> None:
        """Every slot empty. ``np.zeros`` takes pages from the system as they are first written: a large capacity
        costs memory only as far as it is used."""
        self._keys = np.zeros((self.capacity, KEY_BYTES), np.uint8)  # the digest of each slot's key
        self._store_of = np.zeros(self.capacity, np.int16)  # 0: empty; else the slot's store in ``_stores``
        self._row = np.zeros(self.capacity, np.int32)  # the slot's row in its store
        self._objects = _ObjectStore()
        self._stores: list[_Store | None] = [None, self._objects]  # _stores[i]: the store of id i
        self._tables: dict[RowShape, int] = {}  # shape -> id of its table in ``_stores``

    def __len__(self) -> int:
        return int(np.count_nonzero(self._store_of))

    def clear(self) -> None:
        """Forget every entry (e.g. after komi or rules change the meaning of a position)."""
        with self._lock:
            self._empty_slots()

    def reserve(self, size: int) -> None:
        """See ``CachingEvaluator.reserve``: the table of ``size`` x ``size`` positions takes its rows for the whole
        capacity (a server bot's memory is then what it will stay at from its first move, as KataGo allocates its
        NN cache); the other sizes' tables and entries are dropped, since a bot plays one size at a time (the
        start-up size, 19x19, would otherwise hold 190 MB beside a 9x9 bot's 46)."""
        with self._lock:
            ids = [i for shape, i in self._tables.items() if shape.policy == size * size + 1]
            if not ids:
                return
            table = self._stores[ids[0]]
            assert isinstance(table, EvaluationTable)
            kept = self._store_of == ids[0]
            self._store_of[:] = 0
            self._store_of[kept] = 2
            self._objects = _ObjectStore()
            self._stores = [None, self._objects, table]
            self._tables = {table.shape: 2}
            table.reserve(self.capacity)

    def evaluate_root(self, state: NetPosition, conservative_pass: bool = False) -> Evaluation:
        """See ``RootEvaluator``: past the cache when the evaluator behind evaluates roots its own way (a root is
        evaluated once a search, and differently from the same position inside one), else through it."""
        if isinstance(self.inner, RootEvaluator):
            return self.inner.evaluate_root(state, conservative_pass)
        return self.evaluate([state])[0]

    def set_playout_advantage(self, color: int, value: float) -> None:
        """See ``AdvantageEvaluator``: passed on to the evaluator behind, and the entries forgotten when it changes
        (KataGo hashes the advantage into its NN cache key instead)."""
        if set_playout_advantage(self.inner, color, value) and not same_advantage((color, value), self._advantage):
            self.clear()
        self._advantage = (color, value)

    def evaluator_for(self, size: int) -> Evaluator:
        """See ``WrappingEvaluator``: the evaluator behind the cache, for every size."""
        return self.inner

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``. A position counts as a hit when its entry was cached at the
        start of the call (or it occurred earlier in the same batch); afterwards the entries are
        refreshed in batch order, so the call acts on the LRU order like one lookup per position."""
        keys, values, todo = self._look_up(states)
        if todo:
            values.update(zip(todo, self.inner.evaluate(list(todo.values()))))
        return self._keep(keys, values)

    def start(self, states: Sequence[NetPosition]) -> Finish:
        """See ``StagedEvaluator``: the lookups now, the misses started on the evaluator behind."""
        keys, values, todo = self._look_up(states)
        inner = start_evaluation(self.inner, list(todo.values())) if todo else None

        def finish(timeout: float | None = None) -> list[Evaluation]:
            if inner is not None:
                values.update(zip(todo, inner(timeout)))
            return self._keep(keys, values)

        return finish

    def _look_up(self, states: Sequence[NetPosition]) -> tuple[list[bytes], dict[bytes, Evaluation],
                                                              dict[bytes, NetPosition]]:
        """Each state's key, the evaluations found, and the states still to evaluate (one per key)."""
        keys = [_digest(self.key(s)) for s in states]
        values: dict[bytes, Evaluation] = {}
        todo: dict[bytes, NetPosition] = {}
        with self._lock:
            for key, state in zip(keys, states):
                if key in values or key in todo:
                    self.hits += 1
                    continue
                slot = self._slot_of(key)
                store = self._stores[self._store_of[slot]]
                if store is not None and self._holds(slot, key):
                    values[key] = store.get(int(self._row[slot]))
                    self.hits += 1
                else:
                    todo[key] = state
                    self.misses += 1
        return keys, values, todo

    def _keep(self, keys: list[bytes], values: dict[bytes, Evaluation]) -> list[Evaluation]:
        with self._lock:
            for key in dict.fromkeys(keys):
                self._store(key, values[key])
        return [values[key] for key in keys]

    def _slot_of(self, key: bytes) -> int:
        return int.from_bytes(key[:8], "little") % self.capacity

    def _holds(self, slot: int, key: bytes) -> bool:
        """Whether ``slot``'s digest is ``key`` (whether it holds an entry at all is ``_store_of``'s to say)."""
        return bool(self._keys[slot].tobytes() == key)

    def _store(self, key: bytes, evaluation: Evaluation) -> None:
        """``evaluation`` into ``key``'s slot, over the entry there (its row reused when it has the same shape)."""
        slot = self._slot_of(key)
        old_id = int(self._store_of[slot])
        if old_id and self._holds(slot, key):
            return
        new_id = self._store_id_for(evaluation)
        store = self._stores[new_id]
        assert store is not None
        if old_id == new_id:
            store.put(int(self._row[slot]), evaluation)
        else:
            if old_id:
                old = self._stores[old_id]
                assert old is not None
                old.release(int(self._row[slot]))
            self._row[slot] = store.add(evaluation)
        self._keys[slot] = np.frombuffer(key, np.uint8)
        self._store_of[slot] = new_id

    def _store_id_for(self, evaluation: Evaluation) -> int:
        shape = RowShape.of(evaluation)
        if shape is None:
            return 1
        table_id = self._tables.get(shape)
        if table_id is None:
            table_id = self._tables[shape] = len(self._stores)
            self._stores.append(EvaluationTable(shape))
        return table_id

    def nbytes(self) -> int:
        """Bytes held by the rows of the tables (allocated as the cache fills, never beyond its capacity)."""
        with self._lock:
            return sum(store.nbytes() for store in self._stores if isinstance(store, EvaluationTable))


def _digest(key: bytes) -> bytes:
    """``key`` as the ``KEY_BYTES``-byte digest a slot keeps (the cache's key functions give one already)."""
    return key if len(key) == KEY_BYTES else hashlib.blake2b(key, digest_size=KEY_BYTES).digest()
