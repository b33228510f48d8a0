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
# blueimp-md5 from public CDNs, which the test machine cannot reach. The
# browser is given Debian's packaged copies of the same libraries in their
# place (the ``libjs-*`` packages ``.ci/run`` installs; flot 4.2 stands in for
# 0.8.3, so the legend box is drawn differently), with the CDN integrity
# attributes dropped since the bytes differ. Everything asv wrote (its own
# scripts, the graph data) is served as published.

DEBIAN_JS = Path("/usr/share/javascript")
CDN_STAND_INS = {
    "jquery-3.3.1.min.js": "jquery/jquery.min.js",
    "jquery.flot.min.js": "jquery-flot/jquery.flot.min.js",
    "jquery.flot.time.min.js": "jquery-flot/jquery.flot.time.min.js",
    "jquery.flot.selection.min.js": "jquery-flot/jquery.flot.selection.min.js",
    "jquery.flot.categories.min.js": "jquery-flot/jquery.flot.categories.min.js",
    "stupidtable.min.js": "jquery-stupidtable/stupidtable.min.js",
    "md5.min.js": "blueimp-md5/md5.min.js",
    "bootstrap.min.js": "bootstrap/js/bootstrap.min.js",
    "bootstrap.min.css": "bootstrap/css/bootstrap.min.css",
}


def _current_branch():
    out = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=ROOT,
                         capture_output=True, text=True)
    return out.stdout.strip() or "HEAD"


@pytest.fixture(scope="module")
def dashboard(serve, tmp_path_factory):
    """An ``asv publish`` output with two or more commits, served over HTTP."""
    missing = [name for name in CDN_STAND_INS.values() if not (DEBIAN_JS / name).exists()]
    if missing:
        _missing(f"no {', '.join(missing)} under {DEBIAN_JS} (apt-get install libjs-jquery "
                 "libjs-jquery-flot libjs-jquery-stupidtable node-blueimp-md5 libjs-bootstrap)")
    html = os.environ.get("MCSPARSE_ASV_HTML")
    if html:
        html = Path(html)
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
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda exc: errors.append(f"JavaScript error: {exc}"))

    def cdn(route):
        name = route.request.url.rsplit("/", 1)[-1]
        if name in CDN_STAND_INS:
            route.fulfill(path=str(DEBIAN_JS / CDN_STAND_INS[name]))
        elif name == "jquery.flot.orderBars.js":
            # Bar order of categorical graphs only; Debian has no copy.
            route.fulfill(body="", content_type="application/javascript")
        else:
            route.abort()

    def index(route):
        response = route.fetch()
        body = re.sub(r'\s(integrity|crossorigin)="[^"]*"', "", response.text())
        route.fulfill(response=response, body=body)

    page.route(re.compile(r"https?://(?!127\.0\.0\.1).*"), cdn)
    page.route(re.compile(r".*/index\.html$"), index)
    page.goto(url + "index.html", wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, errors


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
