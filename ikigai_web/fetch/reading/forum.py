"""A forum thread or a Q&A page: every post in order, each as its author, its date and its text.

Posts are found the way the page marks them: schema.org microdata first (Comment, Answer,
Question, DiscussionForumPosting... with their `author`, `datePublished` and `text`), else the
commonest post-like class (post, message, comment, reply, answer) among repeated elements that
hold most of the thread's text. Replies nested in a post (threaded comments) are posts of their
own, in document order. Inside a post, what describes the poster rather than the post (avatar,
rank, post count, signature) and the post's controls (votes, likes, share, reply, report) go.
The author's name is the innermost element marked as the author (an author pane holds a rank
and a post count beside it); the date leaves with its label ("Posted", "(edited)").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from lxml.html import HtmlElement

_POST_TYPES = frozenset(
    {
        "comment",
        "answer",
        "question",
        "discussionforumposting",
        "socialmediaposting",
        "blogposting",
    }
)
# The words a post's class is named with, here and where the page's type counts its posts
# (pagetype.py). A thread found calls its posts entries too, but the page type does not count
# "entry": every WordPress article's text is an `entry-content`.
POST_WORDS = frozenset({"post", "message", "comment", "reply", "answer"})
_THREAD_WORDS = POST_WORDS | {"entry"}
# Tags that carry a post's class name on its links, labels and controls, never on a post.
NOT_POSTS = frozenset({"a", "span", "button", "form"})
_WORD = re.compile(r"[a-z]+")
_CAMEL = re.compile(r"([a-z])([A-Z])")
_MIN_POSTS = 2
_POST_CHARS = 40  # a post-like element with less text is a control or a counter
_THREAD_SHARE = 0.3  # the posts hold at least this share of the region's text
_LEAD_WORDS = 20  # fewer words before the first post are a heading and a byline
# Class and id words of what tells who the poster is.
_AUTHOR_WORDS = frozenset({"author", "username", "poster", "creator", "byline", "membername"})
_AUTHOR_WORDS_MAX = 5
_DATE_WORDS = frozenset({"date", "time", "timestamp", "posted", "postdate", "published"})
_DATE_WORDS_MAX = 8
_DATE_LABEL = 2  # words beside a date that label it ("Posted", "(edited)")
_TIMESTAMP = re.compile(r"(\d{4}-\d\d-\d\d)[T ]\d\d:\d\d")
# Class and id words of the post's text.
_BODY_WORDS = frozenset(
    {"body", "content", "message", "text", "cooked", "bbwrapper", "postbody", "md", "prose"}
)
_BODY_SHARE = 0.3
# Class and id words of what is about the poster or is a control, not the post.
_CLUTTER_WORDS = frozenset(
    {
        "avatar",
        "signature",
        "sig",
        "badge",
        "badges",
        "rank",
        "reputation",
        "karma",
        "vote",
        "votes",
        "voting",
        "score",
        "reaction",
        "reactions",
        "likes",
        "share",
        "sharing",
        "report",
        "permalink",
        "actions",
        "controls",
        "toolbar",
        "buttons",
        "userinfo",
        "postprofile",
        "flair",
        "tagline",
    }
)
_CLUTTER_SHARE = 0.5
_TEXT_PROPS = ("text", "articlebody", "reviewbody")
_DATE_PROPS = ("datepublished", "datecreated")


class Post(NamedTuple):
    author: str
    date: str
    body: str  # markdown


def thread_markdown(region: HtmlElement, *, include_links: bool) -> str:
    """The thread's posts as markdown, each under a line with its author and date; "" when
    the region holds no recognisable thread."""
    posts = _find_posts(region)
    if len(posts) < _MIN_POSTS:
        return ""
    lead = _lead(region, posts[0])
    found = _read_posts(posts, include_links=include_links)
    if lead is not None:
        opening = _read(lead, include_links=include_links)
        if len(opening.body.split()) >= _LEAD_WORDS:
            found.insert(0, opening)
    blocks = [_post_block(post) for post in found if post.body]
    return "\n\n---\n\n".join(blocks)


def _post_block(post: Post) -> str:
    header = " · ".join(
        part for part in (f"**{post.author}**" if post.author else "", post.date) if part
    )
    return f"{header}\n\n{post.body}" if header else post.body


def _lead(region: HtmlElement, first: HtmlElement) -> HtmlElement | None:
    """What comes before the first post, moved into an element of its own: the opening
    post, when the page marks it unlike the replies."""
    import lxml.html

    before: list[HtmlElement] = []
    node = first
    while node is not region and (parent := node.getparent()) is not None:
        before += list(node.itersiblings(preceding=True))
        node = parent
    if not before:
        return None
    lead = lxml.html.Element("div")
    for element in reversed(before):
        lead.append(element)
    return lead


def _find_posts(region: HtmlElement) -> list[HtmlElement]:
    """The thread's posts in document order, nested replies included."""
    marked = [element for element in region.iter() if _is_marked_post(element)]
    if len(marked) >= _MIN_POSTS:
        return marked
    return _classed_posts(region)


def _is_marked_post(element: HtmlElement) -> bool:
    kinds = element.get("itemtype")
    if not kinds:
        return False
    names = {word.rstrip("/").rsplit("/", 1)[-1].lower() for word in kinds.split()}
    return bool(names & _POST_TYPES)


def _classed_posts(region: HtmlElement) -> list[HtmlElement]:
    """The members of the post-like class that holds the most text, when it holds enough."""
    groups: dict[tuple[str, str], list[HtmlElement]] = {}
    for element in region.iter():
        key = _post_key(element)
        if key and len(element.text_content()) >= _POST_CHARS:
            groups.setdefault(key, []).append(element)
    best: list[HtmlElement] = []
    best_chars = 0
    for members in groups.values():
        if len(members) < _MIN_POSTS:
            continue
        chars = sum(len(member.text_content()) for member in _outermost(members))
        if chars > best_chars:
            best, best_chars = members, chars
    if best_chars < _THREAD_SHARE * len(region.text_content()):
        return []
    return best


def _post_key(element: HtmlElement) -> tuple[str, str] | None:
    """(tag, first class name naming a post) for an element that may be a post."""
    if not isinstance(element.tag, str) or element.tag in NOT_POSTS:
        return None
    for name in element.get("class", "").split():
        if _THREAD_WORDS & set(_words(name)):
            return (str(element.tag), name.lower())
    return None


def _outermost(members: list[HtmlElement]) -> list[HtmlElement]:
    inside: set[HtmlElement] = set()
    for member in members:
        inside.update(member.iterdescendants())
    return [member for member in members if member not in inside]


def _read_posts(posts: list[HtmlElement], *, include_links: bool) -> list[Post]:
    """Each post read, innermost first so that a nested reply leaves its parent's text."""
    read: dict[int, Post] = {}
    for number in reversed(range(len(posts))):
        post = posts[number]
        read[number] = _read(post, include_links=include_links)
        if post.getparent() is not None:
            post.drop_tree()
    return [read[number] for number in range(len(posts))]


def _read(post: HtmlElement, *, include_links: bool) -> Post:
    from ikigai_web.fetch.reading.markdown import element_markdown

    author, date = _author(post), _date(post)
    for element in [*_clutter(post), *_copies(post, {author, date} - {""})]:
        _remove(element)
    bodies = _bodies(post)
    body = "\n\n".join(element_markdown(element, include_links=include_links) for element in bodies)
    return Post(author, date, body.strip())


def _author(post: HtmlElement) -> str:
    for element in post.iter():
        if _is_author(element):
            # The innermost: an author pane holds the name beside a rank and a post count.
            marked = _innermost_author(element)
            name = marked.find(".//*[@itemprop='name']")
            text = _squash((name if name is not None else marked).text_content())
            if 0 < len(text.split()) <= _AUTHOR_WORDS_MAX:
                # A pane as short as a name goes whole, rank and all.
                pane = len(element.text_content().split()) <= _AUTHOR_WORDS_MAX
                _remove(element if pane else marked)
                return text
    return ""


def _is_author(element: HtmlElement) -> bool:
    return _prop(element) == "author" or bool(_AUTHOR_WORDS & _class_words(element))


def _innermost_author(element: HtmlElement) -> HtmlElement:
    for inner in element.iterdescendants():
        if _is_author(inner) and inner.text_content().strip():
            return _innermost_author(inner)
    return element


def _date(post: HtmlElement) -> str:
    for element in post.iter():
        if element.tag == "time" or _prop(element) in _DATE_PROPS:
            shown = _squash(element.text_content())
            text = shown or _day(element.get("datetime") or element.get("content") or "")
        elif _DATE_WORDS & _class_words(element):
            text = _squash(element.text_content())
        else:
            continue
        if text and len(text.split()) <= _DATE_WORDS_MAX:
            _remove(_date_line(element, post))
            return text
    return ""


def _day(timestamp: str) -> str:
    """A machine timestamp the page does not show, as the day it names: its time of day, to
    the second and in UTC or the server's zone, is not the reader's."""
    found = _TIMESTAMP.match(timestamp)
    return found.group(1) if found else timestamp


def _date_line(element: HtmlElement, post: HtmlElement) -> HtmlElement:
    """The date with its label ("Posted 3 May", "3 May (edited)"): the largest ancestor below
    the post that adds no more than _DATE_LABEL words to the date, and is not the post's text."""
    words = len(element.text_content().split())
    while (parent := element.getparent()) is not None and parent is not post:
        if len(parent.text_content().split()) > words + _DATE_LABEL or _is_body(parent):
            break
        element = parent
    return element


def _copies(post: HtmlElement, texts: set[str]) -> list[HtmlElement]:
    """What says no more than the post's author or date, which its header line gives: the
    copies a page lays out for each screen size, once the marked ones have gone."""
    found = [
        element
        for element in post.iterdescendants()
        if isinstance(element.tag, str) and _squash(element.text_content()) in texts
    ]
    return _outermost(found)


def _remove(element: HtmlElement) -> None:
    if element.getparent() is not None:
        element.drop_tree()


def _clutter(post: HtmlElement) -> list[HtmlElement]:
    """Buttons, and what class names call clutter; never most of the post (a post may carry
    its author's rank in its own class)."""
    most = _CLUTTER_SHARE * len(post.text_content())
    return [
        element
        for element in post.iterdescendants()
        if isinstance(element.tag, str)
        and (element.tag == "button" or _CLUTTER_WORDS & _class_words(element))
        and len(element.text_content()) < most
    ]


def _bodies(post: HtmlElement) -> list[HtmlElement]:
    """The elements holding the post's text: those the page marks as its text, else the
    largest element classed as a body, else the whole post."""
    marked = [element for element in post.iter() if _prop(element) in _TEXT_PROPS]
    if marked:
        return _outermost(marked)
    total = len(post.text_content())
    classed = [element for element in post.iterdescendants() if _is_body(element)]
    sizes = [(len(element.text_content()), element) for element in classed]
    size, best = max(sizes, key=lambda pair: pair[0], default=(0, post))
    return [best if size >= _BODY_SHARE * total else post]


def _is_body(element: HtmlElement) -> bool:
    return isinstance(element.tag, str) and bool(_BODY_WORDS & _class_words(element))


def _prop(element: HtmlElement) -> str:
    return str(element.get("itemprop", "")).lower() if isinstance(element.tag, str) else ""


def _class_words(element: HtmlElement) -> set[str]:
    if not isinstance(element.tag, str):
        return set()
    return set(_words(f"{element.get('class', '')} {element.get('id', '')}"))


def _words(value: str) -> list[str]:
    return _WORD.findall(_CAMEL.sub(r"\1 \2", value).lower())


def _squash(text: str) -> str:
    return " ".join(text.split())
