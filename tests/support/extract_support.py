"""Helpers shared by test_extract.py and test_extract_large.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ikigai_web.fetch.reading.extract import html_to_markdown

if TYPE_CHECKING:
    from ikigai_web.fetch.reading.document import Document

URL = "https://example.com/blog/2024/post.html"
FILLER = (
    "Readers who follow the project will find the details below, with the reasoning behind "
    "each choice and the trade-offs that were weighed before the decision was made."
)

ARTICLE = f"""<!DOCTYPE html>
<html lang="en"><head>
<title>Growing Tomatoes Indoors | Garden Notes</title>
<meta name="author" content="Jane Gardener">
<meta name="description" content="How to grow tomatoes on a windowsill.">
<meta property="og:site_name" content="Garden Notes">
<meta property="og:title" content="Growing Tomatoes Indoors">
<meta property="article:published_time" content="2024-03-05T10:00:00Z">
<script>var tracking = "should never appear";</script>
<style>.x {{ color: red }}</style>
</head><body>
<nav class="menu"><ul><li><a href="/">Home page link</a></li><li><a href="/shop">Shop</a></li>
<li><a href="/about">About us and our team</a></li></ul></nav>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience.
<button>Accept all cookies</button></div>
<main><article>
<h1>Growing Tomatoes Indoors</h1>
<p>Tomatoes grow well on a sunny windowsill. {FILLER} See the
<a href="../guides/soil.html">soil guide</a> before you start.</p>
<h2>What you need</h2>
<p>Gather the following before sowing. {FILLER}</p>
<ol><li>A deep pot with drainage</li>
<li>Seed compost<ul><li>peat-free blend</li><li>fine grade</li></ul></li>
<li>Seeds of a dwarf variety</li></ol>
<h3>Watering schedule</h3>
<p>Water every other day, more in summer. {FILLER}</p>
<pre><code class="language-python">def water(days):
    return [d for d in days if d % 2 == 0]
</code></pre>
<p>The table compares three varieties grown last year. {FILLER}</p>
<table><thead><tr><th>Variety</th><th>Yield (kg)</th></tr></thead>
<tbody><tr><td>Tiny Tim</td><td>1.2</td></tr><tr><td>Red Robin</td><td>0.9</td></tr></tbody></table>
<p><img src="img/seedlings.jpg" alt="Seedlings on a windowsill"> Seedlings appear after a week
or so, and need turning daily towards the light. {FILLER}</p>
<p>Harvest when the fruit is fully red. {FILLER}</p>
</article></main>
<footer class="site-footer"><p>Copyright 2024 Garden Notes Ltd. All rights reserved.</p>
<a href="/privacy">Privacy policy</a></footer>
</body></html>"""


@pytest.fixture(scope="module")
def article() -> Document:
    return html_to_markdown(ARTICLE, URL)


NOTE = "> [web-fetch: this page is too large to convert whole"
