"""Checks a report-coverage report in a real browser (headless Chromium
driven by Debian's chromedriver through Selenium).

    check_report.py REPORT_DIR CHROMIUM CHROMEDRIVER

Serves REPORT_DIR over HTTP on 127.0.0.1, then checks that:
- the index's file table sorts when a column header is clicked (and
  reverses on a second click), and filters as one types in its box;
- every link (a[href], SVG links included) on the index and on one file
  page resolves: other pages answer 200, fragments name an element;
- the campaign plots are drawn: each has an SVG with a non-empty series
  path of positive length and bounding box, axis labels, and as many crash
  markers as the page lists crashes;
- the browser's console shows no error.

Prints what it checked; exits 1 with the reasons on failure.
"""

import functools
import http.server
import json
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

FAILURES = []
CHECKED = []


def check(condition, what):
    (CHECKED if condition else FAILURES).append(what)
    return condition


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(QuietHandler, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def browser(chromium, chromedriver, profile):
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--window-size=1280,1000",
        "--user-data-dir=" + profile,
    ]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)


def rows(driver):
    """The file table's rows, in page order: (path, visible, cells' data-sort)."""
    return driver.execute_script(
        """
        return Array.from(document.querySelectorAll('#files tbody tr')).map(function (r) {
          return [r.cells[0].getAttribute('data-sort'), !r.hidden && r.offsetParent !== null,
                  Array.from(r.cells).map(function (c) { return c.getAttribute('data-sort'); })];
        });
        """
    )


def check_sorting(driver):
    heads = driver.find_elements(By.CSS_SELECTOR, "#files thead th")
    check(len(heads) >= 2, "the file table has sortable columns")
    check(len(rows(driver)) >= 2, "the file table lists at least two files")
    for col, th in enumerate(heads):
        numeric = th.get_attribute("data-type") == "num"
        orders = []
        for click in (1, 2):
            th.find_element(By.TAG_NAME, "button").click()
            order = th.get_attribute("aria-sort")
            orders.append(order)
            values = [float(r[2][col]) if numeric else r[2][col] for r in rows(driver)]
            wanted = sorted(values, reverse=(order == "descending"))
            if not numeric:
                # The page compares with localeCompare; Python's order of
                # plain ASCII paths agrees once case is set aside.
                wanted = sorted(values, key=str.lower, reverse=(order == "descending"))
            check(
                order in ("ascending", "descending") and values == wanted,
                "column %d (%s) sorts %s on click %d: %s" % (col, th.text, order, click, values),
            )
            others = [h.get_attribute("aria-sort") for h in heads if h != th]
            check(all(o is None for o in others), "only the clicked column is marked sorted")
        check(orders[0] != orders[1], "a second click on column %d reverses it: %s" % (col, orders))


def check_filter(driver):
    box = driver.find_element(By.ID, "filter")
    every = [r[0] for r in rows(driver)]
    needle = every[0].split("/")[-1][:4]
    box.clear()
    box.send_keys(needle)
    shown = [r[0] for r in rows(driver) if r[1]]
    wanted = [p for p in every if needle.lower() in p.lower()]
    check(
        shown and sorted(shown) == sorted(wanted),
        "typing %r shows only matching files: %s" % (needle, shown),
    )
    box.send_keys("-no-such-file-")
    check(not [r for r in rows(driver) if r[1]], "a filter matching nothing hides every row")
    # clear() fires no input event; the page filters on input.
    box.clear()
    driver.execute_script("arguments[0].dispatchEvent(new Event('input'))", box)
    check(len([r for r in rows(driver) if r[1]]) == len(every), "clearing the filter shows every row")


def links(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(function (a) {"
        "  return a.getAttribute('href'); });"
    )


def check_links(driver, page_url):
    seen = links(driver)
    check(len(seen) > 0, "%s has links" % page_url)
    for href in seen:
        url = urllib.parse.urljoin(page_url, href)
        target, _, fragment = url.partition("#")
        if target == page_url.partition("#")[0]:
            found = fragment == "" or driver.execute_script(
                "return document.getElementById(arguments[0]) !== null", fragment
            )
            check(found, "%s: link %s names an element of the page" % (page_url, href))
            continue
        try:
            with urllib.request.urlopen(target, timeout=10) as response:
                body = response.read().decode("utf-8", "replace")
                ok = response.status == 200
        except urllib.error.URLError as err:
            check(False, "%s: link %s: %s" % (page_url, href, err))
            continue
        check(ok, "%s: link %s answers 200" % (page_url, href))
        if fragment:
            check(
                ('id="%s"' % fragment) in body or ('name="%s"' % fragment) in body,
                "%s: link %s names an element of its page" % (page_url, href),
            )
    return seen


def check_plots(driver):
    plots = driver.execute_script(
        """
        return ['plot-cov', 'plot-ft', 'plot-execs'].map(function (id) {
          var fig = document.getElementById(id);
          if (!fig) return {id: id, missing: true};
          var svg = fig.querySelector('svg'), path = fig.querySelector('path.series');
          var box = path ? path.getBBox() : null, rect = svg ? svg.getBoundingClientRect() : null;
          return {
            id: id,
            d: path ? path.getAttribute('d') : '',
            length: path ? path.getTotalLength() : 0,
            box: box ? [box.width, box.height] : null,
            svg: rect ? [rect.width, rect.height] : null,
            stroke: path ? getComputedStyle(path).stroke : '',
            labels: fig.querySelectorAll('.labels text').length,
            crashes: fig.querySelectorAll('a.crash-mark').length,
            restarts: fig.querySelectorAll('.restart').length
          };
        });
        """
    )
    listed = len(driver.find_elements(By.CSS_SELECTOR, "#campaign .crashes li"))
    for plot in plots:
        name = plot["id"]
        if not check(not plot.get("missing"), "%s is on the page" % name):
            continue
        check(plot["d"].startswith("M"), "%s has a series path: %r" % (name, plot["d"][:40]))
        check(plot["length"] > 0, "%s's line has a length: %s" % (name, plot["length"]))
        check(plot["box"] and plot["box"][0] > 0, "%s's line has a bounding box: %s" % (name, plot["box"]))
        check(plot["svg"] and plot["svg"][0] > 0 and plot["svg"][1] > 0, "%s is drawn: %s" % (name, plot["svg"]))
        check(plot["stroke"] not in ("", "none"), "%s's line is stroked: %s" % (name, plot["stroke"]))
        check(plot["labels"] >= 4, "%s has axis labels: %d" % (name, plot["labels"]))
        check(plot["crashes"] == listed, "%s marks the %d crashes listed" % (name, listed))
    return plots


def main():
    root, chromium, chromedriver = sys.argv[1:4]
    server = serve(root)
    base = "http://127.0.0.1:%d/" % server.server_address[1]
    with tempfile.TemporaryDirectory(prefix="php-fuzz-chromium-") as profile:
        driver = browser(chromium, chromedriver, profile)
        try:
            driver.get(base + "index.html")
            check(driver.title.startswith("Coverage"), "the index loads: %r" % driver.title)
            plots = check_plots(driver)
            check_sorting(driver)
            check_filter(driver)
            index_links = check_links(driver, base + "index.html")
            file_pages = [h for h in index_links if h.startswith("files/")]
            if check(file_pages, "the index links to file pages"):
                page = base + file_pages[0]
                driver.get(page)
                check(driver.find_elements(By.CSS_SELECTOR, "#L1"), "%s shows its source" % page)
                check_links(driver, page)
            log = driver.get_log("browser")
            errors = [e for e in log if e.get("level") == "SEVERE"]
            check(not errors, "the console shows no errors: %s" % errors)
        finally:
            driver.quit()
            server.shutdown()
    print(json.dumps({"checked": len(CHECKED), "failures": FAILURES, "plots": plots}, indent=1))
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
