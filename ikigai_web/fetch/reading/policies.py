"""What each page type keeps, in one table: how a page of that type is extracted.

extract.py sends a page down the article path or the region path by its type's policy, and
typed.py applies the rest to the region; no other code compares page type names. A type's
policy is a set of plain behaviours, each named for what it does to the page, so that a new
type is a new row and a new behaviour a new column.
"""

from __future__ import annotations

from typing import NamedTuple


class Policy(NamedTuple):
    """How a page type is extracted. The defaults keep the main region whole, from its title
    on, pruned of boilerplate and menus of links (see typed.py)."""

    # trafilatura with readability's second opinion (extract.py), instead of the region.
    article: bool = False
    # The publication date is searched for through the whole page (htmldate), not only in
    # the page's metadata: an article has one, other pages show dates of other things.
    dated: bool = False
    # Read post by post (forum.py); forms, which wrap whole threads on some forums, and the
    # posts' author panes stay until then.
    thread: bool = False
    # Its items are runs of links: menus of short links stay, and an aside section is judged
    # as a run of items rather than as links away from the content.
    items: bool = False
    # Buyers' reviews are not its content, and its closed panels (shipping, size guides,
    # reviews) stay closed; what folded tabs hold (details, specifications) is shown instead.
    reviews: bool = False
    folded: bool = False
    # A long line's second and later copies go: a layout for each screen size, a quoted post.
    # (A listing's repeated labels and documentation's repeated code are content.)
    copies: bool = False
    # What its schema.org data says that the visible page does not (product.py).
    structured: bool = False
    # Its leading heading is its name, which what follows belongs to: kept even when it
    # repeats the page's title.
    named: bool = False


POLICIES: dict[str, Policy] = {
    "article": Policy(article=True, dated=True),
    "forum": Policy(thread=True, copies=True),
    "product": Policy(reviews=True, folded=True, copies=True, structured=True, named=True),
    "collection": Policy(items=True),
    "listing": Policy(items=True),
    "documentation": Policy(),
    "service": Policy(copies=True),
}
