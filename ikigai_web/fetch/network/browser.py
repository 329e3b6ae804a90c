"""web-fetch's optional browser: a page that only JavaScript fills in, rendered in headless
Chromium through Playwright, without giving up the guard.

Chromium never reaches the network by itself. Every request the page makes is intercepted and
answered from the call's own `Session` (the same guard, DNS pins, robots.txt, size cap and
deadline as the page itself), or aborted. Behind that, Chromium is started so that a request
that somehow escaped interception cannot go anywhere: its own resolver answers no name, and it
is pointed at a proxy whose name does not resolve either. A WebSocket fails in the page
itself, at once, as one whose connection failed (and is closed if one ever gets past that),
service workers are blocked, downloads refused, pop-ups and frames get no requests,
permissions are all denied, WebRTC is gone and workers cannot be made, and each call starts
from a new, empty profile in a directory of its own that is deleted with the browser (and, when
the call was killed, by the next call).

Every step that talks to the browser has its own time limit, derived from the settle time: past
it the browser is killed, whatever its page's script is doing (a renderer that spins never
answers), and the page is answered as sent.
"""

from __future__ import annotations

import contextlib
import glob
import math
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_web.common.errors import ToolError
from ikigai_web.common.procs import descendants, kill
from ikigai_web.common.redact import mask

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ikigai_web.common.settings import Settings
    from ikigai_web.fetch.network.session import Session

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = (
    "install the browser extra (pip install 'ikigai-web-tools[browser]') and a Chromium: "
    "the system's package (apt install chromium, dnf install chromium) or, where it can be "
    "downloaded, `playwright install chromium`; IKIGAI_WEB_FETCH_BROWSER names one elsewhere"
)
READ_SECONDS = 2.0  # the most reading the DOM may take: a renderer still busy then is killed
READ_RESERVE = 3.5  # of the deadline, kept for marking and reading the DOM, closing, extracting
CLOSE_SECONDS = 2.0  # the most closing the browser may take before its processes are killed
# Of the deadline: the browser's steps end when this much is left, and the browser with its
# driver is gone when _EXTRACTING is, whatever closing it takes on a busy machine; the rest
# is for extracting what it showed and answering.
_STEPS_END = 2.0
_EXTRACTING = 1.5
_GRACE = 1.0  # past a step's own Playwright timeout, before its browser is killed
MAX_REQUESTS = 300  # requests one rendered page may make
MEMORY_CAP = 1 << 30  # bytes of resident memory for the browser's whole process tree
_WATCH_EVERY = 0.1
# Kinds of request the content never needs: not fetched, so rendering stays fast.
SKIPPED_KINDS = frozenset(
    {"image", "media", "font", "texttrack", "manifest", "ping", "beacon", "eventsource"}
)
METHODS = frozenset({"GET", "HEAD", "POST"})
# Headers the call's own client sets (or must not take from a page).
_DROPPED_REQUEST = frozenset(
    {
        "host",
        "cookie",
        "user-agent",
        "accept-encoding",
        "connection",
        "content-length",
        "proxy-authorization",
        "authorization",
        "te",
        "upgrade",
        "keep-alive",
    }
)
# The body handed to Chromium is whole and decoded; cookies stay in the call's own client.
_DROPPED_RESPONSE = frozenset(
    {
        "content-encoding",
        "content-length",
        "transfer-encoding",
        "connection",
        "set-cookie",
        "keep-alive",
    }
)
_ARGS = (
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--dns-prefetch-disable",
    "--mute-audio",
    "--renderer-process-limit=1",
    "--js-flags=--max-old-space-size=512",
    "--blink-settings=imagesEnabled=false",  # not even asked for: the text needs none
    # A request that escaped interception finds no name and no way out.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://no-proxy.invalid:9",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)
# Environment variables the browser is not given: proxies (their logins), and anything named
# like a credential. Chromium needs none of them: its requests are all web-fetch's.
_WITHHELD = re.compile(
    r"proxy|key|token|secret|passw|auth|cred|cookie|session|^ikigai_", re.IGNORECASE
)
_TEMP_PREFIX = "ikigai-render-"  # + uid: the parent of every call's own directory (short:
# Chromium's socket path in it must fit 107 bytes)

# In every frame, before the page's own scripts: no WebRTC at all (a peer connection gathers
# addresses and sends mDNS queries outside the guarded client); no workers (a worker's
# requests are not the page's), refused as a Content-Security-Policy refuses them; and past
# MAX_REQUESTS fetch() and XHR calls, each fails at once as a refused request does, without
# a request: every request is an event this process handles (milliseconds each), and a page
# that makes thousands in a loop would otherwise keep it busy past the deadline.
_NO_RTC_NO_WORKERS = r"""
(() => {
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (/^(webkit)?RTC/.test(name)) delete globalThis[name];
  }
  let budget = MAX_REQUESTS;
  const real = { fetch: globalThis.fetch, send: globalThis.XMLHttpRequest?.prototype.send };
  if (real.fetch) {
    const fetch = function (...args) {
      if (--budget < 0) return Promise.reject(new TypeError("Failed to fetch"));
      return Reflect.apply(real.fetch, this, args);
    };
    const own = { value: fetch, writable: true, configurable: true };
    Object.defineProperty(globalThis, "fetch", own);
  }
  if (real.send) {
    globalThis.XMLHttpRequest.prototype.send = function (...args) {
      if (--budget < 0) {
        throw new DOMException("Failed to execute 'send' on 'XMLHttpRequest': refused.",
                               "NetworkError");
      }
      return Reflect.apply(real.send, this, args);
    };
  }
  for (const name of ["Worker", "SharedWorker"]) {
    if (!(name in globalThis)) continue;
    const refused = function () {
      throw new DOMException(`Failed to construct '${name}': workers are refused here.`,
                             "SecurityError");
    };
    Object.defineProperty(globalThis, name, { value: refused, writable: true, configurable: true });
  }
})();
"""

# Every frame's WebSocket, as Chromium's own behaves when its connection fails: CONNECTING,
# then on the next task CLOSED, `error`, and `close` 1006 (not clean). It is decided in the
# page, so a loaded machine cannot leave a page waiting on a socket, as it could with only
# Playwright's route, whose close travels through this process and sometimes never arrived.
_FAILED_WEBSOCKET = r"""
(() => {
  const later = globalThis.setTimeout.bind(globalThis);
  const [CONNECTING, OPEN, CLOSING, CLOSED] = [0, 1, 2, 3];
  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const bytes = (text) => new TextEncoder().encode(String(text)).length;

  class WebSocket extends EventTarget {
    #url;
    #state = CONNECTING;
    #binaryType = "blob";
    #buffered = 0;
    #handlers = new Map();

    constructor(url, protocols = []) {
      super();
      const refuse = (why) =>
        new DOMException(`Failed to construct 'WebSocket': ${why}`, "SyntaxError");
      let parsed;
      try {
        parsed = new URL(String(url), globalThis.document?.baseURI);
      } catch {
        throw refuse(`The URL '${url}' is invalid.`);
      }
      const scheme = { "http:": "ws:", "https:": "wss:" }[parsed.protocol];
      if (scheme) parsed.protocol = scheme;
      if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") {
        throw refuse(`The URL's scheme '${parsed.protocol.slice(0, -1)}' is not allowed.`);
      }
      if (parsed.href.includes("#")) {
        throw refuse("Fragment identifiers are not allowed in WebSocket URLs.");
      }
      const iterable = Object(protocols) === protocols && Symbol.iterator in protocols;
      const list = iterable ? Array.from(protocols, String) : [String(protocols)];
      for (const [i, protocol] of list.entries()) {
        if (!TOKEN.test(protocol) || list.indexOf(protocol) !== i) {
          throw refuse(`The subprotocol '${protocol}' is invalid or duplicated.`);
        }
      }
      this.#url = parsed.href;
      later(() => {
        this.#state = CLOSED;
        this.dispatchEvent(new Event("error"));
        this.dispatchEvent(new CloseEvent("close", { code: 1006, reason: "", wasClean: false }));
      }, 0);
    }

    get url() { return this.#url; }
    get readyState() { return this.#state; }
    get bufferedAmount() { return this.#buffered; }
    get protocol() { return ""; }
    get extensions() { return ""; }
    get binaryType() { return this.#binaryType; }
    set binaryType(value) {
      if (value === "blob" || value === "arraybuffer") this.#binaryType = value;
    }

    send(data) {
      if (arguments.length < 1) {
        throw new TypeError("Failed to execute 'send' on 'WebSocket': 1 argument required.");
      }
      if (this.#state === CONNECTING) {
        throw new DOMException("Failed to execute 'send' on 'WebSocket': Still in CONNECTING "
                               + "state.", "InvalidStateError");
      }
      const binary = data instanceof ArrayBuffer || ArrayBuffer.isView(data);
      this.#buffered += data instanceof Blob ? data.size : binary ? data.byteLength : bytes(data);
    }

    close(code, reason) {
      const fail = (why, name) =>
        new DOMException(`Failed to execute 'close' on 'WebSocket': ${why}`, name);
      if (code !== undefined && Number(code) !== 1000 && !(code >= 3000 && code <= 4999)) {
        throw fail(`The close code must be 1000 or 3000 to 4999, not ${code}.`,
                   "InvalidAccessError");
      }
      if (reason !== undefined && bytes(reason) > 123) {
        throw fail("The close reason must not be longer than 123 UTF-8 bytes.", "SyntaxError");
      }
      if (this.#state === CONNECTING || this.#state === OPEN) this.#state = CLOSING;
    }

    static {
      for (const type of ["open", "error", "close", "message"]) {
        Object.defineProperty(this.prototype, `on${type}`, {
          configurable: true,
          enumerable: true,
          get() { return this.#handlers.get(type)?.value ?? null; },
          set(value) {
            const handler = this.#handlers.get(type);
            if (Object(value) !== value) {
              if (handler) this.removeEventListener(type, handler.listener);
              this.#handlers.delete(type);
            } else if (handler) {
              handler.value = value;
            } else {
              const entry = { value };
              entry.listener = (event) => {
                if (typeof entry.value === "function") entry.value.call(this, event);
              };
              this.#handlers.set(type, entry);
              this.addEventListener(type, entry.listener);
            }
          },
        });
      }
      for (const [name, value] of Object.entries({ CONNECTING, OPEN, CLOSING, CLOSED })) {
        Object.defineProperty(this, name, { value, enumerable: true });
        Object.defineProperty(this.prototype, name, { value, enumerable: true });
      }
      const tag = { value: "WebSocket", configurable: true };
      Object.defineProperty(this.prototype, Symbol.toStringTag, tag);
    }
  }

  const own = { value: WebSocket, writable: true, configurable: true };
  Object.defineProperty(globalThis, "WebSocket", own);
})();
"""


# The browser's own idea of what a person sees: each run of text it does not show (an ancestor
# not displayed, invisible or transparent; a zero font size or a box clipped to nothing; laid
# out off-screen, above or left of the page) is wrapped in an element marked with the
# attribute named by the argument, which hidden.py then takes out as it does a `hidden` one.
# Measured first and marked after, so the layout is computed once. Text a person can reveal
# stays: a closed <details>, `hidden="until-found"`, a closed tab's or accordion's panel (as
# hidden.py tells one).
_MARK_UNSEEN = r"""
(mark) => {
  const MAX_TEXTS = 20000;
  const skipped = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "TEXTAREA", "OPTION"]);
  const controlled = new Set(Array.from(document.querySelectorAll("[aria-controls]"),
    (e) => e.getAttribute("aria-controls").split(/\s+/)).flat());
  const clipped = new Map();
  const clippedBox = (element) => {
    if (!element || element === document.documentElement) return false;
    if (clipped.has(element)) return clipped.get(element);
    const style = getComputedStyle(element), box = element.getBoundingClientRect();
    const hides = /hidden|clip/.test(style.overflowX + style.overflowY);
    const none = (hides && (box.width < 0.5 || box.height < 0.5))
      || (/absolute|fixed/.test(style.position) && style.clip === "rect(0px, 0px, 0px, 0px)");
    const result = none || clippedBox(element.parentElement);
    clipped.set(element, result);
    return result;
  };
  const OPTIONS = { checkOpacity: true, checkVisibilityCSS: true };
  const PANEL = new RegExp("(^|[^a-z])(accordion|collapse|collapsible|expandable|panel"
    + "|tabpanel|tabs?)([^a-z]|$)");
  const control = (e) => !!e && (/^(BUTTON|SUMMARY)$/.test(e.tagName)
    || e.hasAttribute("aria-expanded") || (e.textContent.trim().split(/\s+/).length <= 12
      && !!e.querySelector("button, [aria-expanded]")));
  const panel = (e) => controlled.has(e.id) || e.getAttribute("role") === "tabpanel"
    || PANEL.test(`${e.getAttribute("class") || ""} ${e.id}`.toLowerCase());
  const outermost = (element) => {
    let e = element;
    while (e.parentElement && e.parentElement !== document.body
           && !e.parentElement.checkVisibility(OPTIONS)) e = e.parentElement;
    return e;
  };
  const revealable = (element) => {
    if (element.closest('details:not([open]), [hidden="until-found"]')) return true;
    const box = outermost(element);
    if (control(box.previousElementSibling)
        || control(box.parentElement && box.parentElement.previousElementSibling)) return true;
    for (let e = element; e && e !== document.body; e = e.parentElement) if (panel(e)) return true;
    return false;
  };
  const offscreen = (rects) => Array.from(rects).every((r) =>
    r.width * r.height === 0 || r.right + scrollX <= 0 || r.bottom + scrollY <= 0);
  const unseen = (text) => {
    const parent = text.parentElement;
    if (!parent || skipped.has(parent.tagName)) return false;
    if (!parent.checkVisibility(OPTIONS)
        || parseFloat(getComputedStyle(parent).fontSize) === 0 || clippedBox(parent)) {
      return true;
    }
    const range = document.createRange();
    range.selectNodeContents(text);
    return offscreen(range.getClientRects());
  };
  const walker = document.createTreeWalker(document.body || document.documentElement,
    NodeFilter.SHOW_TEXT, { acceptNode: (t) => /\S/.test(t.data) ? 1 : 3 });
  const found = [];
  for (let n = 0, text; n < MAX_TEXTS && (text = walker.nextNode()); n++) {
    if (unseen(text) && !revealable(text.parentElement)) found.push(text);
  }
  for (const text of found) {
    const wrapper = document.createElement("span");
    wrapper.setAttribute(mark, "");
    text.replaceWith(wrapper);
    wrapper.append(text);
  }
  return found.length + 1;
}
"""
UNSEEN_SECONDS = 2.0  # the most marking unseen text may take; a page busy longer is read as is


class Unavailable(Exception):  # noqa: N818 - a state of the machine, as messages say it
    """No browser to render with: Playwright or Chromium is not installed."""


class RenderFailed(Exception):  # noqa: N818 - an outcome, named as the warning says it
    """The browser could not render the page (it crashed, ran out of memory or time)."""


@dataclass(frozen=True)
class Rendered:
    html: str | None  # None: the page could not be read in time; it is answered as sent
    settled: bool  # False: the page was still loading (or busy) when it was read


@dataclass
class _Call:
    """One render's bookkeeping: the page, what it was allowed, what went wrong."""

    session: Session
    url: str
    first: tuple[str | None, bytes] | None  # the page's own body, fetched already
    cap: int
    page: Any = None
    settle_end: float = math.inf  # monotonic: when loading stops and the page is read
    requests: int = 0
    served: int = 0
    error: ToolError | None = None
    replaced: str = ""  # the scheme of a document that replaced the page, if one did
    watch: _Watch | None = None
    blocked: list[str] = field(default_factory=list)


def executable(settings: Settings) -> str:
    """The Chromium to render with; Unavailable when there is none or no Playwright."""
    import importlib.util

    if importlib.util.find_spec("playwright") is None:
        raise Unavailable("Playwright is not installed")
    named = settings.fetch_browser
    found = _find(named) if named else _first_found()
    if found is None:
        where = f"IKIGAI_WEB_FETCH_BROWSER={named} is not" if named else "no Chromium is"
        raise Unavailable(f"{where} an installed browser")
    return found


def _find(name: str) -> str | None:
    if os.sep in name:
        return name if os.access(name, os.X_OK) and Path(name).is_file() else None
    return shutil.which(name)


def _first_found() -> str | None:
    for name in BROWSERS:
        if found := shutil.which(name):
            return found
    home = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache/ms-playwright")
    patterns = ("chromium-*/chrome-linux*/chrome", "chromium_headless_shell-*/*/headless_shell")
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(home, pattern)), reverse=True):  # noqa: PTH118, PTH207 - a pattern, not a path
            if os.access(path, os.X_OK):
                return path
    return None


def render(session: Session, url: str, first: tuple[str | None, bytes] | None) -> Rendered:
    """The page at `url` (its final URL) as the browser shows it, within the call's deadline.

    `first` is the page's body as the session fetched it, so the document is not asked for
    twice. Unavailable without a browser, RenderFailed when it could not be rendered, the
    session's own ToolError when the page itself was refused; Rendered(None, ...) when the
    browser could not be read in time (a script that never yields, a heap that keeps growing).
    """
    binary = executable(session.settings)
    call = _Call(session, url, first, session.settings.fetch_max_bytes)
    gone_by = time.monotonic() + session.deadline.remaining() - _EXTRACTING
    with _own_directory() as home, _reaped(gone_by) as spawned, _watched(spawned, gone_by) as watch:
        call.watch = watch
        try:
            rendered = _render(binary, call, home, watch)
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - Playwright's errors are many; each is a failed render
            rendered = _failed(watch, exc)
    if call.error is not None and not rendered.html:
        raise call.error
    return rendered


def _failed(watch: _Watch, exc: BaseException) -> Rendered:
    """A render that ended in an error: as sent and unsettled when its time was up, else
    RenderFailed saying why."""
    if watch.reason:
        raise RenderFailed(watch.reason) from None
    if watch.timed_out:
        return Rendered(None, settled=False)
    raise RenderFailed(_why(exc)) from None


# A render changes what the whole process has (its RLIMIT_DATA, TMPDIR for the driver), and a
# search that reads renders its pages on threads of one process: one render at a time.
_ONE_RENDER = threading.Lock()


def _render(binary: str, call: _Call, home: str, watch: _Watch) -> Rendered:
    if not _ONE_RENDER.acquire(timeout=max(_left(call), 0.0)):
        raise RenderFailed("another page was being rendered by this call until its deadline")
    try:
        return _render_alone(binary, call, home, watch)
    finally:
        _ONE_RENDER.release()


def _render_alone(binary: str, call: _Call, home: str, watch: _Watch) -> Rendered:
    watch.limit(_left(call) + _GRACE)
    with _without_data_limit(), _playwright(home) as playwright:
        browser = playwright.chromium.launch(
            executable_path=binary,
            args=_arguments(),
            env=browser_environment(home),
            timeout=_ms(_left(call)),
        )
        try:
            return _load_and_read(_open_page(browser, call), call, watch)
        finally:
            _close(browser, _within(call, CLOSE_SECONDS), watch)


def _load_and_read(page: Any, call: _Call, watch: _Watch) -> Rendered:
    """Load the page for at most the settle time, then read it within READ_SECONDS."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    settle = call.session.settings.fetch_render_settle
    call.settle_end = time.monotonic() + max(min(settle, _left(call)), 0.0)
    watch.limit(_settle_left(call) + _GRACE)
    with contextlib.suppress(PlaywrightTimeout):  # what was parsed so far is read
        page.goto(call.url, wait_until="domcontentloaded", timeout=_ms(_settle_left(call)))
    if call.error is not None and call.served == 0:
        raise call.error
    settled = _settle(page, call)
    watch.limit(_within(call, UNSEEN_SECONDS + _GRACE))
    mark_unseen(page)
    watch.limit(_within(call, READ_SECONDS))
    html = read_dom(page)
    if call.replaced:
        why = f"its script replaced it with a {call.replaced}: document, which is not the page"
        raise RenderFailed(why)
    return Rendered(html, settled)


def read_dom(page: Any) -> str:
    """What the page shows now, as HTML: the one place the rendered DOM is read."""
    return str(page.content())


def _within(call: _Call, seconds: float) -> float:
    """A step's time: its own, or what the deadline leaves once the page is extracted. The
    steps after loading are quick unless the page's script holds the renderer, and then each
    may take its whole time: the reserve alone would not keep them inside the deadline."""
    return min(seconds, call.session.deadline.remaining() - _STEPS_END)


def _close(browser: Any, seconds: float, watch: _Watch) -> None:
    watch.limit(seconds)
    with contextlib.suppress(Exception):  # a browser already killed has nothing to close
        browser.close()


@contextlib.contextmanager
def _playwright(home: str) -> Iterator[Any]:
    """Playwright, its driver started with `home` as its temp directory: the profile and
    artifact folders it makes go there, and with it."""
    from playwright.sync_api import sync_playwright

    manager = sync_playwright()
    # Node's own warnings (a step's timeout that ran out inside the driver, a deprecation)
    # would reach the tool's stderr, which carries nothing but the protocol's diagnostics.
    driver = {"TMPDIR": home, "NODE_NO_WARNINGS": "1"}
    saved = {name: os.environ.get(name) for name in driver}
    os.environ.update(driver)
    try:
        playwright = manager.__enter__()
    finally:
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
    try:
        yield playwright
    finally:
        manager.__exit__(None, None, None)


def browser_environment(home: str) -> dict[str, str]:
    """The browser's environment: this one without proxies or anything that looks like a
    credential, its temp directory `home`."""
    kept = {k: v for k, v in os.environ.items() if not _WITHHELD.search(k)}
    return kept | {"TMPDIR": home}


@contextlib.contextmanager
def _without_data_limit() -> Iterator[None]:
    """The browser started without this process's soft limit on its data (RLIMIT_DATA), which
    a call in the MCP server's warm worker has (ikigai_web/host/warm.py): Chromium's pages crash
    under such a limit. The browser's processes have their own cap (MEMORY_CAP, watched)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _arguments() -> list[str]:
    # Chromium refuses to start as root inside its sandbox; anyone else keeps the sandbox.
    return [*_ARGS, "--no-sandbox"] if os.geteuid() == 0 else list(_ARGS)


def _open_page(browser: Any, call: _Call) -> Any:
    context = browser.new_context(
        service_workers="block",
        accept_downloads=False,
        permissions=[],
        user_agent=call.session.settings.user_agent,
    )
    context.set_default_timeout(_ms(max(_left(call), 0.5)))
    context.route("**/*", lambda route, request: _answer(route, request, call))
    context.route_web_socket("**/*", lambda socket: socket.close())
    # After the route: its script replaces WebSocket too, and init scripts run in the order
    # they were added, so the page sees this one.
    context.add_init_script(_FAILED_WEBSOCKET)
    context.add_init_script(_NO_RTC_NO_WORKERS.replace("MAX_REQUESTS", str(MAX_REQUESTS)))
    page = context.new_page()
    call.page = page
    context.on("page", lambda other: other.close() if other is not call.page else None)
    page.on("framenavigated", lambda frame: _check_document(frame, call))
    return page


def _check_document(frame: Any, call: _Call) -> None:
    """Note a document of the page's own making (blob:, about:) in place of the page: every
    http(s) navigation away is refused, and no other kind is a request that could be."""
    scheme = str(frame.url).partition(":")[0].lower()
    if frame.parent_frame is None and scheme not in ("http", "https"):
        call.replaced = call.replaced or scheme


def _settle(page: Any, call: _Call) -> bool:
    """True when the page stopped loading (no request for half a second) in time."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    wait = _settle_left(call)
    if wait <= 0:
        return False
    try:
        page.wait_for_load_state("networkidle", timeout=_ms(wait))
    except PlaywrightTimeout:
        return False
    return True


def mark_unseen(page: Any) -> None:
    """Mark the text the browser does not show, for hidden.py to take out (_MARK_UNSEEN).

    Through `wait_for_function`, whose timeout Playwright keeps outside the page: a page whose
    script never yields leaves its text unmarked rather than the call waiting on it."""
    from playwright.sync_api import Error as PlaywrightError

    from ikigai_web.fetch.reading.hidden import MARK

    with contextlib.suppress(PlaywrightError):  # a timeout too; the static rules still apply
        page.wait_for_function(_MARK_UNSEEN, arg=MARK, timeout=_ms(UNSEEN_SECONDS))


def _answer(route: Any, request: Any, call: _Call) -> None:
    """Serve one of the page's requests from the guarded session, or refuse it."""
    if call.watch is not None and call.watch.killed:
        return  # the browser is gone: nothing to answer, and no time to spend on it
    why = _refusal(request, call)
    if why is not None:
        call.blocked.append(f"{why}: {request.url[:200]}")
        if request.is_navigation_request():
            route.fulfill(status=204)  # No Content: the frame stays on the page it shows
        else:
            route.abort("blockedbyclient")
        return
    call.requests += 1
    if call.first is not None and request.url == call.url:
        kind, body = call.first
        call.first = None
        call.served += 1
        headers = {"content-type": kind or "text/html"}
        route.fulfill(status=200, headers=headers, body=masked(body))
        return
    try:
        with _until(call.session, call.settle_end):
            answered = call.session.forward(
                request.url, _request_headers(request), _sent(request), call.cap
            )
    except ToolError as err:
        if request.is_navigation_request():
            call.error = err
        call.blocked.append(f"{err.code.value}: {request.url[:200]}")
        route.abort("blockedbyclient")
        return
    call.served += 1
    headers = {k: mask(v) for k, v in answered.headers if k.lower() not in _DROPPED_RESPONSE}
    route.fulfill(status=answered.status, headers=headers, body=masked(answered.body))


def masked(body: bytes) -> bytes:
    """`body` with every registered secret (a proxy's login, a URL's password) masked, every
    other byte as it was: a server or proxy that echoes one must not hand it to the page."""
    text = body.decode("utf-8", "surrogateescape")
    shown = mask(text)
    return body if shown == text else shown.encode("utf-8", "surrogateescape")


@contextlib.contextmanager
def _until(session: Session, end: float) -> Iterator[None]:
    """The session's waits (DNS, connect, every read) end by `end` while inside: a request of
    the page never holds the browser past its settle time."""
    saved = session.deadline.end, session.clock.end
    session.deadline.end = min(saved[0], end)
    session.clock.end = min(saved[1], end)
    try:
        yield
    finally:
        session.deadline.end, session.clock.end = saved


def _refusal(request: Any, call: _Call) -> str | None:
    """Why a request is not made, or None when it may be."""
    reasons = (
        (not request.url.lower().startswith(("http://", "https://")), "not http(s)"),
        (request.method not in METHODS, f"method {request.method}"),
        (request.resource_type in SKIPPED_KINDS, "not needed for the content"),
        (call.requests >= MAX_REQUESTS, f"more than {MAX_REQUESTS} requests"),
        (_settle_left(call) <= 0, "out of time"),
        (_carries_secret(request), "it carries a credential"),
    )
    for refused, why in reasons:
        if refused:
            return why
    return _from_elsewhere(request, call)


def _from_elsewhere(request: Any, call: _Call) -> str | None:
    """Why a request that is not the page's own is refused: pop-ups, workers, frames and
    navigations away get nothing (the page read is the page asked for)."""
    try:
        frame = request.frame
        page = frame.page
    except Exception:  # noqa: BLE001 - a worker's request has no frame: it is not made
        return "not from the page"
    if page is not call.page:
        return "from a pop-up"
    if request.is_navigation_request() and (frame.parent_frame is not None or call.served):
        return "a frame or a navigation away from the page"
    return None


def _request_headers(request: Any) -> dict[str, str]:
    return {k: v for k, v in request.headers.items() if k.lower() not in _DROPPED_REQUEST}


def _sent(request: Any) -> tuple[str, bytes | None]:
    return request.method, request.post_data_buffer if request.method == "POST" else None


def _carries_secret(request: Any) -> bool:
    """Whether a request holds a registered secret: none is ever handed to the page, and none
    leaves through it either."""
    sent = (request.post_data_buffer or b"") if request.method == "POST" else b""
    texts = (request.url, *request.headers.values(), sent.decode("utf-8", "surrogateescape"))
    return any(mask(text) != text for text in texts)


def _left(call: _Call) -> float:
    return call.session.deadline.remaining() - READ_RESERVE


def _settle_left(call: _Call) -> float:
    return min(call.settle_end - time.monotonic(), _left(call))


def _ms(seconds: float) -> float:
    return max(seconds, 0.001) * 1000


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


# --- the browser's processes: memory capped while it runs, none left once it is done --------


@dataclass
class _Watch:
    reason: str = ""  # why the browser was killed for its memory
    timed_out: bool = False  # it was killed for its time
    until: float = math.inf  # monotonic: when the current step's time is up
    gone_by: float = math.inf  # monotonic: when every process started is killed, the driver too
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def killed(self) -> bool:
        return bool(self.reason) or self.timed_out

    def limit(self, seconds: float) -> None:
        """The next step talks to the browser for at most `seconds`."""
        self.until = time.monotonic() + max(seconds, 0.0)


@contextlib.contextmanager
def _watched(spawned: Spawned, gone_by: float) -> Iterator[_Watch]:
    """Kill the browser when together its processes hold more than MEMORY_CAP, or when the
    current step's time is up: nothing else ends a call that waits on a renderer that spins.
    At `gone_by` (monotonic) kill the driver too: closing waits on it, unbounded."""
    watch = _Watch(gone_by=gone_by)
    thread = threading.Thread(target=_watch, args=(watch, spawned), daemon=True)
    thread.start()
    try:
        yield watch
    finally:
        watch.stop.set()
        thread.join()


def _watch(watch: _Watch, spawned: Spawned) -> None:
    while not watch.stop.wait(_WATCH_EVERY):
        if time.monotonic() > watch.gone_by:
            watch.timed_out = True
            kill(spawned())
        elif watch.killed:
            kill(spawned.browser())  # and whatever it was still starting
        elif time.monotonic() > watch.until:
            watch.timed_out = True
            kill(spawned.browser())
        elif sum(map(_resident, spawned())) > MEMORY_CAP:
            watch.reason = f"the browser used more than {MEMORY_CAP >> 20} MiB of memory"
            kill(spawned.browser())


class Spawned:
    """The processes started below this one since it was made: the browser's."""

    def __init__(self) -> None:
        self.before = set(descendants(os.getpid()))

    def __call__(self) -> list[int]:
        return [pid for pid in descendants(os.getpid()) if pid not in self.before]

    def browser(self) -> list[int]:
        """The browser's processes: those below Playwright's driver, which is left running so
        that it reports the browser gone to every call waiting on it."""
        drivers = [pid for pid in self() if _parent(pid) == os.getpid()]
        return [pid for driver in drivers for pid in descendants(driver)]


def _parent(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[1]) if len(fields) > 1 else 0


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields from the state on (the third), or none for a process gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return []
    return text.rpartition(")")[2].split()


@contextlib.contextmanager
def _reaped(gone_by: float) -> Iterator[Spawned]:
    """Whatever the browser started is gone when the render is over, however it ended, and
    by `gone_by` (monotonic) at the latest."""
    spawned = Spawned()
    try:
        yield spawned
    finally:
        # Playwright closes its own first, gracefully, if it can in time.
        deadline = min(time.monotonic() + 2, gone_by)
        while spawned() and time.monotonic() < deadline:
            time.sleep(0.05)
        kill(spawned())


def _resident(pid: int) -> int:
    """A process's proportional share of memory (PSS): Chromium's processes share most of
    their pages, which a sum of their resident sizes would count once per process."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text(encoding="ascii")
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


# --- the browser's files: in a directory of the call's own, gone when it ends ----------------


@contextlib.contextmanager
def _own_directory() -> Iterator[str]:
    """A new directory for the browser's profile and Playwright's artifacts, removed when the
    render ends. Those of calls killed before they could remove theirs go first."""
    own = _new_directory()
    try:
        yield str(own)
    finally:
        shutil.rmtree(own, ignore_errors=True)
        with contextlib.suppress(OSError):
            own.parent.rmdir()  # the last one out; another call's directory keeps it


def _new_directory() -> Path:
    for _ in range(3):  # another call may remove the parent between its making and ours
        parent = _parent_directory()
        if parent is None:
            return Path(tempfile.mkdtemp(prefix=_TEMP_PREFIX))
        _remove_stale(parent)
        with contextlib.suppress(FileNotFoundError):
            return Path(tempfile.mkdtemp(prefix=_owner_tag(), dir=parent))
    return Path(tempfile.mkdtemp(prefix=_TEMP_PREFIX))


def _parent_directory() -> Path | None:
    """The user's own directory for the calls' directories in the temp directory; None when
    another user's, or anything but a private directory, is in its place."""
    base = os.environ.get("TMPDIR") or tempfile.gettempdir()
    path = Path(base) / f"{_TEMP_PREFIX}{os.getuid()}"
    try:
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        info = path.lstat()
    except OSError:
        return None
    private = stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o077
    return path if private and info.st_uid == os.getuid() else None


def _owner_tag() -> str:
    """PID.START. in base 36: whose directory it is, so that a later call knows when its
    owner is gone (a process's start time tells a reused PID apart)."""
    fields = _stat(os.getpid())
    start = int(fields[19]) if len(fields) > 19 else 0
    return f"{_base36(os.getpid())}.{_base36(start)}."


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, digit = divmod(number, 36)
        text = digits[digit] + text
        if not number:
            return text


def _remove_stale(parent: Path) -> None:
    if not _stat(os.getpid()):
        return  # no /proc: an owner cannot be told alive or gone, so none is removed
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if _owner_gone(entry.name):
                shutil.rmtree(entry, ignore_errors=True)


def _owner_gone(name: str) -> bool:
    found = re.fullmatch(r"([0-9a-z]+)\.([0-9a-z]+)\..+", name)
    if found is None:
        return False  # not a call's directory: not ours to remove
    fields = _stat(int(found[1], 36))
    return len(fields) <= 19 or fields[0] == "Z" or int(fields[19]) != int(found[2], 36)
