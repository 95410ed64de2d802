"""A report page read back with html.parser, as the tests look at it.

    page = ReadPage(html_text)
    page.row_with("y = x @ w").kinds      # {"line-graph"}
    page.row_with("print(").rules         # ("CRV003",)
    page.summaries                        # the <details> headings: "FX code of graph 1 (4 ops)", ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Row:
    number: int
    kinds: set[str]  # line-graph, line-rule, line-cost, line-eager, line-python
    region: str | None
    rules: tuple[str, ...]
    title: str
    cells: dict[str, str] = field(default_factory=dict)  # td class -> its text

    @property
    def code(self) -> str:
        return self.cells.get("code", "")

    @property
    def tag(self) -> str:
        return self.cells.get("tag", "")

    @property
    def note(self) -> str:
        return self.cells.get("note", "")


class ReadPage(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[Row] = []
        self.ids: set[str] = set()
        self.tags: set[str] = set()
        self.links: list[str] = []  # every href and src
        self.summaries: list[str] = []
        self.pre: list[str] = []  # the text of every <pre> (FX code, guards)
        self.headings: list[str] = []  # h1-h4
        self.text = ""
        self._row: Row | None = None
        self._cell: str | None = None
        self._capture: list[tuple[str, list[str]]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.add(tag)
        if "id" in attributes:
            self.ids.add(attributes["id"] or "")
        for name in ("href", "src"):
            if name in attributes:
                self.links.append(attributes[name] or "")
        classes = set((attributes.get("class") or "").split())
        if tag == "tr" and "line" in classes:
            rules = tuple((attributes.get("data-rule") or "").split())
            self._row = Row(0, {c for c in classes if c.startswith("line-")}, attributes.get("data-region"), rules,
                            attributes.get("title") or "")
            self.rows.append(self._row)
        elif tag == "td" and self._row is not None:
            self._cell = next(iter(classes), "")
            self._row.cells[self._cell] = ""
        if tag in ("summary", "pre", "h1", "h2", "h3", "h4"):
            self._capture.append((tag, []))

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None
        elif tag == "tr":
            if self._row is not None and self._row.cells.get("no", "").strip().isdigit():
                self._row.number = int(self._row.cells["no"])
            self._row = None
        if self._capture and self._capture[-1][0] == tag:
            _, parts = self._capture.pop()
            text = "".join(parts).strip()
            if tag == "summary":
                self.summaries.append(text)
            elif tag == "pre":
                self.pre.append(text)
            else:
                self.headings.append(" ".join(text.split()))

    def handle_data(self, data):
        self.text += data
        if self._row is not None and self._cell is not None:
            self._row.cells[self._cell] += data
        for _, parts in self._capture:
            parts.append(data)

    def row_with(self, code: str) -> Row:
        """The row whose source text holds `code` (exactly one)."""
        found = [row for row in self.rows if code in row.code]
        assert len(found) == 1, f"{len(found)} rows hold {code!r}: {[row.code for row in found]}"
        return found[0]


def assert_self_contained(page: ReadPage) -> None:
    """No script, no stylesheet or image fetched, links only within the page or to its siblings."""
    assert not page.tags & {"script", "link", "img", "iframe", "object", "embed"}, page.tags
    for link in page.links:
        assert "://" not in link and not link.startswith("//"), link
