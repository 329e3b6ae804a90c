"""Credential discovery and the one `config_required` event shape (protocol.md, section 3).

Each credential is a non-empty environment variable, else an entry of `credentials.json` in
the ikigai config directory, flat (keyed by the variable name) or nested
(`web_search.<provider>.<field>`).
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common import providers
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.redact import register_secret, register_url_login
from ikigai_web.common.settings import config_dir

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


Field = providers.Field  # what a declaration holds, as credentials.Field and .Provider
Provider = providers.Provider
MAX_FILE_BYTES = 64 * 1024  # credentials.json: a handful of keys
_PLACEHOLDER = {"api_key": "your-api-key", "engine_id": "your-engine-id"}


def credentials_path() -> Path:
    """The `credentials.json` this machine reads."""
    return config_dir() / "credentials.json"


def resolve(provider: Provider) -> dict[str, str]:
    """Every field of `provider`, or AUTH_MISSING with the `config_required` event."""
    found: dict[str, str] = {}
    problem = ""
    for field in provider.fields:
        value = _from_env(field)
        if value is None:
            file_values, problem = _read_file()
            value = _from_file(file_values, provider, field)
        if value is not None:
            found[field.name] = usable(field, value)
            if field.secret:
                _register(field, value)
    absent = [f for f in provider.fields if f.name not in found]
    if absent:
        raise missing(provider, problem, absent)
    return found


def several(value: str) -> list[str]:
    """The keys of an `api_key` value: one, or several separated by commas (no provider's
    key holds one), in order, each once."""
    return list(dict.fromkeys(k for k in (part.strip() for part in value.split(",")) if k))


def _register(field: Field, value: str) -> None:
    register_secret(value)
    if field.name == "api_key":
        for key in several(value):
            register_secret(key)


def optional(provider: Provider, field: Field) -> str | None:
    """A credential that may be absent (SearXNG's `auth`), looked up the same way."""
    value = _from_env(field)
    if value is None:
        value = _from_file(_read_file()[0], provider, field)
    if value is None:
        return None
    usable(field, value)
    if field.secret:
        register_secret(value)
    return value


# Control characters and lone surrogates (bytes of the environment that are not UTF-8) go
# into no header or URL; an API key is printable ASCII, since it travels in a header.
_UNSENDABLE = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
_NOT_A_KEY = re.compile("[^\x20-\x7e]")


def usable(field: Field, value: str, *, header: bool | None = None) -> str:
    """`value`, or INVALID_INPUT naming the variable (never the value) when no request
    could carry it; `header` (default: for API keys) asks for printable ASCII."""
    in_header = field.name == "api_key" if header is None else header
    if not (_NOT_A_KEY if in_header else _UNSENDABLE).search(value):
        return value
    what = "characters other than printable ASCII" if in_header else "control characters"
    if not in_header:
        what += " or bytes that are not UTF-8"
    raise ToolError(
        ErrorCode.INVALID_INPUT,
        f"{field.env[0]} (in the environment or {credentials_path()}) holds {what}, so no "
        "request can carry it; set it again, copied whole (its value is not shown here).",
    )


def _from_env(field: Field) -> str | None:
    return next(iter(_in_env(field)), None)


def _in_env(field: Field) -> list[str]:
    """Every value the environment gives `field`, its variables in order."""
    found = (os.environ.get(name, "").strip() for name in field.env)
    return [value for value in found if value.strip(" ,")]


def _from_file(values: dict[str, Any], provider: Provider, field: Field) -> str | None:
    return next(iter(_in_file(values, provider, field)), None)


def _in_file(values: dict[str, Any], provider: Provider, field: Field) -> list[str]:
    """Every value the file gives `field`, flat entries first, then the nested one."""
    candidates: list[object] = [values.get(name) for name in field.env]
    nested = values.get("web_search")
    if isinstance(nested, dict) and isinstance(nested.get(provider.key), dict):
        candidates.append(nested[provider.key].get(field.name))
    # Several keys may be a list: ["key1", "key2"] is read as "key1,key2".
    joined = [
        ",".join(v for v in c if isinstance(v, str)) if isinstance(c, list) else c
        for c in candidates
    ]
    return [value.strip() for value in joined if isinstance(value, str) and value.strip(" ,")]


def _read_file() -> tuple[dict[str, Any], str]:
    """The file's JSON object and, when it is unusable, why (never an exception)."""
    import json  # on a call's path only

    from ikigai_web.common.files import Unreadable, parsed, read_regular

    path = credentials_path()
    try:
        data = parsed(json.loads, read_regular(path, MAX_FILE_BYTES)[0])
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        return {}, f"{path} could not be read ({exc.strerror or exc})"
    except Unreadable as exc:  # a FIFO, a device, a link to /dev/zero, a 50 MB file
        return {}, f"{path} could not be read ({exc})"
    except ValueError as exc:  # not JSON, not UTF-8, or nested too deeply
        return {}, f"{path} is not valid JSON ({exc})"
    if not isinstance(data, dict):
        return {}, f"{path} must hold a JSON object"
    return data, ""


def missing(provider: Provider, problem: str = "", absent: list[Field] | None = None) -> ToolError:
    """AUTH_MISSING, telling exactly what is missing, what to set and where."""
    path = credentials_path()
    fields = absent or list(provider.fields)
    names = " and ".join(f.env[0] for f in fields)
    lacks = "" if len(fields) == len(provider.fields) else f" ({names} is not set)"
    message = (
        f"{provider.tool} needs {provider.label}{lacks}: set {names} in the environment or "
        f"add {'them' if len(fields) > 1 else 'it'} to {path}. {provider.how}"
    )
    if problem:
        message += f" Note: {problem}."
    return ToolError(ErrorCode.AUTH_MISSING, message, event=event(provider))


def event(
    provider: Provider,
    error_type: str | None = None,
    alternatives: list[str] | None = None,
    wait: int | None = None,
) -> dict[str, Any]:
    """The `config_required` event; `error_type` is `auth_invalid` or `rate_limit`."""
    data: dict[str, Any] = {
        "tool": provider.tool,
        "credentials": [f.name for f in provider.fields],
        "env": [f.env[0] for f in provider.fields],
        "signup_url": provider.signup_url,
    }
    if error_type is not None:
        data["error_type"] = error_type
    if alternatives is not None:
        data["alternative_tools"] = alternatives
    if error_type == "rate_limit":
        content = _rate_content(provider, alternatives or [], wait)
    else:
        content = _content(provider, error_type)
    return {"kind": "config_required", "content": content, "data": data}


def _rate_content(provider: Provider, others: list[str], wait: int | None) -> str:
    # The key works: no sign-up or export text, only when to retry and what works now.
    when = f"Try again in {wait} s." if wait is not None else "Try again later."
    text = f"⚠ Rate Limit Reached\n\n{provider.tool}: the provider's rate limit or quota is "
    text += f"used up. {when}"
    return text + (f"\nSearch tools ready now: {', '.join(others)}." if others else "")


def _content(provider: Provider, error_type: str | None) -> str:
    path = credentials_path()
    lead = {
        None: f"{provider.tool} needs {provider.label}.",
        "auth_invalid": f"{provider.tool}: the provider rejected the configured credential; "
        "replace it.",
    }[error_type]
    exports = "\n".join(
        f'  export {f.env[0]}="{_PLACEHOLDER.get(f.name, "https://searx.example.org")}"'
        for f in provider.fields
    )
    nested = {
        f.name: _PLACEHOLDER.get(f.name, "https://searx.example.org") for f in provider.fields
    }
    from ikigai_web.common.text import compact

    example = compact({"web_search": {provider.key: nested}}).decode()
    return (
        f"⚠ Configuration Required\n\n{lead}\n{provider.how}\n\n"
        f"Either set it in the environment:\n{exports}\n\n"
        f"or put it in {path}:\n  {example}"
    )


def configured(provider: Provider) -> bool:
    """Whether every field of `provider` resolves, without side effects on failure."""
    try:
        resolve(provider)
    except ToolError:
        return False
    return True


# --- where each credential comes from, for `web-tools doctor` (never the value) -------------


class Location(NamedTuple):
    """Where one field was found: an environment variable, or a key of `path`."""

    key: str  # the variable name, or the file's key (flat `BRAVE_API_KEY` or nested path)
    path: Path | None = None  # None: the environment

    def __str__(self) -> str:
        return f"the environment ({self.key})" if self.path is None else f"{self.path} ({self.key})"


def locate(provider: Provider) -> dict[str, Location | None]:
    """Field name -> where `resolve` would find it, in the same order; None when missing."""
    values = _read_file()[0]
    return {
        field.name: _env_location(field) or _file_location(values, provider, field)
        for field in provider.fields
    }


def file_problem() -> str:
    """Why the credentials file is unusable (unreadable, not JSON), or "" when it is fine."""
    return _read_file()[1]


def _env_location(field: Field) -> Location | None:
    for name in field.env:
        if os.environ.get(name, "").strip():
            return Location(name)
    return None


def _file_location(values: dict[str, Any], provider: Provider, field: Field) -> Location | None:
    path = credentials_path()
    for name in field.env:
        if _filled(values.get(name)):
            return Location(name, path)
    nested = values.get("web_search")
    section = nested.get(provider.key) if isinstance(nested, dict) else None
    if isinstance(section, dict) and _filled(section.get(field.name)):
        return Location(f"web_search.{provider.key}.{field.name}", path)
    return None


def _filled(value: object) -> bool:
    if isinstance(value, list):
        return any(_filled(v) for v in value)
    return isinstance(value, str) and bool(value.strip(" ,"))


def register_all(providers: Iterable[Provider], extra: tuple[Field, ...] = ()) -> None:
    """Register every credential of `providers` this machine holds for masking, wherever it
    is set: each variable of each field (an alias another one shadows too), each flat and
    nested entry of the file, and the login a URL carries (SEARXNG_URL, the shared state's
    URL). For a process that shows other programs' output (the MCP server, `web-tools
    doctor`): a third-party tool may print any of them. `extra` are optional fields
    (SearXNG's login), looked up for every provider."""
    values = _read_file()[0]
    for provider in providers:
        for field in (*provider.fields, *extra):
            for value in _in_env(field) + _in_file(values, provider, field):
                if field.secret:
                    _register(field, value)
                register_url_login(value)
    from ikigai_web.common.settings import load

    with contextlib.suppress(ToolError):  # a bad value is doctor's to report
        register_url_login(load().redis_url)  # the shared state's password
