"""`web-tools`: serve the ikigai tools over MCP, list them, and check their set-up."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ikigai_web.common import __version__
from ikigai_web.host import discovery

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

DESCRIPTION = """\
The host side of ikigai-web-tools. It finds ikigai tools (executables named *-tool) the way an
ikigai host does: this installation's tools, then $IKIGAI_LIBEXEC_DIR, ~/.ikigai/tools/ and
./.ikigai/tools/, a later directory overriding an earlier one. Third-party tools count too.
A project's own tools (./.ikigai/tools/) run only once you trust the project (web-tools trust).
"""
# What `web-tools mcp` imports of the MCP SDK, begun as it starts (see _importing).
SDK_MODULES = ("mcp.types", "mcp.server.lowlevel", "mcp.server.stdio", "mcp.shared.exceptions")
EXAMPLES = """\
examples:
  web-tools mcp                                serve every tool that can work to an MCP client
  web-tools mcp --all                          also the providers not set up (no key yet)
  web-tools mcp --only web_search_brave,web_fetch
  web-tools list                               which tools, from where, and what was skipped
  web-tools doctor --online                    check credentials and settings, one real call each
  web-tools trust                              let this project's .ikigai/tools/ run here
  web-tools clear-cache                        forget every cached answer and page
  web-tools forget                             forget which search providers could not answer
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] | None = args.command
    if command is None:
        parser().print_help(sys.stderr)
        return 2
    try:
        return command(args)
    except KeyboardInterrupt:
        return 130


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="web-tools",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("-V", "--version", action="version", version=f"%(prog)s {__version__}")
    top.set_defaults(command=None)
    commands = top.add_subparsers(title="commands", metavar="COMMAND")
    _mcp_parser(commands)
    _list_parser(commands)
    _doctor_parser(commands)
    _trust_parsers(commands)
    clearing = commands.add_parser(
        "clear-cache",
        help="remove every cached search answer and fetched page",
        description="Remove the cache of search answers and fetched pages (its location is in "
        "`web-tools doctor`). Tools running meanwhile start a new one.",
    )
    clearing.set_defaults(command=run_clear_cache)
    _forget_parser(commands)
    return top


def _forget_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    forget = commands.add_parser(
        "forget",
        help="forget which search providers could not answer, and release the keys held",
        description="web_search_auto remembers a provider that could not answer (rate "
        "limited, key rejected, blocking this address, no answer in time, nothing found "
        "again and again) and asks it again only when that is due; and each search tool "
        "holds a key its provider said was used up until it is due, and sets aside a key it "
        "rejected for a while. `web-tools doctor` shows both. Forget them all, or those of "
        "the providers named, so that the next search asks them again at once (after a new "
        "key or a bigger plan, say).",
    )
    forget.add_argument("providers", nargs="*", metavar="PROVIDER",
                        help="brave, web_search_brave, ... (default: every provider)")  # fmt: skip
    forget.set_defaults(command=run_forget)


def _mcp_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="serve the tools as an MCP server over stdio",
        description="Serve the discovered tools as MCP tools over stdin/stdout, for an MCP "
        "client (Claude Desktop, an IDE, an agent framework): every tool that can work, that "
        "is, all but this installation's providers that are not set up (no key or URL; "
        "`web-tools doctor` says how; --all serves them too). Each tool's description and "
        "parameters become the MCP tool's; a failed call is an error result that says what "
        "to fix. Tools are discovered once, at start-up: restart after setting up a provider.",
        epilog="an MCP client's configuration:\n"
        '  {"mcpServers": {"web-tools": {"command": "/path/to/web-tools", "args": ["mcp"]}}}',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for flag, what in (
        ("--only", "serve only these tools (web_search_brave, or its file name)"),
        ("--exclude", "serve every tool but these"),
    ):
        mcp.add_argument(flag, type=_names, action="extend", default=[], metavar="NAME,...",
                         help=what)  # fmt: skip
    mcp.add_argument(
        "--all",
        action="store_true",
        help="also serve this installation's tools that are not set up (no key, no URL): "
        "by default they are left out, as their every call would fail",
    )
    mcp.add_argument(
        "--timeout",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="stop a tool that has not answered after this long (default: 30, as the ikigai host)",
    )
    mcp.add_argument(
        "--no-warm",
        dest="warm",
        action="store_false",
        help="run this installation's own tools as programs too, a new process per call, as "
        "third-party tools run (slower; by default a warm worker with their code loaded "
        "forks a process for each call)",
    )
    mcp.add_argument(
        "--no-output-schemas",
        dest="output_schemas",
        action="store_false",
        help="list this installation's tools without their output schemas (the JSON Schema of "
        "their answers): a client that passes the tool list to its model pays for them in "
        "every request, some 12 KB more for the three tools a machine without keys serves "
        "(docs/mcp.md); answers still carry their JSON as structuredContent",
    )
    mcp.set_defaults(command=run_mcp)


def _list_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = commands.add_parser(
        "list",
        help="list the tools found, where from, and why any is skipped",
        description="One line per tool: its name, where it came from (installation, system, "
        "user, project) and its path; skipped and overridden executables say why.",
    )
    listing.add_argument("--json", action="store_true", help="print JSON for scripts")
    listing.set_defaults(command=run_list)


def _doctor_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="check every tool's credentials, the settings and the cache",
        description="For every tool: whether its credentials are set and where each was found "
        "(never the value). Also the credentials file's permissions, the settings in effect, "
        "the cache location and the tool directories. Exits 1 when any tool is unusable.",
    )
    doctor.add_argument(
        "--online",
        action="store_true",
        help="also make one cheap search per configured provider, through its tool",
    )
    doctor.add_argument("--json", action="store_true", help="print JSON for scripts")
    doctor.set_defaults(command=run_doctor)


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:  # `--only ""` must not serve everything
        raise argparse.ArgumentTypeError(f"{text!r} names no tool (NAME,NAME,...)")
    return names


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def _trust_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, run, what in (
        ("trust", run_trust, "let this project's own tools (.ikigai/tools/) run"),
        ("untrust", run_untrust, "stop running this project's own tools"),
    ):
        command = commands.add_parser(
            name,
            help=f"{what} in list, doctor and mcp",
            description=f"{what[0].upper()}{what[1:]} when web-tools lists, checks or serves "
            "tools. A cloned repository's tools never run before its directory is trusted.",
        )
        command.add_argument("directory", nargs="?", default=".", type=Path,
                             help="the project's directory (default: this one)")  # fmt: skip
        command.set_defaults(command=run)


def run_trust(args: argparse.Namespace) -> int:
    return _change_trust(args, "trust", "trusted")


def run_untrust(args: argparse.Namespace) -> int:
    return _change_trust(args, "untrust", "no longer trusted:")


def _change_trust(args: argparse.Namespace, command: str, done: str) -> int:
    from ikigai_web.host import trust

    change = trust.trust if command == "trust" else trust.untrust
    try:
        path = change(args.directory)
    except trust.Unusable as exc:
        sys.stderr.write(f"web-tools {command}: {exc}\n")
        return 1
    sys.stdout.write(f"{done} {args.directory.resolve()} (in {path})\n")
    return 0


def run_mcp(args: argparse.Namespace) -> int:
    from ikigai_web.host.listing import serving

    sdk = _importing(SDK_MODULES)
    found = discovery.discover()
    tools, unknown = discovery.choose(found, args.only, args.exclude)
    # Tools named with --only are served as asked; `web-tools list` reports the same rule.
    chosen = serving(tools, everything=args.all or bool(args.only))
    for name, why in chosen.not_set_up.items():
        sys.stderr.write(f"web-tools mcp: not serving {name}, not set up: {why} "
                         "(web-tools doctor says how; --all serves it anyway)\n")  # fmt: skip
    # A name MCP refuses is the server's to leave out, and to say so (mcp_server.servable).
    tools = {name: tool for name, tool in tools.items() if name not in chosen.not_set_up}
    for tool in found.skipped:
        sys.stderr.write(f"web-tools mcp: not serving {tool.path}: {tool.reason}\n")
    for name in unknown:
        sys.stderr.write(f"web-tools mcp: {_not_found(name, found)}\n")
    if args.only and not tools:  # a misspelt name: an MCP client shows why it failed to start
        sys.stderr.write("web-tools mcp: --only names no tool that was found; not serving\n")
        return 2
    if not tools:
        sys.stderr.write("web-tools mcp: no tool to serve; `web-tools doctor` says why\n")
    sdk.join()
    from ikigai_web.host.mcp_server import serve

    serve(tools, args.timeout, warm=args.warm, output_schemas=args.output_schemas)
    return 0


def _importing(modules: Sequence[str]) -> threading.Thread:
    """`modules` imported in a thread of their own, started now: the MCP SDK's import is most
    of the server's start-up (a second of CPU), and runs while the tools are found, whose
    probes mostly wait for their programs. Finding the tools imports none of the SDK's
    modules, and the standard library's that both import are taken in turn (Python's import
    locks). A failure is the main thread's to meet, when it imports them in turn."""

    def load() -> None:
        with contextlib.suppress(Exception):
            for module in modules:
                importlib.import_module(module)

    thread = threading.Thread(target=load, name="importing the MCP SDK", daemon=True)
    thread.start()
    return thread


def _not_found(name: str, found: discovery.Found) -> str:
    """That no tool has the name, and which names it may have meant."""
    quoted = [repr(match) for match in discovery.closest(name, found)]
    guess = ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else "".join(quoted)
    meant = f"; did you mean {guess}?" if guess else ""
    return f"no tool named {name!r} was found{meant} (web-tools list)"


def run_list(args: argparse.Namespace) -> int:
    from ikigai_web.host.listing import render

    sys.stdout.write(render(discovery.discover(), as_json=args.json) + "\n")
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    from ikigai_web.host import doctor
    from ikigai_web.host.calls import mask_every_credential

    mask_every_credential()  # `--online` shows what tools print, third-party ones too
    report = doctor.examine(discovery.discover(), online=args.online)
    text = json.dumps(report.as_dict(), indent=2) if args.json else doctor.render(report)
    sys.stdout.write(text + "\n")
    return 1 if report.problems else 0


def run_forget(args: argparse.Namespace) -> int:
    from ikigai_web.common.errors import ToolError
    from ikigai_web.search.pacing import release
    from ikigai_web.search.registry import PREFIX, every
    from ikigai_web.tools.fallback.recall import forget

    known = list(every())
    keys = [name.strip().lower().removeprefix(PREFIX) for name in args.providers]
    named = zip(args.providers, keys, strict=True)
    unknown = [_no_provider(name, key, known) for name, key in named if key not in known]
    if unknown:  # a typo would forget nothing, and say so as if nothing had been noted
        sys.stderr.write("".join(f"web-tools forget: {line}\n" for line in unknown))
        return 1
    try:
        notes, warnings = forget(keys)
        holds, more = release(keys)
    except ToolError as err:  # a setting the store needs is unusable
        sys.stderr.write(f"web-tools forget: {err.message}\n")
        return 1
    for message in dict.fromkeys(w["message"] for w in [*warnings, *more]):
        sys.stderr.write(f"web-tools forget: {message}\n")
    about = f" about {', '.join(keys)}" if keys else ""
    counted = f"{_counted(notes, 'note')} and {_counted(holds, 'hold')}"
    sys.stdout.write(f"forgot {counted}{about}\n")
    return 0


def _counted(count: int, thing: str) -> str:
    return f"{count} {thing}{'s' if count != 1 else ''}"


def _no_provider(name: str, key: str, known: list[str]) -> str:
    """That `name` (as `key`) names no search provider, and the one it may mean (difflib)."""
    from difflib import get_close_matches

    close = get_close_matches(key, known, n=1)
    meant = f"; did you mean '{close[0]}'?" if close else "."
    return (f"no search provider is named {name!r}{meant} Nothing was forgotten "
            f"(providers: {', '.join(known)}).")  # fmt: skip


def run_clear_cache(_args: argparse.Namespace) -> int:
    from ikigai_web.common.cache import clear

    try:
        root = clear()
    except OSError as exc:
        sys.stderr.write(f"web-tools clear-cache: could not clear the cache: {exc}\n")
        return 1
    sys.stdout.write(f"cleared {root}\n")
    return 0
