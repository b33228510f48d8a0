"""The rendered documentation and the asv dashboard, opened in headless Chromium.

A docs build that passes can still render broken math, missing figures or an
empty API page; these tests open the pages as a reader's browser does
(Playwright driving Debian's ``/usr/bin/chromium``) and check what is drawn.

The pages come from, in order of preference:

* ``MCSPARSE_DOCS_HTML``: an HTML build of ``doc/`` (CI passes the output of
  its ``make -C doc html``, quick mode); else the docs are built here in
  quick mode (a few minutes; needs the ``doc`` extra);
* ``MCSPARSE_ASV_HTML``: an ``asv publish`` output; else
  ``asv_benchmarks/dashboard.sh`` benchmarks the last two commits in a
  temporary asv directory and publishes them (a few minutes; needs the
  ``bench`` extra and a git checkout).

Without Playwright, Chromium, Sphinx or asv the tests are skipped, unless
``MCSPARSE_REQUIRE_BROWSER=1`` (set by ``.ci/run``), which makes a missing
tool a failure. Screenshots go to ``MCSPARSE_SCREENSHOTS`` (CI keeps them
under ``build/screenshots``), else to pytest's temporary directory; they are
build artefacts, not committed.
"""

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQUIRE = os.environ.get("MCSPARSE_REQUIRE_BROWSER", "0") not in ("", "0")
CHROMIUM = os.environ.get("MCSPARSE_CHROMIUM", "/usr/bin/chromium")

# The key pages of the issue, relative to the HTML root.
SHAREBOOST_GUIDE = "user_guide/shareboost.html"
SHAREBOOST_API = "generated/mcsparse.ShareBoostClassifier.html"
GALLERY_EXAMPLE = "auto_examples/shareboost/plot_pendigits_path.html"


def _missing(what):
    """Fail under ``MCSPARSE_REQUIRE_BROWSER=1``, else skip."""
    if REQUIRE:
        pytest.fail(f"{what} (MCSPARSE_REQUIRE_BROWSER=1)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install '.[doc]')")
    if not Path(CHROMIUM).exists():
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        chromium = playwright.chromium.launch(executable_path=CHROMIUM,
                                              args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    path = os.environ.get("MCSPARSE_SCREENSHOTS")
    path = Path(path) if path else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def serve():
    """Serve folders over loopback HTTP, as a reader's web server would."""
    servers = []

    def start(folder):
        handler = functools.partial(_QuietHandler, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _run(cmd, cwd, env=None, timeout=1800):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({result.returncode}):\n"
                    f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


@pytest.fixture(scope="module")
def docs_html(tmp_path_factory):
    """The folder of an HTML build of the docs."""
    html = os.environ.get("MCSPARSE_DOCS_HTML")
    if html:
        html = Path(html)
        if not (html / "index.html").exists():
            pytest.fail(f"MCSPARSE_DOCS_HTML={html} has no index.html")
    else:
        for module in ("sphinx", "sphinx_gallery", "numpydoc", "pydata_sphinx_theme"):
            try:
                __import__(module)
            except ImportError:
                _missing(f"{module} is not installed (pip install '.[doc]')")
        html = tmp_path_factory.mktemp("docs") / "html"
        # Quick mode, warnings as errors, as `make -C doc html`; the build
        # writes the gallery into doc/ as make does.
        _run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going",
              "doc", str(html)], cwd=ROOT, env={**os.environ, "MCSPARSE_FULL": "0"})
    return html


@pytest.fixture(scope="module")
def docs_url(serve, docs_html):
    return serve(docs_html)


def _open(browser, url, width=1280):
    """Open ``url``; collect JavaScript errors and failed requests."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems = []
    page.on("pageerror", lambda exc: problems.append(f"JavaScript error: {exc}"))
    page.on("requestfailed", lambda req: problems.append(
        f"request failed: {req.url} ({req.failure})"))
    page.on("response", lambda resp: problems.append(
        f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None)
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: {response and response.status}"
    page.wait_for_load_state("networkidle")
    return page, problems


def _shot(page, screenshots, name):
    path = screenshots / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000, f"{path} is nearly empty"


def test_index_page(browser, docs_url, screenshots):
    page, problems = _open(browser, docs_url + "index.html")
    assert "mcsparse" in page.title()
    text = page.inner_text("main")
    assert "ShareBoost" in text
    # The navigation reaches the user guide, the API and the gallery.
    hrefs = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
    for target in ("user_guide/index.html", "api.html", "auto_examples/index.html"):
        assert any(h and h.endswith(target) for h in hrefs), target
    _shot(page, screenshots, "index")
    assert problems == []


def test_user_guide_math_is_rendered(browser, docs_url, screenshots):
    page, problems = _open(browser, docs_url + SHAREBOOST_GUIDE)
    # MathJax 3 typesets after load; startup.promise resolves when it is done.
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise")
    n_math = page.locator("mjx-container").count()
    n_display = page.locator("mjx-container[display='true']").count()
    assert n_math >= 20 and n_display >= 5, (n_math, n_display)
    # No TeX error boxes, and no TeX source left for the reader to see.
    assert page.locator("mjx-merror").count() == 0
    text = page.inner_text("article")
    for raw in ("\\(", "\\)", "\\[", "\\]", "\\frac", "\\sum"):
        assert raw not in text, f"raw TeX {raw!r} left on the page"
    # Typeset formulas have a size (a CHTML font that failed to load gives 0).
    widths = page.eval_on_selector_all(
        "mjx-container[display='true']", "els => els.map(e => e.getBoundingClientRect().width)")
    assert min(widths) > 20, widths
    _shot(page, screenshots, "user_guide_shareboost")
    assert problems == []


def test_api_page_of_shareboost(browser, docs_url, screenshots):
    page, problems = _open(browser, docs_url + SHAREBOOST_API)
    signature = page.locator("dt[id='mcsparse.ShareBoostClassifier']")
    assert signature.count() == 1
    text = page.inner_text("article")
    for section in ("Parameters", "Attributes", "Examples"):
        assert section in text, section
    for name in ("n_features_to_select", "alpha", "coef_", "selected_features_"):
        assert name in text, name
    for method in ("fit", "predict", "predict_proba", "decision_function", "staged_predict"):
        assert page.locator(f"dt[id='mcsparse.ShareBoostClassifier.{method}']").count() == 1, method
    # The minigallery links to the examples that use the class.
    thumbnails = page.locator(".sphx-glr-thumbcontainer a")
    assert thumbnails.count() >= 3
    _shot(page, screenshots, "api_ShareBoostClassifier")
    assert problems == []


# Words a reader of the published docs cannot follow: the project's private
# reading notes and data folder, and its issue tracker's vocabulary.
INTERNAL_REFERENCES = re.compile(r"NOTES\.md|\bshared/|\bissues?\b", re.IGNORECASE)


def _visible_text(html):
    """The text of an HTML page, without its tags, scripts and styles."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.DOTALL | re.IGNORECASE)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def internal_references(html_root):
    """``(page, excerpt)`` for every internal reference in the built pages."""
    found = []
    for page in sorted(Path(html_root).rglob("*.html")):
        if page.relative_to(html_root).parts[0] in ("_sources", "_static", "_modules"):
            continue
        text = _visible_text(page.read_text(encoding="utf-8", errors="replace"))
        for match in INTERNAL_REFERENCES.finditer(text):
            excerpt = text[max(0, match.start() - 50):match.end() + 30]
            found.append((str(page.relative_to(html_root)), excerpt))
    return found


def test_internal_reference_finder(tmp_path):
    """The scan below finds what it looks for, in the text and not in the markup."""
    (tmp_path / "a.html").write_text(
        '<p>as <code>NOTES.md</code> says</p><script>var issue = 1;</script>'
        '<p>see shared/datasets</p><a href="shared/x.html">fine</a><p>Tissues</p>')
    found = [excerpt for _, excerpt in internal_references(tmp_path)]
    assert len(found) == 2 and "NOTES.md" in found[0] and "shared/datasets" in found[1]


def test_no_internal_references(docs_html):
    """No page points the reader at the project's notes, data folder or issues."""
    found = internal_references(docs_html)
    assert not found, "\n".join(f"{page}: ...{excerpt}..." for page, excerpt in found)


# A commit hash (7 to 40 hex digits, letters and digits both) or a rerun's
# "earlier that day": history, which belongs in the appendix or the changelog;
# "17.1 / 13.5": several measurements in one cell.
_HISTORY_IN_CELL = re.compile(r"earlier that day|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"
                              r"|\d%?\s*/\s*\d")


def history_in_table_cells(html_root, pages):
    """``(page, cell text)`` for each table cell of ``pages`` that holds history."""
    found = []
    for name in pages:
        html = (Path(html_root) / name).read_text(encoding="utf-8")
        for cell in re.findall(r"<td\b[^>]*>(.*?)</td>", html, flags=re.DOTALL):
            text = _visible_text(cell).strip()
            if _HISTORY_IN_CELL.search(text):
                found.append((name, text[:100]))
    return found


def test_history_in_table_cells_finder(tmp_path):
    (tmp_path / "p.html").write_text(
        "<table><tr><td>131 s</td><td>226 s at commit c028420</td>"
        "<td>884 s earlier that day</td><td>1.1e-05</td><td>decade</td>"
        "<td>17.1 / 13.5 / 13.2</td><td>x / 100</td></tr></table>")
    assert [t for _, t in history_in_table_cells(tmp_path, ["p.html"])] == [
        "226 s at commit c028420", "884 s earlier that day", "17.1 / 13.5 / 13.2"]


def test_reference_pages_keep_history_out_of_their_tables(docs_html):
    """The results, performance and comparison pages give one current number a cell."""
    found = history_in_table_cells(docs_html, ["results.html", "performance.html",
                                               "comparison.html"])
    assert not found, found


# page: the number of tables it shows at least
RESULT_PAGES = {"results.html": 8, "performance.html": 1, "comparison.html": 5,
                "user_guide/mkl.html": 1}


def test_results_pages_fit_their_column(browser, docs_url, screenshots):
    """At 1400 px no table or code block of the results pages is wider than its column."""
    for name, n_tables in RESULT_PAGES.items():
        page, problems = _open(browser, docs_url + name, width=1400)
        tables = page.locator("article table").count()
        assert tables >= n_tables, (name, tables)
        overflow = page.eval_on_selector_all(
            "article table, article pre",
            """els => els.map(e => {
                const column = e.closest('article').getBoundingClientRect();
                const box = e.getBoundingClientRect();
                let scroller = e;  // the theme wraps tables in a scrolling div
                while (scroller && scroller.scrollWidth <= scroller.clientWidth + 1
                       && scroller.tagName !== 'ARTICLE') scroller = scroller.parentElement;
                return [e.tagName, e.innerText.slice(0, 60), box.right - column.right,
                        scroller && scroller.tagName !== 'ARTICLE'];
            })""")
        bad = [o for o in overflow if o[2] > 1 or o[3]]
        assert not bad, (name, bad)
        _shot(page, screenshots, name.replace(".html", ""))
        assert problems == []
        page.close()


# --------------------------------------------------------------------------
# Nothing clipped, nothing hidden, on every page
#
# A code block, a table or a display equation must fit the text column: its
# box ends inside the column; a code block wraps its long lines (doc/_static/
# mcsparse.css), a table or a formula wider than its box scrolls inside it
# (overflow auto or scroll) and is not cut (overflow hidden or clip) or left
# to spill. The page itself has no sideways scroll, and a sidebar column that
# is shown has links in it.

_LAYOUT_PROBLEMS_JS = """() => {
  const bad = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1)
    bad.push(`the page scrolls sideways (${doc.scrollWidth} px in ${doc.clientWidth})`);
  // a sidebar column shown without links to pages or sections in it
  for (const [sel, links] of [['.bd-sidebar-primary', 'nav a.reference'],
                              ['.bd-sidebar-secondary', 'a']]) {
    const bar = document.querySelector(sel);
    if (bar && bar.getBoundingClientRect().width > 0 && getComputedStyle(bar).display !== 'none'
        && bar.querySelectorAll(links).length === 0)
      bad.push(`${sel} is an empty column of ${Math.round(bar.getBoundingClientRect().width)} px`);
  }
  const column = document.querySelector('article.bd-article') || document.querySelector('article');
  if (!column) return bad;
  const right = column.getBoundingClientRect().right;
  if (right > doc.clientWidth + 1) bad.push(`the text column ends ${Math.round(right - doc.clientWidth)} px beyond the window`);
  const overflowX = el => getComputedStyle(el).overflowX;
  const scrolls = el => ['auto', 'scroll'].includes(overflowX(el));
  const tag = el => `<${el.tagName.toLowerCase()} class="${el.className}">`;
  for (const e of column.querySelectorAll('pre, table, mjx-container[display="true"]')) {
    const box = e.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;  // not shown (a collapsed block)
    const what = `${e.tagName.toLowerCase()} "${e.innerText.trim().replace(/\\s+/g, ' ').slice(0, 50)}"`;
    let cut = null;
    if (e.scrollWidth > e.clientWidth + 1 && (e.tagName === 'PRE' || !scrolls(e))) {
      // its own content is wider than its box: a code block wraps its lines
      // (one that scrolls hides their ends at first sight); a table or a
      // formula may scroll
      cut = e.tagName === 'PRE'
        ? `hides ${e.scrollWidth - e.clientWidth} px of its lines (overflow-x ${overflowX(e)})`
        : `is cut by ${tag(e)} (overflow-x ${overflowX(e)})`;
    } else {
      // its box is wider than an ancestor's: one that scrolls holds it, one
      // that hides or clips cuts it; past the column it sticks out
      for (let el = e.parentElement; el; el = el.parentElement) {
        const r = el.getBoundingClientRect();
        if (el === column || el === document.body) {
          if (box.right > right + 1) cut = `sticks out of the column by ${Math.round(box.right - right)} px`;
          break;
        }
        if (box.right <= r.right + 1) continue;
        if (scrolls(el)) break;
        if (overflowX(el) !== 'visible') { cut = `is cut by ${tag(el)} (overflow-x ${overflowX(el)})`; break; }
      }
    }
    if (cut) bad.push(`${what} ${cut}`);
  }
  return bad;
}"""

LAYOUT_WIDTHS = (1400, 1000)


def _layout_problems(page):
    """What is clipped or hidden on the page as it is laid out now."""
    # MathJax typesets after load; startup.promise resolves when it is done.
    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise "
                  "? MathJax.startup.promise.then(() => true) : true")
    return page.evaluate(_LAYOUT_PROBLEMS_JS)


def _layout_at_both_widths(page, url):
    """``{width: problems}`` for ``url``, loaded once and laid out at each width."""
    found = {}
    page.set_viewport_size({"width": LAYOUT_WIDTHS[0], "height": 900})
    page.goto(url, wait_until="load")
    for width in LAYOUT_WIDTHS:
        if width != LAYOUT_WIDTHS[0]:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_timeout(150)  # mcsparse.js refits the formulas on resize
        found[width] = _layout_problems(page)
    return found


def _built_pages(html_root):
    """Every page of the build a reader opens (not the search and index pages)."""
    skip_dirs = {"_sources", "_static", "_modules", "_images", "_downloads"}
    return sorted(str(p.relative_to(html_root)) for p in Path(html_root).rglob("*.html")
                  if p.relative_to(html_root).parts[0] not in skip_dirs
                  and p.name not in ("search.html", "genindex.html", "py-modindex.html"))


def test_every_page_fits_at_both_widths(browser, docs_html, docs_url):
    """At 1400 and 1000 px, no code block, table or equation is cut, no sidebar empty."""
    pages = _built_pages(docs_html)
    assert len(pages) >= 30, pages
    page = browser.new_page()
    # the figures do not change the layout of the text column: not loaded
    page.route(re.compile(r".*\.(png|jpg|jpeg|svg|gif)$"), lambda route: route.abort())
    bad = {}
    for name in pages:
        for width, problems in _layout_at_both_widths(page, docs_url + name).items():
            if problems:
                bad[f"{name} at {width} px"] = problems
    page.close()
    assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())


# Injected into a copy of a page (the ShareBoost guide): a code block whose box cuts its long line
# (what the theme did to getting started's blocks), and a display equation in
# a container that cuts it (what it did to the ShareBoost guide's F(W, b)).
_CLIPPED_CODE = ('<div class="highlight"><pre style="overflow-x: hidden; white-space: pre">'
                 'clf = ShareBoostClassifier(n_features_to_select=40)' + ".fit(X_train, y_train)" * 8
                 + '</pre></div>')
_CLIPPED_MATH = ('<style>#injected-math mjx-container { overflow: hidden !important; }</style>'
                 '<div id="injected-math" class="math notranslate nohighlight">\\[F(W, b) = '
                 + " + ".join(f"\\ell(W x_{{{i}}} + b, y_{{{i}}})" for i in range(40))
                 + '\\]</div>')
_WIDE_CODE = ('<div class="highlight"><pre>clf = ShareBoostClassifier()'
              + ".fit(X_train, y_train)" * 8 + '</pre></div>')


@pytest.mark.parametrize("injected, expected", [
    (_CLIPPED_CODE, r'pre "clf = ShareBoostClassifier.* hides \d+ px of its lines'),
    (_CLIPPED_MATH, r'mjx-container ".* (is cut by|sticks out)'),
    ('<pre style="width: 3000px; overflow: visible">' + "x" * 40 + "</pre>",
     r"sticks out of the column"),
    (_WIDE_CODE, None),  # a long line that scrolls inside its block is fine
])
def test_layout_check_finds_an_injected_cut(browser, docs_html, docs_url, injected, expected):
    """The check above fails on a clipped block or equation injected into a real page."""
    # the ShareBoost guide: a page with math, so MathJax loads and typesets
    original = (Path(docs_html) / SHAREBOOST_GUIDE).read_text(encoding="utf-8")
    assert "<article" in original
    body = re.sub(r"(<article[^>]*>)", lambda m: m.group(1) + injected, original, count=1)
    page = browser.new_page()
    # served at the page's own address, so its theme, CSS and MathJax load as usual
    page.route(re.compile(r".*/user_guide/shareboost\.html\?injected$"),
               lambda route: route.fulfill(body=body, content_type="text/html"))
    found = _layout_at_both_widths(page, docs_url + SHAREBOOST_GUIDE + "?injected")
    page.close()
    for width, problems in found.items():
        if expected is None:
            assert problems == [], (width, problems)
        else:
            assert any(re.search(expected, p) for p in problems), (width, problems)


def test_shareboost_guide_formulas_fit_without_scrolling(browser, docs_url):
    """The guide's display formulas (F(W, b) among them) are scaled to the column, not cut."""
    page = browser.new_page()
    page.goto(docs_url + SHAREBOOST_GUIDE, wait_until="load")
    for width in LAYOUT_WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(150)  # mcsparse.js refits the formulas on resize
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
        wide = page.eval_on_selector_all(
            "mjx-container[display='true']",
            "els => els.filter(e => e.scrollWidth > e.clientWidth + 1)"
            ".map(e => [e.innerText.replace(/\\s+/g, '').slice(0, 20), e.scrollWidth, e.clientWidth])")
        assert wide == [], (width, wide)
    page.close()


def test_navbar_shows_the_main_sections(browser, docs_url):
    """Getting started, user guide, examples, results and API are in the navbar, not under "More"."""
    page = browser.new_page()
    for width in LAYOUT_WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(docs_url + "index.html", wait_until="load")
        shown = page.eval_on_selector_all(
            ".bd-header .navbar-header-items .navbar-nav > li.nav-item > a.nav-link",
            "els => els.filter(e => e.getBoundingClientRect().width > 0)"
            ".map(e => e.innerText.trim())")
        for title in ("Getting started", "User guide", "Examples", "Results", "API reference"):
            assert title in shown, (width, shown)
    page.close()


def _gallery_pages(docs_url, browser):
    page, _ = _open(browser, docs_url + "auto_examples/index.html")
    hrefs = page.eval_on_selector_all(
        ".sphx-glr-thumbcontainer a", "els => els.map(e => e.href)")
    page.close()
    return sorted(set(h.split("#")[0] for h in hrefs))


def _assert_example_rendered(page, url):
    """Every figure of a gallery page loaded, and its printed output is there."""
    figures = page.eval_on_selector_all(
        "img.sphx-glr-single-img, img.sphx-glr-multi-img",
        "els => els.map(e => [e.currentSrc, e.complete, e.naturalWidth, e.naturalHeight])")
    assert figures, f"{url}: no figure"
    for src, complete, width, height in figures:
        assert complete and width > 100 and height > 100, (url, src, width, height)
    output = page.locator(".sphx-glr-script-out pre")
    assert output.count() >= 1 and output.first.inner_text().strip(), f"{url}: no printed output"


def test_gallery_example_figure_loads(browser, docs_url, screenshots):
    page, problems = _open(browser, docs_url + GALLERY_EXAMPLE)
    _assert_example_rendered(page, GALLERY_EXAMPLE)
    _shot(page, screenshots, "gallery_pendigits_path")
    assert problems == []


def test_every_gallery_example_has_its_figure_and_output(browser, docs_url):
    """Each paper reproduction shows its plot(s) and its printed comparison."""
    pages = _gallery_pages(docs_url, browser)
    assert len(pages) >= 10, pages
    for url in pages:
        page, problems = _open(browser, url)
        _assert_example_rendered(page, url)
        assert problems == [], (url, problems)
        page.close()


# --------------------------------------------------------------------------
# asv dashboard
#
# The page `asv publish` writes loads jQuery, flot, bootstrap, stupidtable and
# blueimp-md5 from public CDNs, which the test machine cannot reach.
# ``asv_benchmarks/dashboard.sh`` points it at Debian's packaged copies of the
# same libraries (``asv_benchmarks/offline_html.py``; the ``libjs-*``
# packages ``.ci/run`` installs); the browser below refuses every request off
# this machine, so the dashboard is tested as a reader opens it offline.

sys.path.insert(0, str(ROOT / "asv_benchmarks"))
import offline_html  # noqa: E402


def _current_branch():
    out = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=ROOT,
                         capture_output=True, text=True)
    return out.stdout.strip() or "HEAD"


@pytest.fixture(scope="module")
def dashboard(serve, tmp_path_factory):
    """An ``asv publish`` output with two or more commits, served over HTTP."""
    missing = offline_html.missing_stand_ins()
    if missing:
        _missing(f"no {', '.join(missing)} under {offline_html.DEBIAN_JS} "
                 f"(apt-get install {offline_html.DEBIAN_PACKAGES})")
    html = os.environ.get("MCSPARSE_ASV_HTML")
    if html:
        if not (Path(html) / "index.html").exists():
            pytest.fail(f"MCSPARSE_ASV_HTML={html} has no index.html: asv publish did not run")
        # a copy, made offline as dashboard.sh does
        copy = tmp_path_factory.mktemp("asv") / "html"
        shutil.copytree(html, copy)
        offline_html.make_offline(copy)
        html = copy
    else:
        if shutil.which("asv") is None:
            _missing("asv is not installed (pip install '.[bench]')")
        if not (ROOT / ".git").exists():
            _missing("not a git checkout: asv benchmarks commits")
        work = tmp_path_factory.mktemp("asv")
        config = json.loads((ROOT / "asv_benchmarks" / "asv.conf.json").read_text())
        branch = _current_branch()
        config.update(repo=str(ROOT), branches=[branch],
                      benchmark_dir=str(ROOT / "asv_benchmarks" / "benchmarks"),
                      env_dir=str(work / "env"), results_dir=str(work / "results"),
                      html_dir=str(work / "html"))
        (work / "asv.conf.json").write_text(json.dumps(config))
        # The ShareBoost fit and one Cython module (the stump scan), quick
        # sizes, on the last two commits.
        env = {**os.environ, "ASV_CONFIG": str(work / "asv.conf.json"), "NO_PREVIEW": "1",
               "MCSPARSE_BENCH_QUICK": "1", "DASHBOARD_REV": branch, "ASV_QUICK": "1"}
        _run(["bash", str(ROOT / "asv_benchmarks" / "dashboard.sh"), "2",
              r"ShareBoostPendigits\.(time_fit|track_test_score)|StumpScan\.time_scan"],
             cwd=ROOT, env=env)
        html = work / "html"
    if not (html / "index.html").exists():
        pytest.fail(f"{html} has no index.html: asv publish did not run")
    return serve(html)


def _open_dashboard(browser, url):
    """Open the dashboard with every request off this machine refused."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda exc: errors.append(f"JavaScript error: {exc}"))

    def refuse(route):
        errors.append(f"request off this machine: {route.request.url}")
        route.abort()

    page.route(re.compile(r"https?://(?!127\.0\.0\.1[:/]).*"), refuse)
    page.goto(url + "index.html", wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, errors


def test_offline_html_points_the_page_at_local_copies(tmp_path):
    """Each CDN library of asv's page is replaced by its local copy, integrity dropped."""
    try:
        import asv
        asv_www = Path(asv.__file__).parent / "www"
    except ImportError:
        asv_www = None
    debian = tmp_path / "debian"
    for name in offline_html.CDN_STAND_INS.values():
        (debian / name).parent.mkdir(parents=True, exist_ok=True)
        (debian / name).write_text(f"/* {name} */")
    html = tmp_path / "html"
    html.mkdir()
    if asv_www is not None and (asv_www / "index.html").exists():
        shutil.copyfile(asv_www / "index.html", html / "index.html")
    else:  # the two kinds of tag asv's page has
        (html / "index.html").write_text(
            '<script src="https://code.jquery.com/jquery-3.3.1.min.js" integrity="sha256-x" '
            'crossorigin="anonymous" onerror="f()"></script>\n<link rel="stylesheet" '
            'href="https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css" '
            'integrity="sha256-y" crossorigin="anonymous">')
    replaced = offline_html.make_offline(html, debian_js=debian)
    text = (html / "index.html").read_text()
    assert replaced and not re.search(r'<(script|link)\b[^>]*(src|href)="https?://', text), text
    assert "integrity=" not in text and "crossorigin=" not in text
    for name in replaced:
        assert f'"vendor/{name}"' in text and (html / "vendor" / name).is_file(), name
    # an unknown CDN library is refused, not left to fail in the reader's browser
    (html / "index.html").write_text('<script src="https://example.org/new.js"></script>')
    with pytest.raises(ValueError, match="new.js"):
        offline_html.make_offline(html, debian_js=debian)


@pytest.mark.parametrize("benchmark", [
    "shareboost.ShareBoostPendigits.time_fit",
    "stumps.StumpScan.time_scan",
])
def test_dashboard_graphs(browser, dashboard, screenshots, benchmark):
    page, errors = _open_dashboard(browser, dashboard)
    # The benchmark grid links to the benchmark ...
    page.wait_for_selector(f"a[href='#{benchmark}']", timeout=30_000)
    # ... whose page draws its graph (flot, on a canvas) over two or more commits.
    page.goto(dashboard + f"index.html#{benchmark}", wait_until="load")
    page.wait_for_load_state("networkidle")
    page.wait_for_function("() => window.$ && $('#main-graph').data('plot')", timeout=30_000)
    points = page.evaluate(
        "() => $('#main-graph').data('plot').getData().map(s => s.data.length)")
    assert points and max(points) >= 2, points
    n_commits = page.evaluate("() => Object.keys($.asv.main_json.revision_to_hash).length")
    assert n_commits >= 2, n_commits
    _shot(page, screenshots, f"asv_{benchmark}")
    assert errors == []
