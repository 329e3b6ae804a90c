"""A small file cache for search results, best effort: any failure is a cache miss."""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from typing import Any

import orjson

from common.settings import cache_dir


def _path_for(namespace: str, key: object) -> Any:
    digest = hashlib.sha256(orjson.dumps(key, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return cache_dir() / namespace / f"{digest}.json"


def get(namespace: str, key: object, ttl: int) -> Any | None:
    if ttl <= 0:
        return None
    try:
        entry = orjson.loads(_path_for(namespace, key).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(entry, dict) or entry.get("stored", 0) + ttl < time.time():
        return None
    return entry.get("value")


def put(namespace: str, key: object, value: Any, ttl: int) -> None:
    if ttl <= 0:
        return
    path = _path_for(namespace, key)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(orjson.dumps({"stored": time.time(), "value": value}))
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
