"""What a DNS host name is, for the settings (hosts web-fetch may reach), search's domain
filters and web-fetch's titles alike."""

from __future__ import annotations

import re

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def is_hostname(text: str) -> bool:
    """A DNS host name: valid labels, and not ending in a number (that would be an IPv4
    address, as a browser reads it, such as the invalid 300.1.1.1)."""
    labels = text.split(".")
    return (
        0 < len(text) <= 253
        and all(_LABEL.match(label) for label in labels)
        and not labels[-1].isdigit()
    )


def is_bare_host(text: str) -> bool:
    """Whether `text` is nothing but a host name with a dot ("example.com", "www.bbc.co.uk"),
    as a site names itself in a title, not words."""
    name = text.strip().lower()
    return "." in name and is_hostname(name)
