"""The fallback tool's notes in the shared state (`ikigai_web.common.state`): read once when a call
starts, written once when it ends; what `web-tools doctor` shows and `web-tools forget` clears.

The rules are `ikigai_web.tools.fallback.memory`'s; this is the only module that reads the clock and
the store for them. The store is best effort: one that fails is an empty memory and a warning,
never a failed search.
"""

from __future__ import annotations

import socket
import time
from typing import TYPE_CHECKING, Any

from ikigai_web.tools.fallback import memory

if TYPE_CHECKING:
    from ikigai_web.common.state import Store
    from ikigai_web.tools.fallback.memory import Note


def now() -> float:
    """The wall clock: notes are compared across processes and machines."""
    return time.time()


def credential(provider: str) -> str:
    """A one-way hash of the provider's credentials in use, "" for none: a note about a key
    does not hold for another."""
    from ikigai_web.common import credentials
    from ikigai_web.common.errors import ToolError
    from ikigai_web.common.state import key_id
    from ikigai_web.search.registry import WITH_CREDENTIALS

    found = WITH_CREDENTIALS.get(provider)
    try:
        values = credentials.resolve(found) if found is not None else {}
    except ToolError:
        return ""  # missing: the provider fails at once with AUTH_MISSING, noted or not
    return key_id("\n".join(f"{k}={v}" for k, v in sorted(values.items()))) if values else ""


class Recall:
    """What one call knows of its providers, and learns from them."""

    def __init__(self, providers: list[str]) -> None:
        from ikigai_web.common.state import store

        self.store: Store = store()
        self.host = socket.gethostname()
        self.now = now()
        self.credentials = {name: credential(name) for name in providers}
        self.notes: dict[str, Note] = {}  # store key -> the note read
        for name in providers:
            for key in memory.keys(name, self.host):
                note = memory.parse(self.store.get(memory.SPACE, key))
                if note is not None and note.provider == name:
                    self.notes[key] = note
        self.lessons: dict[str, Note | None] = {}  # store key -> the note, None to delete

    def plan(self, names: list[str]) -> memory.Plan:
        standing = {}
        for name in names:
            held = [self.notes[k] for k in memory.keys(name, self.host) if k in self.notes]
            held = [n for n in held if memory.standing(n, self.credentials[name], self.now)]
            note = memory.binding(held)
            if note is not None:
                standing[name] = note
        return memory.plan(names, standing)

    def failed(self, provider: str, error: tuple[Any, str, int | None]) -> None:
        from ikigai_web.common.redact import redact

        code, message, wait = error  # the provider's words are kept: never a secret in them
        noted = memory.from_failure(provider, (code, redact(message), wait),
                                    self.credentials[provider], now())  # fmt: skip
        self._learn(noted)

    def stalled(self, provider: str, waited: float) -> None:
        self._learn(memory.stalled(provider, waited, now()))

    def answered(self, provider: str, count: int, query: str) -> None:
        from ikigai_web.common.state import key_id

        shared = memory.key(provider, memory.Kind.EMPTY, self.host)
        local = memory.key(provider, memory.Kind.STALLED, self.host)
        note = memory.from_answer(provider, count, key_id(query),
                                  self.notes.get(shared), now())  # fmt: skip
        self.lessons[local] = None  # it answered: not stalled, not blocked
        self.lessons[shared] = note

    def _learn(self, note: Note | None) -> None:
        if note is not None:
            self.lessons[memory.key(note.provider, note.kind, self.host)] = note

    def save(self) -> None:
        """Write what this call learned; a key whose note did not change is left alone."""
        for key, note in self.lessons.items():
            before = self.notes.get(key)
            if note is None and before is not None:
                self.store.delete(memory.SPACE, key)
            elif note is not None and note != before:
                self.store.put(memory.SPACE, key, note.as_json(), memory.ttl(note, now()))
        self.lessons.clear()

    def warnings(self) -> list[dict[str, str]]:
        return [dict(w) for w in self.store.warnings]


def remembered() -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Every live note, for doctor, and the store's warnings."""
    from ikigai_web.common.state import store

    shared, when = store(), now()
    rows = []
    for key, value in sorted(shared.scan(memory.SPACE), key=lambda entry: entry[0]):
        note = memory.parse(value)
        if note is not None and when < note.until:
            rows.append(_row(key, note, when))
    return rows, [dict(w) for w in shared.warnings]


def _row(key: str, note: Note, when: float) -> dict[str, Any]:
    host = key.partition("@")[2]
    if note.kind is memory.Kind.EMPTY and note.empties < memory.EMPTY_AFTER:
        effect = f"asked as usual ({note.empties} of {memory.EMPTY_AFTER} empty answers)"
    else:
        effect = "asked last" if note.kind not in memory.SKIPPED else "not asked"
        effect += " (if the key in use is the one noted)" if note.credential else ""
    return {
        "tool": f"web_search_{note.provider}",
        "kind": note.kind.value,
        "machine": host,
        "effect": effect,
        "reason": memory.reason(note, when),
        "until": note.until,
    }


def forget(providers: list[str]) -> tuple[int, list[dict[str, str]]]:
    """Forget the notes about `providers` (every note when none is named): how many there
    were, and the store's warnings."""
    from ikigai_web.common.state import store

    shared = store()
    if not providers:
        return shared.clear(memory.SPACE), [dict(w) for w in shared.warnings]
    names = {p.removeprefix("web_search_") for p in providers}
    gone = [key for key, _ in shared.scan(memory.SPACE) if key.partition("@")[0] in names]
    for key in gone:
        shared.delete(memory.SPACE, key)
    return len(gone), [dict(w) for w in shared.warnings]
