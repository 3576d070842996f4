"""The gateway's page at / in a real browser (Debian's headless Chromium, driven by Selenium
through its chromedriver) against the real server: a file uploaded, each page drawn with one box
per line read over it, the text beside it, a line selected; and POST /v1/preview, the pages it
draws on, checked to line up with /v1/ocr's boxes."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import ROOT
from tests.documents import make_pdf, make_tiff, pikepdf_pdf, text_page
from tests.e2e.test_gateway import call, running_gateway
from tests.samples import RULED_CELLS, layout_page, ruled_table
from triton_ocr.tools.samples import DEMO_LINES, render

NAMESPACES = {"http://www.w3.org/2000/svg"}  # names that look like addresses, fetching nothing
SCREENSHOT = Path("/tmp/page-screenshot.png")  # a copy for people to look at
WAIT_S = 180  # the first read of a fresh server warms its models


@pytest.fixture(scope="module")
def gateway(server):
    with running_gateway(server.grpc) as base:
        yield base


def read_json(gateway: str, data: bytes, kind: str) -> dict:
    status, _, answer = call(f"{gateway}/v1/ocr?words=true", data, kind)
    assert status == 200, answer
    return json.loads(answer)


def preview(gateway: str, data: bytes, kind: str) -> dict:
    status, headers, answer = call(f"{gateway}/v1/preview", data, kind)
    assert status == 200, answer
    assert headers["Content-Type"] == "application/json"
    return json.loads(answer)


def image_of(url: str) -> Image.Image:
    head, encoded = url.split(",", 1)
    assert head == "data:image/jpeg;base64"
    return Image.open(io.BytesIO(base64.b64decode(encoded))).convert("L")


def ink_inside(image: Image.Image, page: dict) -> tuple[float, float]:
    """(darkness inside the page's line boxes, darkness of the whole page): boxes over the
    text they were read from are much darker than the page around them."""
    scaled = np.asarray(image.resize((page["width"], page["height"]))).astype(float)
    darkness = 255 - scaled
    inside = np.zeros(scaled.shape, bool)
    for line in page["lines"]:
        xs, ys = zip(*line["polygon"], strict=True)
        inside[int(min(ys)) : int(max(ys)) + 1, int(min(xs)) : int(max(xs)) + 1] = True
    return float(darkness[inside].mean()), float(darkness.mean())


def turned_text() -> bytes:
    """A page sent turned a quarter: the server reads it upright, its boxes on the page as
    sent."""
    page = text_page("a page sent on its side\nwith two lines", (640, 360), 36)
    buffer = io.BytesIO()
    page.rotate(90, expand=True).save(buffer, "PNG")
    return buffer.getvalue()


def exif_tiff() -> bytes:
    """Two TIFF frames, the second stored sideways with an orientation tag (EXIF 6: turn it
    90° clockwise to show it)."""
    upright = text_page("tiff frame one")
    stored = text_page("tiff frame two").transpose(Image.Transpose.ROTATE_90)
    return make_tiff([upright, stored], [1, 6])


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (
            lambda: make_pdf([text_page("first page words"), text_page("second page here")]),
            "application/pdf",
        ),
        (lambda: render().png, "image/png"),
        (turned_text, "image/png"),
        (exif_tiff, "image/tiff"),
    ],
    ids=["pdf", "image", "turned", "exif-tiff"],
)
def test_the_preview_lines_up_with_the_boxes_read(gateway, make, kind):
    """Each page previewed at the size /v1/ocr's boxes refer to (a PDF rendered at the
    server's DPI, EXIF orientation applied, a turned page as sent) and its ink inside them."""
    data = make()
    shown, document = preview(gateway, data, kind), read_json(gateway, data, kind)
    assert len(shown["pages"]) == len(document["pages"])
    for page, read in zip(shown["pages"], document["pages"], strict=True):
        assert (page["page"], page["width"], page["height"]) == (
            read["page"],
            read["width"],
            read["height"],
        )
        image = image_of(page["image"])
        assert max(image.size) <= 1600
        assert abs(image.width / image.height - read["width"] / read["height"]) < 0.01
        assert read["lines"], read
        if make is turned_text:  # read turned back, its boxes on the page as sent
            assert read["rotation"] in (90, 270), read["rotation"]
        inside, overall = ink_inside(image, read)
        assert inside > 2 * overall, (inside, overall)


def test_the_preview_refuses_what_the_server_would(gateway):
    status, headers, answer = call(f"{gateway}/v1/preview", b"not an image", "image/png")
    assert status == 400 and headers["Content-Type"] == "application/problem+json"
    assert json.loads(answer)["error"]
    status, _, answer = call(f"{gateway}/v1/preview", pikepdf_pdf(pages=101), "application/pdf")
    assert status == 400 and "100" in json.loads(answer)["error"]
    status, _, _ = call(f"{gateway}/v1/preview?pdf_dpi=5000", pikepdf_pdf(), "application/pdf")
    assert status == 400


def test_the_page_and_docs_are_served_with_nothing_from_other_hosts(gateway):
    for path in ("/", "/docs"):
        status, headers, answer = call(f"{gateway}{path}")
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        for name in re.findall(r'(?:src|href)="static/([^"]+)"', answer.decode()):
            status, headers, asset = call(f"{gateway}/static/{name}")
            assert status == 200 and "default-src 'self'" in headers["Content-Security-Policy"]
            assert set(re.findall(r"https?://[^\s\"'`)<>]+", asset.decode())) <= NAMESPACES
        assert not re.findall(r"https?://", answer.decode())
    status, headers, _ = call(f"{gateway}/static/nothing.js")
    assert status == 404 and headers["Content-Type"] == "application/problem+json"
    status, _, answer = call(f"{gateway}/openapi.json")
    assert "/v1/preview" in json.loads(answer)["paths"]


# --- in the browser ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through its chromedriver (make setup apt-gets both)."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        reason = (
            "no chromium and chromedriver on PATH: `apt-get install chromium chromium-driver` "
            "(make setup does, as root)"
        )
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)  # no sandbox: tests run as root in CI
    options.add_argument("--window-size=1400,1000")
    session = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    try:
        yield session
    finally:
        session.quit()


def upload(browser, gateway: str, path: Path) -> None:
    """The page loaded, `path` chosen in its file field, and the result waited for."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{gateway}/")
    browser.find_element(By.ID, "file").send_keys(str(path))
    WebDriverWait(browser, WAIT_S).until(
        lambda b: (
            b.find_element(By.TAG_NAME, "body").get_attribute("data-state") in ("done", "failed")
        )
    )
    state = browser.find_element(By.TAG_NAME, "body").get_attribute("data-state")
    assert state == "done", browser.find_element(By.ID, "status").text


def drawn(browser) -> list[dict]:
    """Per page section: its line boxes, word boxes, the texts in its list, and whether the
    boxes' layer covers the page image exactly."""
    return browser.execute_script(
        """
        return [...document.querySelectorAll("section.page")].map((section) => {
          const image = section.querySelector(".sheet img").getBoundingClientRect();
          const layer = section.querySelector(".sheet svg").getBoundingClientRect();
          return {
            lines: section.querySelectorAll("polygon.line").length,
            words: section.querySelectorAll("polygon.word").length,
            texts: [...section.querySelectorAll(".lines button")].map((b) => b.textContent),
            covered: ["x", "y", "width", "height"].every(
              (side) => Math.abs(image[side] - layer[side]) < 1),
            loaded: section.querySelector(".sheet img").naturalWidth > 0,
          };
        });
        """
    )


def screenshot(browser, target: Path) -> None:
    """The whole page (the window made as tall as it), saved to `target`."""
    height, chrome = browser.execute_script(
        "return [document.documentElement.scrollHeight, window.outerHeight - window.innerHeight]"
    )
    browser.set_window_size(1400, min(height + chrome, 6000))
    browser.save_screenshot(str(target))


def test_the_page_shows_an_image_with_a_box_per_line(browser, gateway, demo, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    path = tmp_path / "demo.png"
    path.write_bytes(demo)
    upload(browser, gateway, path)
    (page,) = drawn(browser)
    (read,) = read_json(gateway, demo, "image/png")["pages"]
    assert page["loaded"] and page["covered"]
    assert page["lines"] == len(read["lines"]) == len(page["texts"]) >= 3
    assert page["words"] == sum(len(line.get("words", [])) for line in read["lines"])
    panel = browser.find_element(By.CSS_SELECTOR, ".lines").text
    for line in DEMO_LINES[:3]:
        assert line.text in panel
    # selecting a line highlights its box, and the arrow keys move it
    buttons = browser.find_elements(By.CSS_SELECTOR, ".lines button")

    def selected() -> list[str]:
        return browser.execute_script(
            "return [...document.querySelectorAll('polygon.line.selected')]"
            ".map((b) => b.querySelector('title').textContent);"
        )

    buttons[1].click()
    assert selected() == [read["lines"][1]["text"]]
    assert buttons[1].get_attribute("aria-pressed") == "true"
    buttons[1].send_keys(Keys.ARROW_DOWN)
    assert selected() == [read["lines"][2]["text"]]
    assert [b.get_attribute("aria-pressed") for b in buttons[1:3]] == ["false", "true"]
    assert browser.switch_to.active_element == buttons[2]
    browser.find_element(By.CSS_SELECTOR, 'polygon.line[data-line="0"]').click()  # a box too
    assert selected() == [read["lines"][0]["text"]]
    assert buttons[0].get_attribute("aria-pressed") == "true"
    # the Markdown download asks the gateway for it
    browser.find_element(By.CSS_SELECTOR, '[data-format="markdown"]').click()
    WebDriverWait(browser, WAIT_S).until(
        lambda b: b.find_element(By.ID, "status").text == "Saved the Markdown."
    )
    # nothing came from another host
    origins = browser.execute_script(
        "return performance.getEntriesByType('resource').map((r) => new URL(r.name).origin)"
    )
    assert set(origins) <= {gateway}
    screenshot(browser, tmp_path / "demo-page.png")
    shutil.copyfile(tmp_path / "demo-page.png", SCREENSHOT)


def test_the_page_shows_each_page_of_a_pdf(browser, gateway, two_pages, tmp_path):
    path = tmp_path / "two-pages.pdf"
    path.write_bytes(two_pages)
    upload(browser, gateway, path)
    pages = drawn(browser)
    document = read_json(gateway, two_pages, "application/pdf")
    assert len(pages) == len(document["pages"]) == 2
    for page, read, words in zip(
        pages, document["pages"], ("first page words", "second page here"), strict=True
    ):
        assert page["loaded"] and page["covered"]
        assert page["lines"] == len(read["lines"]) == len(page["texts"]) >= 1
        assert words in " ".join(page["texts"])
    screenshot(browser, tmp_path / "pdf-page.png")
    shutil.copyfile(tmp_path / "pdf-page.png", SCREENSHOT.with_name("page-screenshot-pdf.png"))


def test_the_page_draws_the_tables_it_read(browser, gateway, tmp_path):
    """A ruled table: its box and each cell's drawn over the page, and beside the lines the
    table as read, the header's spanning cell across two columns."""
    from selenium.webdriver.common.by import By

    path = tmp_path / "ruled.png"
    path.write_bytes(ruled_table().png)
    upload(browser, gateway, path)
    (page,) = drawn(browser)
    assert page["loaded"] and page["covered"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "polygon.table")) == 1
    cells = sum(1 for row in RULED_CELLS for text in row if text is not None)
    assert len(browser.find_elements(By.CSS_SELECTOR, "polygon.cell")) == cells
    (table,) = browser.find_elements(By.CSS_SELECTOR, ".read-table")
    rows = [
        [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
        for tr in table.find_elements(By.TAG_NAME, "tr")
    ]
    assert rows == [[text for text in row if text is not None] for row in RULED_CELLS]
    spanning = table.find_element(By.CSS_SELECTOR, "td[colspan]")
    assert (spanning.text, spanning.get_attribute("colspan")) == ("Sales", "2")
    assert "1 table" in browser.find_element(By.ID, "status").text
    screenshot(browser, tmp_path / "table-page.png")
    shutil.copyfile(tmp_path / "table-page.png", SCREENSHOT.with_name("page-screenshot-table.png"))


def test_docs_lists_the_endpoints_from_the_schema(browser, gateway):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{gateway}/docs")
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, ".endpoint"))
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".endpoint h2")]
    assert {"POST /v1/ocr", "POST /v1/preview", "GET /readyz"} <= set(headings), headings
    ocr = browser.find_elements(By.CSS_SELECTOR, ".endpoint")[headings.index("POST /v1/ocr")]
    for shown in ("format", "words", "multipart/form-data", "application/pdf"):
        assert shown in ocr.text


def test_the_preview_without_the_service_is_a_503():
    with running_gateway("127.0.0.1:1") as base:  # nothing listens there
        status, headers, answer = call(f"{base}/v1/preview", b"\x89PNG", "image/png")
        assert status == 503 and headers["Content-Type"] == "application/problem+json"
        assert headers["Retry-After"]
        assert "cannot be reached" in json.loads(answer)["error"]
        status, _, _ = call(f"{base}/")  # the page itself needs no service
        assert status == 200


def test_the_page_says_what_each_block_is(browser, gateway, tmp_path):
    """A headline over two columns between a running head and a foot: the list of lines names
    the header, the heading and the footer where their blocks start."""
    from selenium.webdriver.common.by import By

    path = tmp_path / "headline.png"
    path.write_bytes(layout_page("headline").png)
    upload(browser, gateway, path)
    labels = [e.text.lower() for e in browser.find_elements(By.CSS_SELECTOR, ".lines .block-type")]
    assert labels == ["header", "heading", "footer"]
    (heading,) = browser.find_elements(By.CSS_SELECTOR, '.lines li[data-type="heading"] button')
    assert heading.text == "Reading pages the way people do"


def test_the_page_draws_the_figures_it_found(browser, gateway, tmp_path):
    """A magazine page's photo: its box drawn over the page, and no line listed for it."""
    from selenium.webdriver.common.by import By

    path = tmp_path / "photo.png"
    path.write_bytes((ROOT / "tests" / "data" / "layout" / "magazine_2col_photo.png").read_bytes())
    upload(browser, gateway, path)
    (page,) = drawn(browser)
    assert page["loaded"] and page["covered"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "polygon.figure")) == 1
    labels = [e.text.lower() for e in browser.find_elements(By.CSS_SELECTOR, ".lines .block-type")]
    assert "figure" not in labels
