"""Text summaries as safe HTML: markdown rendered, then cleaned to an allowlist (as TensorBoard's text
plugin does with ``markdown`` + ``bleach``).

Anything not on the allowlist is escaped and shown as text (a ``<script>`` in a summary appears as the
characters ``<script>``, it never runs); attributes other than ``href`` / ``title`` / ``alt`` / ``src`` are
dropped; links keep only http(s)/mailto/relative targets, and images only inline ``data:image/`` sources,
so the report never fetches anything from a network.
"""
from __future__ import annotations

import html
from html.parser import HTMLParser

import numpy as np

ALLOWED_TAGS = frozenset("""a abbr b blockquote br code del div em h1 h2 h3 h4 h5 h6 hr i img li ol p pre
    s span strong sub sup table tbody td tfoot th thead tr ul""".split())
VOID_TAGS = frozenset({"br", "hr", "img"})
ALLOWED_ATTRS = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "abbr": {"title"},
                 "td": {"align"}, "th": {"align"}}
SAFE_LINK_SCHEMES = ("http:", "https:", "mailto:", "#")


def escape(text: str) -> str:
    return html.escape(str(text), quote=True)


def markdown_to_safe_html(source: str) -> str:
    """Markdown (tables, fenced code) → HTML with only allowlisted tags and attributes."""
    source = str(source).replace("\x00", "")
    try:
        import markdown
    except ImportError:  # markdown ships with tensorboard; without it show the text verbatim
        return "<pre>%s</pre>" % escape(source)
    rendered = markdown.markdown(source, extensions=["tables", "fenced_code"], output_format="html")
    return clean(rendered)


def clean(fragment: str) -> str:
    """Re-emit an HTML fragment keeping allowlisted markup; everything else becomes visible text."""
    cleaner = _Cleaner()
    cleaner.feed(fragment)
    cleaner.close()
    return cleaner.result()


class _Cleaner(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED_TAGS:
            self.out.append(escape(self.get_starttag_text() or "<%s>" % tag))
            return
        kept = []
        for name, value in attrs:
            if name not in ALLOWED_ATTRS.get(tag, ()) or value is None:
                continue
            if name == "href" and not _safe_href(value):
                continue
            if name == "src" and not value.strip().lower().startswith("data:image/"):
                continue
            kept.append(' %s="%s"' % (name, escape(value)))
        if tag == "a":
            kept.append(' rel="noopener noreferrer"')
        self.out.append("<%s%s>" % (tag, "".join(kept)))
        if tag not in VOID_TAGS:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag in self.open and tag not in VOID_TAGS and self.open[-1] == tag:
            self.open.pop()
            self.out.append("</%s>" % tag)

    def handle_endtag(self, tag):
        if tag in ALLOWED_TAGS and tag in self.open:
            while self.open:  # close anything left open inside it
                t = self.open.pop()
                self.out.append("</%s>" % t)
                if t == tag:
                    break
        elif tag not in VOID_TAGS:
            self.out.append(escape("</%s>" % tag))

    def handle_data(self, data):
        self.out.append(escape(data))

    def handle_entityref(self, name):
        self.out.append("&%s;" % name if name.isalnum() else escape("&" + name))

    def handle_charref(self, name):
        self.out.append("&#%s;" % name if name.lstrip("xX").isalnum() else escape("&#" + name))

    def handle_comment(self, data):
        pass

    def handle_decl(self, decl):
        self.out.append(escape("<!%s>" % decl))

    def handle_pi(self, data):
        self.out.append(escape("<?%s>" % data))

    def unknown_decl(self, data):
        self.out.append(escape("<![%s]>" % data))

    def result(self) -> str:
        rest = self.rawdata  # unparsed tail (e.g. an unterminated "<script")
        if rest:
            self.out.append(escape(rest))
            self.rawdata = ""
        return "".join(self.out) + "".join("</%s>" % t for t in reversed(self.open))


def _safe_href(value: str) -> bool:
    v = "".join(value.split()).lower()
    if ":" not in v.split("/")[0]:
        return True  # relative link or fragment
    return v.startswith(SAFE_LINK_SCHEMES)


def text_to_safe_html(text) -> str:
    """A text summary's value as TensorBoard shows it: a string as markdown; a 1-D or 2-D array of
    strings as a table whose cells are markdown; higher ranks as 2-D slices."""
    arr = np.asarray(text, dtype=object)
    if arr.ndim == 0:
        return markdown_to_safe_html(_as_str(arr.item()))
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim > 2:
        arr = arr.reshape(-1, arr.shape[-1])
    rows = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % markdown_to_safe_html(_as_str(c)) for c in row)
                   for row in arr)
    return '<table class="text-table"><tbody>%s</tbody></table>' % rows


def _as_str(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
