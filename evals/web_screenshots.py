"""Screenshots of the consult page's main states, for the README: ``python -m evals.web_screenshots``.

Runs the page as ``evigraph serve --offline`` does, over the default KB (built into a temporary data dir
unless ``--kb-dir`` names one), in Debian's headless Chromium (evals/web_browser.py), and writes PNGs to
``evals/reports/web/``: an answer with an open passage citation, an open KG chain, the consult list beside
an insufficient answer, and the token form. Nothing is fetched from the network.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import SecretStr
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

from agent.frontends.cli_kb import ensure_default_kb
from agent.frontends.http_api import ApiServer
from agent.serving import ConsultService, ServeSettings
from evals.web_browser import ask_and_wait, chromium, visible, wait_for
from graphs.model.settings import Settings, load_settings

OUT = Path(__file__).resolve().parent / "reports" / "web"
CAUSES = "What causes cystic fibrosis?"
DIABETES = "What is the first-line medicine for type 2 diabetes?"


@contextmanager
def page_server(settings: Settings, token: str | None = None) -> Iterator[str]:
    limits = ServeSettings(_env_file=None, api_token=SecretStr(token) if token else None)  # type: ignore[call-arg]
    server = ApiServer(lambda lim: ConsultService.open(settings, lim), "127.0.0.1", 0, limits).start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


def shoot(driver: webdriver.Chrome, element: WebElement | None, path: Path) -> None:
    if element is not None:
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    driver.save_screenshot(str(path))
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-dir", type=Path, help="a built KB root (default: build the default KB)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="evigraph-shots-") as tmp:
        settings = load_settings(kb_dir=args.kb_dir).model_copy(
            update={"data_dir": Path(tmp), "llm_enabled": False}
        )
        if args.kb_dir is None:  # the default KB, built under the temporary data dir
            ensure_default_kb(settings)
        with chromium() as driver, page_server(settings) as url:
            driver.set_window_size(1280, 1000)
            driver.get(url + "/")
            turn = ask_and_wait(driver, CAUSES)
            turn.find_element(By.CSS_SELECTOR, ".answer li .cite.passage").click()
            shoot(driver, visible(driver, ".citation.passage"), args.out / "answer_citation.png")
            turn.find_element(By.CSS_SELECTOR, ".citation .close").click()
            turn.find_element(By.CSS_SELECTOR, ".cite.chain").click()
            shoot(driver, visible(driver, ".citation.chain"), args.out / "chain.png")
            driver.get(url + "/")
            ask_and_wait(driver, DIABETES)
            # the list is re-read after the turn ends: shoot once it shows both consults
            wait_for(
                lambda: len(driver.find_elements(By.CSS_SELECTOR, "#consult-list a")) >= 2,
                what="the consult list to show both consults",
            )
            driver.execute_script("window.scrollTo(0, 0);")
            shoot(driver, None, args.out / "consults.png")
        with chromium() as driver, page_server(settings, token="example-token") as url:
            driver.set_window_size(900, 600)
            driver.get(url + "/")
            visible(driver, "#token")
            shoot(driver, None, args.out / "token.png")


if __name__ == "__main__":
    main()
