"""Make an ``asv publish`` output open without network.

The page ``asv publish`` writes loads jQuery, flot, bootstrap, stupidtable
and blueimp-md5 from public CDNs; offline (or where the CDNs are blocked) the
dashboard stays empty ("Can not determine continental origin of swallow").
This script copies Debian's packaged copies of the same libraries (the
``libjs-*`` packages below) into ``<html>/vendor/`` and points the page at
them, dropping the CDN integrity attributes (the bytes differ: Debian's flot
is 4.2 where asv asks for 0.8.3; it draws the same graphs, the legend box
differently). Everything asv wrote besides (its own scripts, the graph data)
is left as published.

    python asv_benchmarks/offline_html.py asv_benchmarks/html

Needs ``apt-get install libjs-jquery libjs-jquery-flot libjs-jquery-stupidtable
node-blueimp-md5 libjs-bootstrap`` (``.ci/run`` installs them).
``asv_benchmarks/dashboard.sh`` runs it after ``asv publish``;
``tests/test_browser.py`` opens the result with every request off this
machine refused.
"""

import argparse
import re
import shutil
import sys
from pathlib import Path

DEBIAN_JS = Path("/usr/share/javascript")
# file name in asv's CDN URL -> its Debian stand-in under DEBIAN_JS
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
# Bar order of categorical graphs only; Debian has no copy: an empty script.
EMPTY_STAND_INS = ("jquery.flot.orderBars.js",)
DEBIAN_PACKAGES = ("libjs-jquery libjs-jquery-flot libjs-jquery-stupidtable "
                   "node-blueimp-md5 libjs-bootstrap")

_EXTERNAL = re.compile(r'(<(?:script|link)\b[^>]*?\s(?:src|href)=")(https?://[^"]+)("[^>]*>)')
_CDN_ATTRIBUTES = re.compile(r'\s(?:integrity|crossorigin|referrerpolicy)="[^"]*"')


def missing_stand_ins(debian_js=DEBIAN_JS):
    """The Debian files of :data:`CDN_STAND_INS` that are not installed."""
    return [name for name in CDN_STAND_INS.values() if not (Path(debian_js) / name).exists()]


def make_offline(html_dir, debian_js=DEBIAN_JS):
    """Point ``html_dir/index.html`` at local copies of its CDN libraries.

    Parameters
    ----------
    html_dir : str or Path
        An ``asv publish`` output (it has ``index.html``).
    debian_js : str or Path, default=/usr/share/javascript
        Where Debian's ``libjs-*`` packages install the libraries.

    Returns
    -------
    replaced : list of str
        The file names of the CDN URLs now served from ``html_dir/vendor``.

    Raises
    ------
    FileNotFoundError
        If ``html_dir`` has no ``index.html`` or a Debian copy is missing.
    ValueError
        If the page loads a URL off this machine that has no stand-in.
    """
    html_dir, debian_js = Path(html_dir), Path(debian_js)
    index = html_dir / "index.html"
    if not index.is_file():
        raise FileNotFoundError(f"{index} does not exist: run asv publish first")
    missing = missing_stand_ins(debian_js)
    if missing:
        raise FileNotFoundError(f"no {', '.join(missing)} under {debian_js} "
                                f"(apt-get install {DEBIAN_PACKAGES})")
    vendor = html_dir / "vendor"
    vendor.mkdir(exist_ok=True)
    replaced, unknown = [], []

    def local(match):
        name = match.group(2).rsplit("/", 1)[-1]
        if name in CDN_STAND_INS:
            shutil.copyfile(debian_js / CDN_STAND_INS[name], vendor / name)
        elif name in EMPTY_STAND_INS:
            (vendor / name).write_text("/* not packaged by Debian: bar order only */\n")
        else:
            unknown.append(match.group(2))
            return match.group(0)
        replaced.append(name)
        tag = match.group(1) + f"vendor/{name}" + match.group(3)
        return _CDN_ATTRIBUTES.sub("", tag)

    text = _EXTERNAL.sub(local, index.read_text(encoding="utf-8"))
    if unknown:
        raise ValueError(f"{index} loads {', '.join(unknown)}, which has no local stand-in")
    index.write_text(text, encoding="utf-8")
    return replaced


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", help="the asv publish output (asv_benchmarks/html)")
    args = parser.parse_args(argv)
    try:
        replaced = make_offline(args.html_dir)
    except (FileNotFoundError, ValueError) as error:
        print(f"offline_html.py: {error}", file=sys.stderr)
        return 1
    print(f"{args.html_dir}/index.html: {len(replaced)} libraries served from vendor/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
