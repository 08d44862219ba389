"""Which tools an agent offers the model: per-agent filters, a token budget, deferred loading.

    "agents": {"triage": {"servers": ["github", "jira"],
                          "tools": {"allow": ["github__*"], "deny": ["github__delete_*"],
                                    "budget": 8000, "alwaysOn": ["github__get_issue"],
                                    "resultBudget": 25000, "ranker": "auto",
                                    "foundTools": "described"}}}

Filters are globs on the namespaced names (deny wins; no `allow` means all); a filtered-out
tool is neither offered nor callable. When the selected catalogue costs more than `budget`
tokens per model request, the agent switches to deferred loading: the model gets the
`alwaysOn` tools plus a `search_tools` host tool. `foundTools` says how the tools a search
finds reach the model: `"described"` (the default) puts their definitions in the search's
result and the model calls them through the `call_found_tool` host tool, so the tool list
stays the same all conversation long and the provider's prompt cache holds (docs/models.md,
"Prompt caching"); `"listed"` adds them to the tool list for the rounds that follow (the most
recently found first, within the budget), after the host tools. `ranker` picks how
the search ranks (`rankers.RANKERS`; "auto": BM25 and embeddings fused where the `search` extra
is installed, BM25 alone otherwise). `resultBudget` is the output budget of one tool result
(see `results`).
"""

from __future__ import annotations

import fnmatch
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .config import ConfigError
from .conversation import ToolSpec
from .rankers import RANKERS, make_ranker
from .results import DEFAULT_RESULT_TOKENS
from .search import Ranker, ToolDoc
from .tokens import SpecTokens

#: Catalogue tokens per model request above which tools are loaded on demand.
DEFAULT_BUDGET = 10_000
#: Tool definitions one `search_tools` call returns (and offers) at most.
DEFAULT_SEARCH_LIMIT = 5
#: How found tools reach the model (`foundTools`): in the search's result, or in the tool list.
FOUND_TOOLS = ("described", "listed")
_KEYS = frozenset(
    {"allow", "deny", "budget", "alwaysOn", "searchLimit", "resultBudget", "ranker", "foundTools"}
)


@dataclass(frozen=True, slots=True)
class ToolSettings:
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    budget: int = DEFAULT_BUDGET
    always_on: tuple[str, ...] = ()
    search_limit: int = DEFAULT_SEARCH_LIMIT
    #: Output budget of one tool result, in tokens (`resultBudget`).
    result_budget: int = DEFAULT_RESULT_TOKENS
    #: How `search_tools` ranks (one of `rankers.RANKERS`).
    ranker: str = "auto"
    #: How the tools a search finds reach the model (one of `FOUND_TOOLS`).
    found_tools: str = "described"

    def selects(self, name: str) -> bool:
        if any(fnmatch.fnmatchcase(name, p) for p in self.deny):
            return False
        return not self.allow or any(fnmatch.fnmatchcase(name, p) for p in self.allow)

    @classmethod
    def from_config(cls, value: Any, where: str = "tools") -> ToolSettings:
        """The `tools` object of an agent entry (None: the defaults)."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: must be an object with allow, deny, budget, alwaysOn")
        unknown = set(value) - _KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")

        def globs(key: str) -> tuple[str, ...]:
            items = value.get(key, [])
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise ConfigError(
                    f'{where}.{key}: must be a list of name patterns like "github__*"'
                )
            return tuple(items)

        def positive(key: str, default: int) -> int:
            number = value.get(key, default)
            if not isinstance(number, int) or isinstance(number, bool) or number < 1:
                raise ConfigError(f"{where}.{key}: must be a positive whole number")
            return number

        ranker = value.get("ranker", "auto")
        if ranker not in RANKERS:
            raise ConfigError(f"{where}.ranker: must be one of {', '.join(RANKERS)}")
        found = value.get("foundTools", "described")
        if found not in FOUND_TOOLS:
            raise ConfigError(f"{where}.foundTools: must be one of {', '.join(FOUND_TOOLS)}")
        return cls(
            globs("allow"),
            globs("deny"),
            positive("budget", DEFAULT_BUDGET),
            globs("alwaysOn"),
            positive("searchLimit", DEFAULT_SEARCH_LIMIT),
            positive("resultBudget", DEFAULT_RESULT_TOKENS),
            ranker,
            found,
        )


#: Indexed catalogues kept for reuse by other agents and conversations (the latest first out).
SHARED_INDEXES = 4
Indexed = tuple[tuple[str, int], ...]  # the catalogue's (key, hash of its ToolDoc)s


class _Shared:
    """The process's indexes of the default rankers, by ranker name and catalogue: agents and
    conversations over the same tools search one index instead of building their own. A ranker
    is not changed by searching it, so sharing one is safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: OrderedDict[tuple[str, Indexed], Ranker] = OrderedDict()

    def get(self, name: str, keys: Indexed, docs: list[ToolDoc]) -> Ranker:
        with self._lock:
            ranker = self._indexes.get((name, keys))
            if ranker is not None:
                self._indexes.move_to_end((name, keys))
                return ranker
        ranker = make_ranker(name)  # outside the lock: indexing can take seconds
        ranker.index(docs)
        with self._lock:
            self._indexes[(name, keys)] = ranker
            while len(self._indexes) > SHARED_INDEXES:
                self._indexes.popitem(last=False)
        return ranker

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()


SHARED = _Shared()


class ToolCatalog:
    """One agent's view of the fleet's tools, round by round."""

    def __init__(
        self,
        settings: ToolSettings,
        tokens: SpecTokens,
        ranker: Callable[[], Ranker] | None = None,
    ) -> None:
        self.settings = settings
        self.tokens = tokens
        self._make_ranker = ranker  # None: the shared index of `settings.ranker`
        self._ranker: Ranker | None = None
        self._indexed: Indexed = ()
        self.selected: dict[str, ToolSpec] = {}
        self.docs: dict[str, ToolDoc] = {}
        self.loaded: list[str] = []  # found by search_tools, most recent last
        self.deferred = False

    def update(self, specs: list[ToolSpec], docs: Mapping[str, ToolDoc]) -> None:
        """The fleet's current tools (after a refresh)."""
        self.selected = {s.name: s for s in specs if self.settings.selects(s.name)}
        self.docs = {k: docs[k] for k in self.selected if k in docs}
        self.deferred = self.tokens.total(list(self.selected.values())) > self.settings.budget
        self.loaded = [k for k in self.loaded if k in self.selected]

    @property
    def describes_found(self) -> bool:
        """Found tools are described in the search's result, called through `call_found_tool`."""
        return self.deferred and self.settings.found_tools == "described"

    def offer(self) -> list[ToolSpec]:
        """The tool definitions for the next model request (host tools not included)."""
        return self.fixed() + self.found()

    def fixed(self) -> list[ToolSpec]:
        """What every request offers: the whole selection, or when deferred the `alwaysOn`."""
        if not self.deferred:
            return list(self.selected.values())
        return [
            s
            for k, s in self.selected.items()
            if any(fnmatch.fnmatchcase(k, p) for p in self.settings.always_on)
        ]

    def found(self) -> list[ToolSpec]:
        """The found tools a `"listed"` catalogue offers now, the most recent last (none when
        they are described instead)."""
        if not self.deferred or self.describes_found:
            return []
        pinned = self.fixed()
        room = self.settings.budget - self.tokens.total(pinned)
        found: list[ToolSpec] = []
        for key in reversed(self.loaded):  # the most recently found first
            spec = self.selected[key]
            if spec in pinned:
                continue
            cost = self.tokens(spec)
            if cost > room and found:
                break
            room -= cost
            found.append(spec)
        return found[::-1]

    def callable(self, name: str) -> bool:
        return name in self.selected

    def search(self, query: str, limit: int | None = None) -> list[ToolSpec]:
        """The best matches for `query`; they are offered from the next round on."""
        limit = max(1, min(limit or self.settings.search_limit, self.settings.search_limit))
        ranker = self._index()
        hits = ranker.search(query, limit)
        for hit in reversed(hits):  # the best match ends most recent
            if hit.key in self.loaded:
                self.loaded.remove(hit.key)
            self.loaded.append(hit.key)
        return [self.selected[h.key] for h in hits]

    def _index(self) -> Ranker:
        keys = tuple((k, hash(d)) for k, d in self.docs.items())
        if self._ranker is None or keys != self._indexed:
            if self._make_ranker is None:
                self._ranker = SHARED.get(self.settings.ranker, keys, list(self.docs.values()))
            else:
                self._ranker = self._make_ranker()
                self._ranker.index(list(self.docs.values()))
            self._indexed = keys
        return self._ranker
