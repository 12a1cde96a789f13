"""Playouts: one descent from the root to where the search learns something, on a scratch state.

A playout chooses an edge at each node (miai.engine.core.selection), plays it on its scratch state (one per slot of the
batch, copied from the root once per root, never one per node) and ends in one of:

- a new leaf: queued for the evaluator with virtual loss on its path (:class:`Leaf`); when the batch comes back the
  leaf is expanded (miai.engine.core.expansion) and its value backed up (miai.engine.core.backup);
- a terminal node (two passes): its exact score counts once more;
- a child that already has more visits than the edge leading to it (a transposition): by
  ``search.child_visits_exceed_edge`` stop there and only add an edge visit (KataGo's default), always descend, or
  descend with a probability (:class:`ExceedRule`);
- a child already on the current path (a cycle): add an edge visit and stop.

A scratch state is not taken back to the root after its playout: it stays where the playout ended (its
:class:`Line`), and the slot's next playout takes back only the moves past the prefix the two share (a third of the
moves on 9x9 and half on 19x19 in ``miai bench search``), playing the rest as before. Every result is as if each
playout had started at the root: the state at a depth is the same whatever it went through to get there.
:meth:`Playouts.settle` takes every state back to the root when the run ends.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Final, cast

from miai.engine.core.backup import Backup, add_amaf, release
from miai.engine.core.config import SearchConfig
from miai.engine.core.expansion import Expansion
from miai.engine.core.graph import Edge, Node, link
from miai.engine.core.movechoice import MoveFilter, block_root_moves
from miai.engine.core.searchstate import GoPosition, SearchPosition
from miai.engine.core.searchstats import Counters
from miai.engine.core.selection import SelectionRule, Selector, passing_hack_edge
from miai.engine.core.snapshot import mover
from miai.go.coords import PASS

if TYPE_CHECKING:
    from miai.engine.core.run import Run
    from miai.nets.protocol import Evaluation

__all__ = ["Playouts", "Leaf", "Line", "ExceedRule", "COLLISION"]


class ExceedRule(Enum):
    """What a playout does at a child that has more visits than the edge it came by (a transposition;
    ``search.child_visits_exceed_edge``): stop there and only add an edge visit (KataGo's default), always descend,
    or descend with ``search.leak_probability``."""

    STOP = "stop"
    CONTINUE = "continue"
    LEAKY = "leaky"


_STOP: Final = ExceedRule.STOP  # module globals: read per descent step
_CONTINUE: Final = ExceedRule.CONTINUE


@dataclass(slots=True)
class Leaf:
    """A playout waiting for its leaf's evaluation: the path (with virtual loss) and the scratch state at the leaf."""

    path: list[Node]
    edges: list[Edge]
    state: SearchPosition  # the game's scratch state (the evaluator reads it)
    cut: int = -1  # edges[cut] was taken without an edge visit (passing hack): back up only the edges below it


class Line:
    """Where a scratch state stands below the run's root: the edges played on it, in order (the last playout's, up to
    where it ended), and for each of their depths whether a pass there would end the game (what the passing hack
    reads, known without taking the state back)."""

    __slots__ = ("state", "edges", "pass_ends")

    def __init__(self, state: SearchPosition) -> None:
        self.state = state
        self.edges: list[Edge] = []
        self.pass_ends: list[bool] = []

    def rewind(self, depth: int) -> None:
        """Take the state back to ``depth`` moves below the root."""
        state = self.state
        for _ in range(len(self.edges) - depth):
            state.pop()
        del self.edges[depth:]
        del self.pass_ends[depth:]


class _Collision(Enum):
    COLLISION = 0


COLLISION: Final = _Collision.COLLISION  # a playout that hit a leaf already waiting in this batch


class Playouts:
    """The search's playouts under one config: ``collect`` a run's batches and ``apply`` their evaluations; the run
    (miai.engine.core.run.Run) says where they start, which root moves they may take, whether superko can make a known
    edge illegal on another path, and where its transposition statistics go. Shares the search's graph (through
    ``expansion``), counters and random source."""

    def __init__(self, config: SearchConfig, selector: Selector, expansion: Expansion, backup: Backup,
                 rng: random.Random, count: Counters, keep_parents: bool) -> None:
        self.config = config
        self.selector = selector
        self.expansion = expansion
        self.backup = backup
        self.rng = rng
        self.count = count
        self.keep_parents = keep_parents  # parent links, for search.stale_update other than "path"
        self.exceed = ExceedRule(config.child_visits_exceed_edge)
        self.hacks = config.more_passing_hacks and selector.rule is SelectionRule.PUCT  # (KataGo's PUCT only)
        self._met = False  # the current playout met a transposition
        self._lines: dict[int, Line] = {}  # by id(state): where each scratch state of the run stands (it holds the
        # state, so an id is not reused while listed)

    def collect(self, run: Run, states: list[SearchPosition]) -> tuple[int, list[Leaf]]:
        """Run one playout of ``run`` per scratch state; returns (playouts finished without the net, leaves to
        evaluate)."""
        done = 0
        leaves: list[Leaf] = []
        trans = run.trans
        lines = self._lines
        for state in states:
            self._met = False
            line = lines.get(id(state))
            if line is None:
                line = lines[id(state)] = Line(state)
            result = self._descend(run, line)
            if result is not COLLISION:
                trans.playouts += 1
                trans.met += self._met
            if result is None:
                done += 1
            elif result is COLLISION:
                self.count.collisions += 1
                break  # the rest of the batch would mostly collide again; evaluate what we have
            else:
                leaves.append(result)
        self.count.playouts += done + len(leaves)
        return done, leaves

    def apply(self, run: Run, leaves: list[Leaf], evaluations: list[Evaluation]) -> None:
        """Expand each evaluated leaf and back its value up (its scratch state stays at the leaf: :class:`Line`)."""
        self.count.net_evals += len(leaves)
        self.count.eval_batches += 1
        rave = self.config.rave_equivalence > 0
        for leaf, evaluation in zip(leaves, evaluations):
            node = leaf.path[-1]
            self.expansion.expand(node, leaf.state, evaluation, run.facts.valuation)
            node.pending = False
            if evaluation.amaf is not None and rave:
                add_amaf(leaf.path, leaf.edges, evaluation.amaf)
            self._finish(run, leaf.path, leaf.edges, leaf.cut)

    def abort(self, leaves: list[Leaf]) -> None:
        """Undo the virtual loss of playouts whose evaluation failed, so the graph stays sound (their moves go with
        :meth:`settle`)."""
        for leaf in leaves:
            leaf.path[-1].pending = False
            release(leaf.path)

    def settle(self) -> None:
        """Take every scratch state of the run back to the root (the end of a run: the next root is set up, and the
        states moved on, from there)."""
        for line in self._lines.values():
            line.rewind(0)
        self._lines.clear()

    def abandon(self, leaves: list[Leaf]) -> None:
        """Take back the virtual loss of playouts whose evaluation will never be read (a batch given up at the
        deadline), leaving their scratch states alone: the net may still be reading them, and they are dropped."""
        self.count.playouts -= len(leaves)
        for leaf in leaves:
            self._lines.pop(id(leaf.state), None)  # (dropped as it stands: not taken back)
            leaf.path[-1].pending = False
            for node in leaf.path:
                node.virtual_loss -= 1

    def _finish(self, run: Run, path: list[Node], edges: list[Edge], cut: int = -1) -> None:
        """Back up a playout that needs no evaluation (the edges below ``cut``, see :class:`Leaf`)."""
        run.trans.refreshed += self.backup.finish(path, edges, cut)

    def _descend(self, run: Run, line: Line) -> Leaf | _Collision | None:
        """One playout from the root on ``line``'s state. Returns a Leaf to evaluate, COLLISION, or None if
        finished.

        While the playout follows the line (``kept[depth] is edge``: the state has played this very edge from the
        same root by the same edges), the move is not played again and the legality test it passed is not repeated;
        where the playout leaves the line, the state is taken back to the playout's depth first."""
        state = line.state
        kept = line.edges
        pass_ends = line.pass_ends
        exceed = self.exceed
        choose = self.selector.choose
        hacks = self.hacks and run.permitted is None and run.avoid_until is None
        avoid_until = run.avoid_until
        count = self.count
        node = root = run.root
        superko = run.superko
        path = [node]
        edges: list[Edge] = []
        on_path = {id(node)}
        node.virtual_loss += 1
        cut = -1
        depth = 0  # len(edges); the state stands at len(kept) >= depth, and kept[:depth] == edges
        ends = False
        while True:
            if node.terminal:
                node.visits += 1  # each visit of a terminal node adds its exact result once more
                node.weight += 1.0
                node.weight_sq += 1.0
                count.terminal_visits += 1
                self._finish(run, path, edges, cut)
                return None
            if not node.expanded:
                if node.pending:
                    release(path)
                    return COLLISION
                node.pending = True
                if depth < len(kept):
                    line.rewind(depth)  # the evaluator reads the state at the leaf
                return Leaf(path, edges, state, cut)
            weightless = False
            if avoid_until is not None and 0 < depth < avoid_until.depth:
                edge = self._choose_avoiding(node, avoid_until.permitted(mover(node), depth))
            else:
                edge = choose(node, run if node is root else None)
            if edge is not None and hacks:
                ends = pass_ends[depth] if depth < len(kept) else state.pass_ends_game()
                forced = passing_hack_edge(node, ends, edge)
                if forced is not None:
                    edge, weightless, cut = forced, True, depth
                    count.passing_hack_playouts += 1
                    run.hack_playouts += 1
            if edge is None:  # no playable move (impossible in Go, where pass is always an edge)
                return self._dead_end(run, path, edges, cut)
            child = edge.child
            if depth < len(kept) and kept[depth] is edge:
                assert child is not None  # (made when the edge was first played)
                if child.in_edges > 1:
                    self._met = True
            else:
                if depth < len(kept):
                    line.rewind(depth)
                move = edge.move
                if move != PASS and (child is None or superko) and not state.is_legal(move):
                    edge.illegal = True  # e.g. superko on this path: skip the edge from now on
                    count.illegal_edges += 1
                    continue
                if child is None:
                    child = self._make_child(run, node, edge, state, len(path))
                else:
                    state.play_unchecked(move)
                    if child.in_edges > 1:
                        self._met = True
                kept.append(edge)
                pass_ends.append(ends)
            depth += 1
            if id(child) in on_path:
                edges.append(edge)
                count.cycle_stops += 1
                self._finish(run, path, edges, cut)
                return None
            # A visit without an edge visit goes on down: it is meant to add child visits beyond the edge's.
            if child.visits > edge.visits and exceed is not _CONTINUE and not child.terminal and not weightless:
                if exceed is _STOP or self.rng.random() >= self.config.leak_probability:
                    edges.append(edge)
                    count.stopped_early += 1
                    self._finish(run, path, edges, cut)
                    return None
                count.leaky_descents += 1
            child.virtual_loss += 1
            path.append(child)
            edges.append(edge)
            on_path.add(id(child))
            node = child

    def _choose_avoiding(self, node: Node, permitted: MoveFilter | None) -> Edge | None:
        """The choice at a node below the root where the analysis's avoid/allow keep moves out (KataGo's
        avoidMoveUntilByLoc): those moves are blocked for this one choice, as the root's are for the run."""
        blocked = block_root_moves(node, permitted)
        try:
            return self.selector.choose(node, None)
        finally:
            for edge in blocked:
                edge.illegal = False

    def _dead_end(self, run: Run, path: list[Node], edges: list[Edge], cut: int) -> _Collision | None:
        """A node without a playable move: at the root the playout cannot go anywhere; below it, as the stop rule,
        the edge into the node counts once more with the node's current value."""
        if path[-1] is run.root:
            release(path)
            return COLLISION
        path.pop().virtual_loss -= 1
        self._finish(run, path, edges, cut)
        return None

    def _make_child(self, run: Run, node: Node, edge: Edge, state: SearchPosition, depth: int) -> Node:
        """Play ``edge``'s move on ``state`` and give the edge its child node (found in the table, or new)."""
        move = edge.move
        expansion = self.expansion
        bias_key = expansion.bias_key(state, move, run.go)
        # KataGo's forceNonTerminal: a pass that ends the game is searched on, not scored, from the root under
        # conservativePass and anywhere as a friendly pass (tested before the move, as KataGo does).
        searched_on = False
        if move == PASS and run.go:
            go = cast(GoPosition, state)
            searched_on = ((node is run.root and self.config.conservative_pass and go.pass_ends_game_outright())
                           or go.pass_is_friendly())
        state.play_unchecked(move)
        child, found = expansion.child_for(state, bias_key, searched_on, run.facts.valuation)
        if found:
            self.count.transposition_hits += 1
            self._met = True
            depths = run.trans.hit_depths
            depths[depth] = depths.get(depth, 0) + 1
        else:
            self.count.nodes_created += 1
        edge.child = child
        link(node, child, self.keep_parents)
        node.visited_mass += edge.prior  # (KataGo: the policy of every child made so far, in flight too)
        return child
