"""Documents through web-fetch, their bounds: XML read by its content, a document's links
through the guard, the reader's own process and each reader's limits (test_documents.py has
the corpus, pages, broken files and the layout)."""

from __future__ import annotations

import io
import json
import os
import signal
import time
import zipfile
from typing import TYPE_CHECKING, Any

import document_corpus as corpus
import hostile_documents as hostile
import pytest
from conftest import STALL, Reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.reading.files import (
    archive,
    excel,
    forked,
    office,
    office_parts,
    pdf,
)

if TYPE_CHECKING:
    from ikigai_web.fetch.reading import decode
from documents_support import (
    DOCX,
    EPUB,
    READ,
    XLSX,
    _ends_when,
    _line,
    _package,
    _pdf,
    fetch,
    samples,
)

pytestmark = pytest.mark.loopback


# ---------------------------------------------------------------- XML by its content (issue 55)

LAUGHS_SHEET = (
    b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    b'<row r="1"><c r="A1" t="inlineStr"><is><t>&b;</t></is></c></row></sheetData></worksheet>'
)


@pytest.mark.parametrize(
    "encoding", ["utf-8", "utf-16", "utf-16-le"], ids=["utf-8", "utf-16-bom", "utf-16-le"]
)
def test_a_sheet_part_named_as_no_xml_is_checked_by_its_content(serve, encoding):
    """Issue 55: an .xlsx sheet part named sheet1.dat carrying a DTD was read past the check,
    and openpyxl's parser raised: a traceback, with no answer. In whatever encoding."""
    sheet = LAUGHS_SHEET.replace(b'"1.0"?>', f'"1.0" encoding="{encoding}"?>'.encode(), 1)
    data = sheet.decode().encode(encoding)
    body = hostile.xlsx({"Sheet": data}, part_names={"Sheet": "xl/worksheets/sheet1.dat"})
    out = fetch(serve("/s.xlsx", body, XLSX))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "(xl/worksheets/sheet1.dat) could not be read (it declares entities" in out["error"]


def test_an_epub_package_document_named_as_no_xml_is_checked_by_its_content(serve):
    """Issue 55: the OPF (any name its container gives) and a chapter without the expected
    extension declared entities unchecked."""
    opf_head = b'<?xml version="1.0"?><!DOCTYPE package [<!ENTITY t "Injected">]>'
    body = hostile.epub({"ch.xhtml": hostile.xhtml("<p>Text</p>")}, ["ch.xhtml"],
                        opf_name="OEBPS/content.dat", opf_head=opf_head)  # fmt: skip
    out = fetch(serve("/b.epub", body, EPUB.decode()))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "(OEBPS/content.dat) could not be read (it declares entities" in out["error"]
    chapter = hostile.xhtml("<p>&t;</p>").replace(
        b"<!DOCTYPE html>", b'<!DOCTYPE html [<!ENTITY t "Injected">]>'
    )
    body = hostile.epub({"ch.dat": chapter}, ["ch.dat"])
    out = fetch(serve("/c.epub", body, EPUB.decode()))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "(OEBPS/ch.dat) could not be read" in out["error"]


def test_a_word_main_part_named_as_no_xml_cannot_declare_entities(serve):
    rels = hostile._RELS % hostile._OFFICE_DOCUMENT.replace(b"word/document.xml", b"word/x.dat")
    document = (
        b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY t "Injected">]><w:document xmlns:w="'
        b'http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>'
        b"&t;</w:t></w:r></w:p></w:body></w:document>"
    )
    body = hostile.docx(
        hostile.paragraph("x"), members={"_rels/.rels": rels, "word/x.dat": document}
    )
    out = fetch(serve("/d.docx", body, DOCX))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "(word/x.dat) could not be read (it declares entities" in out["error"]


def test_a_doctype_that_only_names_a_public_dtd_is_no_dtd_of_its_own(serve):
    """An EPUB 2 table of contents names the NCX DTD; it declares nothing, and no library here
    loads a DTD: the book is read (it was refused before)."""
    ncx = (
        b'<?xml version="1.0"?><!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" '
        b'"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd"><ncx xmlns="http://www.daisy.org/'
        b'z3986/2005/ncx/" version="2005-1"><navMap/></ncx>'
    )
    body = hostile.epub({"ch.xhtml": hostile.xhtml("<p>Read me</p>")}, ["ch.xhtml"],
                        members={"OEBPS/toc.ncx": ncx})  # fmt: skip
    out = fetch(serve("/n.epub", body, EPUB.decode()))
    assert out["success"] is True, out
    assert out["content"] == "Read me"


def test_tables_nested_60_deep_are_read_and_flattened_past_a_depth(serve):
    """Issue 55: 60 nested Word tables met Python's recursion limit (a PARSE_ERROR)."""
    out = fetch(serve("/t.docx", hostile.docx_nested_tables(60), DOCX))
    assert out["success"] is True, out
    for level in range(1, 61):
        assert f"Level {level}" in out["content"]
    assert out["content"].endswith("After the tables")


# ---------------------------------------------------------------- links (issue 55)

PLACES = (
    ("file", "file:///etc/passwd"),
    ("private", "http://127.0.0.2/admin"),
    ("local", "http://intranet.local/x"),
    ("public", "https://example.com/page"),
)


@pytest.fixture
def serve_guarded(fake_server, monkeypatch):
    """As `serve`, but only 127.0.0.1 is let through: other private hosts stay private."""
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "127.0.0.1")

    def put(path: str, body: bytes, ctype: str) -> str:
        url: str = fake_server.route(path, Reply(200, body, {"Content-Type": ctype}))
        return url

    return put


def _epub_with_places() -> bytes:
    anchors = "".join(f'<a href="{target}">{name} link</a> ' for name, target in PLACES)
    images = "".join(f'<img src="{target}" alt="{name} image"/> ' for name, target in PLACES)
    body: bytes = hostile.epub(
        {"ch.xhtml": hostile.xhtml(f"<p>{anchors}</p><p>{images}</p>")}, ["ch.xhtml"]
    )
    return body


def _docx_with_places() -> bytes:
    relationships = b"".join(
        b'<Relationship Id="r%s" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/hyperlink" Target="%s" TargetMode="External"/>'
        % (name.encode(), target.encode())
        for name, target in PLACES
    )
    links = "".join(
        f'<w:p><w:hyperlink r:id="r{name}"><w:r><w:t>{name} link</w:t></w:r></w:hyperlink></w:p>'
        for name, _ in PLACES
    )
    body: bytes = hostile.docx(links, relationships=relationships)
    return body


@pytest.mark.parametrize("include", [True, False], ids=["links", "no-links"])
@pytest.mark.parametrize("make", [_epub_with_places, _docx_with_places], ids=["epub", "docx"])
def test_only_web_links_to_public_hosts_reach_a_documents_markdown(serve_guarded, make, include):
    """Issue 55: `![pw](file:///etc/passwd)` from an EPUB even with include_links false, Word
    links to file:///etc/passwd and http://127.0.0.2/: a client rendering the markdown may
    follow them. A dropped link leaves its text (an image its alt text)."""
    body = make()
    kind = EPUB.decode() if body.startswith(b"PK") and b"mimetype" in body[:60] else DOCX
    out = fetch(serve_guarded("/doc", body, kind), include_links=include)
    assert out["success"] is True, out
    content = out["content"]
    for name, target in PLACES:
        assert f"{name} link" in content
        linked = f"[{name} link]({target})" in content
        assert linked is (include and name == "public"), content
        if kind == EPUB.decode():
            assert f"{name} image" in content
            assert (f"![{name} image]({target})" in content) is (name == "public"), content
    assert "file:" not in content
    assert "127.0.0.2" not in content


def test_a_private_host_the_user_allows_may_be_linked(serve_guarded, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "127.0.0.1,127.0.0.2")
    out = fetch(serve_guarded("/doc", _docx_with_places(), DOCX))
    assert "[private link](http://127.0.0.2/admin)" in out["content"]
    assert "[local link](" not in out["content"]
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    out = fetch(serve_guarded("/doc2", _docx_with_places(), DOCX))
    assert "[local link](http://intranet.local/x)" in out["content"]
    assert "file:" not in out["content"]


def test_html_markdown_and_sheet_text_keep_only_web_links_to_public_hosts(serve_guarded):
    page = (
        "<html><head><title>Links</title></head><body><article><h1>Links</h1><p>"
        + "Words of the article, enough of them to be read as one. " * 20
        + "".join(f'<a href="{t}">{n} link</a> <img src="{t}" alt="{n} image"> ' for n, t in PLACES)
        + "</p></article></body></html>"
    )
    text = (
        "# Notes\n\n[file link](file:///etc/passwd) ![private image](http://127.0.0.2/i.png) "
        "<http://127.0.0.2/> [ref link][r] [public link](https://example.com/page)\n\n"
        "[r]: file:///etc/passwd\n"
    )
    cell = '<row r="1"><c r="A1" t="inlineStr"><is><t>[file link](file:///etc/passwd)</t></is></c></row>'
    contents = [
        fetch(serve_guarded(f"/{n}", body, kind))["content"]
        for n, (body, kind) in enumerate(((page.encode(), "text/html"), (text.encode(),
            "text/markdown"), (hostile.xlsx({"S": hostile.sheet(cell)}), XLSX)))
    ]  # fmt: skip
    for content in contents:
        assert "file:" not in content, content
        assert "127.0.0.2/admin" not in content, content
        assert "file link" in content
    assert "[public link](https://example.com/page)" in contents[0]
    assert "`http://127.0.0.2/`" in contents[1]  # an autolink left as code, followed by none
    assert "[public link](https://example.com/page)" in contents[1]


def _pptx_with_places() -> bytes:
    """A deck whose first slide has a run linked (a:hlinkClick) to each of PLACES."""
    runs = "".join(
        f'<a:p><a:r><a:rPr><a:hlinkClick r:id="r{name}"/></a:rPr><a:t>{name} link</a:t></a:r></a:p>'
        for name, _ in PLACES
    )
    box = hostile.text_box(2, []).replace("<a:bodyPr/>", f"<a:bodyPr/>{runs}")
    deck = zipfile.ZipFile(io.BytesIO(hostile.pptx_with(corpus.deck_pptx().body, box)))
    members = {name: deck.read(name) for name in deck.namelist()}
    rels = "ppt/slides/_rels/slide1.xml.rels"
    members[rels] = members[rels].replace(b"</Relationships>", b"".join(
        b'<Relationship Id="r%s" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/hyperlink" Target="%s" TargetMode="External"/>'
        % (name.encode(), target.encode()) for name, target in PLACES
    ) + b"</Relationships>")  # fmt: skip
    return _package(members)


def test_pdf_link_annotations_and_slides_give_no_targets(serve_guarded):
    """Held in issue 55's round: a PDF's link annotations (and its actions) and a slide's
    linked runs are not read as links, so no target of them reaches the markdown, with or
    without include_links; their text does."""
    pdf_body, deck = hostile.pdf_links([target for _, target in PLACES]), _pptx_with_places()
    for include in (True, False):
        content = fetch(serve_guarded(f"/l{include}.pdf", pdf_body, "application/pdf"),
                        include_links=include)["content"]  # fmt: skip
        assert content.startswith("[Page 1 of 1]\n\nLink 0")
        assert "](" not in content
        assert "://" not in content
        content = fetch(serve_guarded(f"/l{include}.pptx", deck, corpus.deck_pptx().kind),
                        include_links=include)["content"]  # fmt: skip
        assert all(f"{name} link" in content for name, _ in PLACES), content
        assert "](" not in content
        assert "://" not in content


# ---------------------------------------------------------------- held in issue 55's round


def _zip64(body: bytes, member: str, size: int) -> bytes:
    """The zip with `member`'s directory entry in zip64 form: its unpacked size 0xFFFFFFFF and
    the real one, `size`, in a zip64 extra field."""
    data = bytearray(body)
    name = member.encode()
    entry = data.index(b"PK\x01\x02")
    while data[entry + 46 : entry + 46 + len(name)] != name:
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 24 : entry + 28] = b"\xff\xff\xff\xff"
    extra = int.from_bytes(data[entry + 30 : entry + 32], "little")
    data[entry + 30 : entry + 32] = (extra + 12).to_bytes(2, "little")
    at = entry + 46 + len(name)
    data[at:at] = b"\x01\x00\x08\x00" + size.to_bytes(8, "little")
    end = data.rindex(b"PK\x05\x06")
    table = int.from_bytes(data[end + 12 : end + 16], "little") + 12
    data[end + 12 : end + 16] = table.to_bytes(4, "little")
    return bytes(data)


def _overlapping(body: bytes, member: str, copies: int) -> bytes:
    """The zip with `copies` more directory entries naming new members whose data is
    `member`'s own (their local header is its): an overlapping zip."""
    data = bytearray(body)
    directory, end = data.index(b"PK\x01\x02"), data.index(b"PK\x05\x06")
    name = member.encode()
    entry = directory
    while data[entry + 46 : entry + 46 + len(name)] != name:
        entry = data.index(b"PK\x01\x02", entry + 4)
    size = 46 + sum(
        int.from_bytes(data[entry + at : entry + at + 2], "little") for at in (28, 30, 32)
    )
    one = bytes(data[entry : entry + size])
    more = b"".join(one.replace(name, name[:-1] + b"%d" % (n % 10)) for n in range(copies))
    table = bytes(data[directory:end]) + more
    tail = bytearray(data[end:])
    count = int.from_bytes(tail[10:12], "little") + copies
    tail[8:10] = tail[10:12] = count.to_bytes(2, "little")
    tail[12:16] = len(table).to_bytes(4, "little")
    return bytes(data[:directory]) + table + bytes(tail)


def test_a_zip64_directory_is_read_and_its_sizes_are_held_to_the_limit(serve):
    sample = samples()["handbook.docx"]
    whole = fetch(serve("/z.docx", _zip64(sample.body, "word/document.xml", 5031), DOCX))
    assert whole["success"] is True, whole
    lying = fetch(serve("/y.docx", _zip64(sample.body, "word/document.xml", 1 << 40), DOCX))
    assert lying["error_code"] == "TOO_LARGE", lying
    assert "MiB unpacked (at most 64 MiB)" in lying["error"]


def test_overlapping_entries_count_their_size_each(serve):
    """Two hundred directory entries on one 341 KiB member: 68 MiB unpacked, as a bomb of
    overlapping entries is."""
    out = fetch(serve("/o.docx", _overlapping(corpus.report_docx().body, "word/styles.xml",
                                              200), DOCX))  # fmt: skip
    assert out["error_code"] == "TOO_LARGE", out
    assert "MiB unpacked (at most 64 MiB)" in out["error"]


def test_an_entry_that_lies_about_its_member_is_a_damaged_zip(serve):
    """Every member is read (its content says whether it is XML), so an entry whose local
    header names another member is found, whatever it is called."""
    out = fetch(serve("/p.docx", _overlapping(corpus.report_docx().body, "word/styles.xml", 2),
                      DOCX))  # fmt: skip
    assert out["error_code"] == "PARSE_ERROR", out
    assert "a damaged zip: File name in directory 'word/styles.xm0'" in out["error"]


def test_a_zip_bomb_inside_a_document_is_never_unpacked(serve):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("zeros", bytes(50 << 20))
    members = {"word/embeddings/bomb.zip": inner.getvalue()}
    out = fetch(serve("/n.docx", hostile.docx(hostile.paragraph("Outer text"), members=members),
                      DOCX))  # fmt: skip
    assert out["success"] is True, out
    assert out["content"] == "Outer text"


def _epub_with_paths(items: list[str], link: bytes = b"/etc/passwd") -> bytes:
    """An EPUB whose spine lists these hrefs, with ok.xhtml a chapter and link.xhtml stored
    as a symbolic link to `link`."""
    manifest = "".join(f'<item id="i{n}" href="{h}" media-type="application/xhtml+xml"/>'
                       for n, h in enumerate(items))  # fmt: skip
    spine = "".join(f'<itemref idref="i{n}"/>' for n in range(len(items)))
    symlink = zipfile.ZipInfo("OEBPS/link.xhtml")
    symlink.external_attr = 0o120777 << 16
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as epub:
        epub.writestr("mimetype", "application/epub+zip")
        epub.writestr("META-INF/container.xml", hostile.CONTAINER % b"OEBPS/content.opf")
        epub.writestr("OEBPS/content.opf", (
            '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata/>'
            f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
        ))  # fmt: skip
        epub.writestr("OEBPS/ok.xhtml", hostile.xhtml("<p>Kept</p>"))
        epub.writestr(symlink, link)
    return out.getvalue()


@pytest.mark.parametrize("href", ["../../../../etc/passwd", "/etc/passwd", "link.xhtml"])
def test_epub_chapter_paths_lead_nowhere_outside_the_zip(serve, href):
    """Held in issue 55's round: `../`, absolute and symbolic-link names are looked up in the
    zip alone, never on the disk."""
    out = fetch(serve("/s.epub", _epub_with_paths([href, "ok.xhtml"]), EPUB.decode()))
    assert "root:" not in json.dumps(out)


def test_a_chapter_missing_from_the_zip_is_named_and_the_rest_read(serve):
    items = ["../../../../etc/passwd", "/etc/passwd", "link.xhtml", "ok.xhtml"]
    out = fetch(serve("/m.epub", _epub_with_paths(items), EPUB.decode()))
    assert out["success"] is True, out
    assert out["content"].split("\n\n") == ["/etc/passwd", "Kept"]  # the link's own text
    assert [w["message"] for w in out["warnings"]] == [
        "The book's chapter 1 (../../../etc/passwd) is missing.",
        "The book's chapter 2 (etc/passwd) is missing.",
    ]


def test_external_relationships_alt_chunks_and_included_text_are_not_read(serve):
    relationships = (
        b'<Relationship Id="rImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/image" Target="file:///etc/passwd" TargetMode="External"/>'
        b'<Relationship Id="rAlt" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/aFChunk" Target="chunk.html"/>'
        b'<Relationship Id="rSub" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/subDocument" Target="file:///etc/passwd" TargetMode="External"/>'
    )
    body = (
        hostile.paragraph("Before")
        + '<w:p><w:r><w:pict><v:imagedata xmlns:v="urn:schemas-microsoft-com:vml" r:id="rImg"/>'
        "</w:pict></w:r></w:p>"
        + '<w:altChunk r:id="rAlt"/><w:subDoc r:id="rSub"/>'
        + "<w:p><w:fldSimple w:instr='INCLUDETEXT \"/etc/passwd\"'><w:r><w:t>cached</w:t></w:r>"
        "</w:fldSimple></w:p>" + hostile.paragraph("After")
    )
    members = {"word/chunk.html": b"<html><body><p>Alt chunk text</p></body></html>"}
    out = fetch(serve("/e.docx", hostile.docx(body, relationships=relationships,
                                              members=members), DOCX))  # fmt: skip
    assert out["success"] is True, out
    assert "root:" not in out["content"]
    assert "Alt chunk text" not in out["content"]
    assert out["content"].startswith("Before")
    assert out["content"].endswith("After")


def test_a_pdfs_actions_reach_nothing(serve, fake_server):
    """An OpenAction, a link, a launch, a form submission and JavaScript, all to this test's
    server: none is followed."""
    url = serve("/a.pdf", hostile.pdf_actions(fake_server.url), "application/pdf")
    out = fetch(url)
    assert out["content"] == "[Page 1 of 1]\n\nA page with actions"
    assert {seen.path for seen in fake_server.seen} <= {"/a.pdf", "/robots.txt"}


def test_a_page_of_10k_annotations_is_read(serve):
    out = fetch(serve("/many.pdf", hostile.pdf_annotations(10_000), "application/pdf"))
    assert out["content"] == "[Page 1 of 1]\n\nAnnotated page"


def test_a_pdf_whose_cross_references_point_at_the_wrong_bytes_is_read(serve):
    """Every entry of the table points into the header: PDFium rebuilds the table from the
    objects themselves, and each page is read in order."""
    body = hostile.pdf_broken_xref(["First page", "Second page"])
    out = fetch(serve("/broken.pdf", body, "application/pdf"))
    assert out["content"] == "[Page 1 of 2]\n\nFirst page\n\n[Page 2 of 2]\n\nSecond page"


# ---------------------------------------------------------------- the reader's own process


def _reads(*events: forked.Event, then: Any = None) -> Any:
    """A reader that yields `events`, then does `then` (raises it, or calls it)."""

    def reader() -> Any:
        yield from events
        if isinstance(then, BaseException):
            raise then
        if then is not None:
            then()

    return reader


PART = ("part", "read")


@pytest.mark.parametrize(
    ("then", "stop"),
    [
        (None, None),
        (MemoryError(), forked.Stop("memory", 2)),
        (RecursionError(), forked.Stop("failed", 2, "it is nested too deeply")),
        (ValueError("odd"), forked.Stop("failed", 2, "ValueError: odd")),
        (os.abort, forked.Stop("memory", 2, "it is damaged")),
        (
            lambda: os.kill(os.getpid(), signal.SIGSEGV),
            forked.Stop("failed", 2, "its reader stopped on it"),
        ),
        (lambda: os._exit(0), forked.Stop("failed", 2, "its reader stopped on it")),
    ],
    ids=["done", "memory", "recursion", "library", "abort", "crash", "silent"],
)
def test_how_a_reader_ends_is_what_its_read_says(then, stop):
    reader = _reads(("at", 1), PART, ("meta", {"total": 2}), ("at", 2), then=then)
    read = forked.read_apart(reader, None, 256 << 20)
    assert read == forked.Read({"total": 2}, ["read"], [], stop)


def test_a_tool_error_in_the_reader_is_the_calls():
    with pytest.raises(ToolError) as caught:
        forked.read_apart(_reads(then=ToolError(ErrorCode.TOO_LARGE, "big")), None, 1 << 30)
    assert (caught.value.code, caught.value.message) == (ErrorCode.TOO_LARGE, "big")


def test_a_reader_that_sends_too_much_is_stopped(monkeypatch):
    monkeypatch.setattr(forked, "MAX_RECEIVED", 1000)
    reader = _reads(("at", "chapter 1"), ("part", "x" * 5000), ("at", "chapter 2"))
    read = forked.read_apart(reader, None, 1 << 30)
    assert read.stop is not None
    assert read.stop.why == "memory"


def test_a_reader_is_killed_before_the_deadline(tmp_path):
    (tmp_path / "hung").touch()  # the deadline has passed from the start
    read = forked.read_apart(_reads(then=lambda: time.sleep(STALL)), _ends_when(tmp_path), 1 << 30)
    assert read == forked.Read({}, [], [], forked.Stop("time"))


def test_text_a_pdf_gives_as_lone_surrogates_is_sent_valid():
    read = forked.read_apart(_reads(("part", ["a\ud800b", {"k\udfff": "\ud83d\ude00"}])), None,
                             1 << 30)  # fmt: skip
    assert read.parts == [["a\ufffdb", {"k\ufffd": "\U0001f600"}]]


def test_a_reader_that_cannot_be_started_is_a_parse_error(monkeypatch):
    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    with pytest.raises(ToolError) as caught:
        forked.read_apart(_reads(), None, 1 << 30)
    assert caught.value.code is ErrorCode.PARSE_ERROR
    assert "no process could be started to read it (Resource temporarily" in caught.value.message


def test_explained_stops():
    memory = 1 << 30
    assert forked.Stop("time").explained("page 2", memory) == (
        ErrorCode.TOO_LARGE, "the call's time ran out while reading page 2"
    )  # fmt: skip
    assert forked.Stop("memory").explained("page 2", memory)[1] == (
        "page 2 needs more memory than one call may take (1,024 MiB, IKIGAI_WEB_MAX_MEMORY_MB)"
    )
    assert forked.Stop("failed", 2, "KeyError: 'x'").explained("slide 2", memory) == (
        ErrorCode.PARSE_ERROR, "slide 2 could not be read (KeyError: 'x')"
    )  # fmt: skip


# ---------------------------------------------------------------- each reader's own bounds


def _read(kind: str, body: bytes, reading: decode.Reading = READ) -> Any:
    if kind == "application/pdf":
        return pdf.pdf_document(body, "u", reading)
    return office.office_document(kind, body, "u", reading)


def test_a_pdf_stops_at_the_text_a_call_reads_and_says_where_to_read_on(monkeypatch):
    monkeypatch.setattr(pdf, "MAX_TEXT", 5)
    document = _read(
        "application/pdf", _pdf([[_line(f"Page text {n}", 0, 700)] for n in (1, 2, 3)])
    )
    assert document.markdown == "[Page 1 of 3]\n\nPage text 1"
    assert document.warnings[0]["message"] == (
        "This document has 3 pages and pages 1-1 were read (5 characters is the most): to read "
        'on, call again with pages "2-3".'
    )


@pytest.mark.parametrize("name", ["handbook.docx", "figures.xlsx", "review.pptx", "story.epub"])
def test_each_format_stops_at_the_text_a_call_reads(monkeypatch, name):
    from ikigai_web.fetch.reading.files import word

    monkeypatch.setattr(office_parts, "MAX_TEXT", 12)
    monkeypatch.setattr(word, "BATCH_PARAGRAPHS", 1)
    sample = samples()[name]
    document = _read(sample.kind, sample.body)
    assert document.markdown
    assert len(document.markdown.replace("[Slide 1 of 3]\n\n", "")) <= 12
    said = " ".join(w["message"] for w in document.warnings)
    assert "12 characters, the most one call reads" in said or "12 characters is the most" in said


def test_a_word_document_past_its_paragraphs_says_how_much_was_read(monkeypatch):
    from ikigai_web.fetch.reading.files import word

    monkeypatch.setattr(word, "MAX_PARAGRAPHS", 3)
    document = _read(DOCX, samples()["handbook.docx"].body)
    assert document.markdown.startswith("# Team Handbook\n\n# Getting started")
    assert document.warnings == [{"code": "TOO_LARGE", "message": (
        "This document is longer than web-fetch reads in one call (3 paragraphs, 400,000 "
        "elements): paragraphs 1-3 were read, and the rest left out."
    )}]  # fmt: skip


def test_a_workbooks_bounds(monkeypatch):
    monkeypatch.setattr(excel, "MAX_STRING_ELEMENTS", 10)
    with pytest.raises(ToolError) as caught:
        _read(XLSX, hostile.xlsx_shared_strings(10))
    assert caught.value.code is ErrorCode.TOO_LARGE
    assert "has 21 elements of shared strings, more than web-fetch reads (10)" in (
        caught.value.message
    )
    monkeypatch.setattr(excel, "MAX_SCANNED", 2)
    document = _read(XLSX, hostile.xlsx_empty_rows(5))
    assert document.markdown == ""
    assert "was read up to its row 2 " in document.warnings[0]["message"]


def test_a_decks_bounds(monkeypatch):
    from ikigai_web.fetch.reading.files import slides

    sample = samples()["review.pptx"]
    monkeypatch.setattr(slides, "MAX_SHAPES", 1)
    document = _read(sample.kind, sample.body)
    assert "Slide 2 has more than 1 shapes: its first were read." in str(document.warnings)
    monkeypatch.setattr(slides, "MAX_SLIDE_ELEMENTS", 15)
    document = _read(sample.kind, sample.body)
    assert document.markdown.startswith("[Slide 1 of 3]\n\n[Slide 2 of 3]\n\n[Slide 3 of 3]")
    assert document.warnings[0]["message"].startswith("Slide 1 was left out: it holds ")
    monkeypatch.setattr(slides, "MAX_PART_ELEMENTS", 15)
    with pytest.raises(ToolError) as caught:
        _read(sample.kind, sample.body)
    assert caught.value.code is ErrorCode.TOO_LARGE
    assert "The deck at u has a part (" in caught.value.message


def test_a_reader_stopped_before_it_read_anything_says_where(monkeypatch, tmp_path):
    (tmp_path / "hung").touch()  # out of time from the start
    late = READ._replace(deadline=_ends_when(tmp_path))
    for kind, body, said in (
        ("application/pdf", samples()["report.pdf"].body, "The PDF at u could not be read"),
        (DOCX, samples()["handbook.docx"].body, "The document at u could not be read"),
        (samples()["review.pptx"].kind, samples()["review.pptx"].body, "The deck at u could not"),
    ):
        with pytest.raises(ToolError) as caught:
            _read(kind, body, late)
        assert caught.value.code is ErrorCode.TOO_LARGE
        assert caught.value.message.startswith(said)
        assert "the call's time ran out while reading " in caught.value.message


def test_a_first_page_that_stops_the_reader_names_the_pages_after_it(monkeypatch):
    def fails(_pdf: Any, index: int) -> Any:
        raise MemoryError

    monkeypatch.setattr(pdf, "_page", fails)
    body = _pdf([[_line("one", 0, 700)], [_line("two", 0, 700)]])
    with pytest.raises(ToolError) as caught:
        _read("application/pdf", body)
    assert caught.value.message.endswith(
        "page 1 needs more memory than one call may take (1,024 MiB, IKIGAI_WEB_MAX_MEMORY_MB). "
        'The pages after it may be read: pages "2-".'
    )


def test_links_that_cannot_be_parsed_or_are_script_handlers_are_dropped():
    from ikigai_web.fetch.reading.links import web_links_only

    text = '[odd](http://[::1/x) <img src="https://example.com/i.png" onerror="x()"> \ue000'
    assert web_links_only(text, lambda _host: True) == (
        'odd <img src="https://example.com/i.png"> '
    )


def test_a_private_use_character_cannot_keep_the_link_around_an_image():
    """The marks that set a kept image aside are private-use characters: text that holds one
    (to stop the marking) still has the link around its image judged."""
    from ikigai_web.fetch.reading.links import web_links_only

    public = lambda host: host == "pub.example"  # noqa: E731 - the policy, inline
    linked = "[![x](https://pub.example/i.png)](http://10.0.0.1/admin)"
    for text in (linked, "\ue000 " + linked, linked + " \ue0011\ue001"):
        kept = web_links_only(text, public)
        assert "10.0.0.1" not in kept
        assert "![x](https://pub.example/i.png)" in kept


@pytest.mark.parametrize("encoding", ["zlib_codec", "base64", "hex", "rot13", "no-such-codec"])
def test_a_part_declaring_a_codec_that_is_no_text_encoding_is_a_parse_error(encoding):
    head = f'<?xml version="1.0" encoding="{encoding}"?><w:document/>'.encode()
    with pytest.raises(ToolError) as caught:
        archive._markup_encoding(head, "word/document.xml")
    assert caught.value.code is ErrorCode.PARSE_ERROR
    assert f"its encoding, {encoding}, is not one web-fetch reads" in caught.value.message
