"""What a person sees in the MLflow UI: both runs listed by names that tell them apart, their
loss curves, the compare page, and a run page whose description says what the run trained on and
reached and whose chart tab groups the metrics in sections (``train`` apart from ``eval``).

The runs are real: a stable_gp run and a tf_norm_nan run trained by the real CLI against a real
``mlflow server`` (``support.tracked_runs``, shared with the other server tests). Headless
Chromium then opens the pages; screenshots land in ``test-artifacts/`` to be looked at (the test
prints their paths).
"""

from __future__ import annotations

import json
from collections import Counter
from urllib.parse import quote

import pytest
from support.browser import save_screenshot, wait_for_css, wait_for_texts
from support.tracked_runs import EXPERIMENT, ServerRuns

#: The train section's first row of charts (alphabetical): drawn without scrolling.
FIRST_ROW = ("train/critic_loss", "train/generator_loss", "train/grad_norm_mean")
# MLflow 3.17 opens experiments in its GenAI view; this query selects the training-runs view.
MODEL_TRAINING = "workflowType=machine_learning"
#: The header of each chart section on a run's chart tab ("train\n(8)\nAdd chart").
SECTION_HEADER = "[data-testid='experiment-view-compare-runs-section-header']"


def _close_assistant_panel(driver) -> None:
    """The assistant side panel covers a third of the page; close it when it is open."""
    from selenium.webdriver.common.by import By

    for button in driver.find_elements(By.CSS_SELECTOR, "button[aria-label='Close']"):
        if button.is_displayed():
            button.click()
            return


def _sections(driver, minimum: int) -> dict[str, int]:
    """The chart sections shown, name -> chart count, once ``minimum`` headers are drawn."""
    sections = {}
    for header in wait_for_css(driver, SECTION_HEADER, minimum=minimum):
        name, count = header.text.split("\n")[:2]
        sections[name] = int(count.strip("()"))
    return sections


def _collapse(driver, names: set[str]) -> None:
    """Fold the chart sections called ``names`` (a click on the header toggles it)."""
    from selenium.webdriver.common.by import By

    for header in driver.find_elements(By.CSS_SELECTOR, SECTION_HEADER):
        if header.text.split("\n")[0] in names:
            header.click()


def _shot(driver, name: str) -> None:
    print(f"screenshot: {save_screenshot(driver, name)}")


def _scroll_to_text(driver, text: str) -> None:
    from selenium.webdriver.common.by import By

    heading = driver.find_element(By.XPATH, f"//*[normalize-space(text())='{text}']")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'});", heading)


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.browser
def test_runs_and_compare_view_render_in_chromium(
    browser,  # first: a missing chromium skips before the runs train
    server_runs: ServerRuns,
) -> None:
    from mlflow import MlflowClient

    experiment_id = server_runs.experiment_id
    run_ids = [server_runs.run_ids["stable"], server_runs.run_ids["nan"]]
    base = f"{server_runs.url}/#/experiments/{experiment_id}"
    client = MlflowClient(server_runs.url)
    stable, failed = (client.get_run(run_id) for run_id in run_ids)
    names = [stable.info.run_name, failed.info.run_name]
    # Default names: experiment, data, seed, config key; the list tells the runs apart.
    assert names[0].startswith("stable_gp-simulated-seed0-"), names
    assert names[1].startswith("tf_norm_nan-simulated-seed0-"), names

    browser.get(f"{base}/runs?{MODEL_TRAINING}")
    wait_for_texts(browser, [EXPERIMENT, *names, "2 matching runs"])
    _close_assistant_panel(browser)
    _shot(browser, "mlflow-ui-experiment-runs")

    # Chart view of the same page: the charts of both runs, in sections by prefix; the train
    # section's loss curves hold both runs (the NaN run's stops at nan.step).
    browser.get(f"{base}/runs?{MODEL_TRAINING}&compareRunsMode=CHART")
    assert {"train", "run", "eval"} <= set(_sections(browser, minimum=3))
    _collapse(browser, {"eval", "run", "phase"})
    wait_for_texts(
        browser,
        [f"{names[0]} (train/critic_loss)", f"{names[1]} (train/critic_loss)"]
        + [f"{names[0]} (train/generator_loss)", f"{names[1]} (train/generator_loss)"],
    )
    wait_for_css(browser, "[data-testid='experiment-view-compare-runs-card'] svg", minimum=3)
    _shot(browser, "mlflow-ui-experiment-charts")

    # The stable run's page: its description, two lines on data and headline figures.
    note = stable.data.tags["mlflow.note.content"].replace("**", "").split("\n\n")
    assert note[0].startswith("Trained on simulated rows") and note[0].endswith(", 60 steps.")
    assert all(f in note[1] for f in ("detection AUC", "real-vs-real control", "near copies"))
    browser.get(f"{base}/runs/{run_ids[0]}")
    wait_for_texts(browser, ["Description", *note])
    _shot(browser, "mlflow-ui-run-description")

    # Its chart tab: one section per prefix, as many charts as the run has metrics there, and
    # the loss curves in train, apart from the evaluation's singletons (folded here).
    browser.get(f"{base}/runs/{run_ids[0]}/model-metrics")
    expected = Counter(key.split("/")[0] for key in stable.data.metrics)
    assert {"train", "run", "eval"} <= set(expected), expected
    sections = _sections(browser, minimum=len(expected))
    assert {name: sections.get(name) for name in expected} == dict(expected), sections
    _collapse(browser, {"eval", "run", "phase"})
    text = wait_for_texts(browser, [f"{names[0]} ({metric})" for metric in FIRST_ROW])
    assert "(eval/" not in text, "an eval chart is outside the folded eval section"
    _shot(browser, "mlflow-ui-run-charts")

    # The NaN run's description says where it stopped.
    browser.get(f"{base}/runs/{run_ids[1]}")
    wait_for_texts(browser, ["Trained on simulated rows", "Stopped training", "at step 52"])

    # The compare page, in the form the UI itself builds (getCompareRunPageRoute in the bundle):
    # the differing params (gp.norm, model.critic.output) side by side.
    runs = quote(json.dumps(run_ids))
    experiments = quote(json.dumps([experiment_id]))
    browser.get(
        f"{server_runs.url}/#/compare-runs?runs={runs}&experiments={experiments}&{MODEL_TRAINING}"
    )
    text = wait_for_texts(
        browser,
        ["Comparing 2 Runs from 1 Experiment", *names, "train/critic_loss"]
        + ["gp.norm", "safe_sqrt", "tf_norm", "model.critic.output", "tanh"],
    )
    assert all(run_id in text for run_id in run_ids)
    wait_for_css(browser, ".js-plotly-plot")  # the parallel-coordinates chart was drawn
    _shot(browser, "mlflow-ui-compare-runs")
    _scroll_to_text(browser, "Metrics")  # the side-by-side table of last metric values
    _shot(browser, "mlflow-ui-compare-runs-metrics")


def test_missing_chromium_is_a_skip_reason_naming_the_installer(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    import support.browser as browser_support

    monkeypatch.setattr(browser_support, "CHROMIUM", tmp_path / "no-chromium")
    reason = browser_support.chromium_missing_reason()
    assert reason is not None
    assert "no-chromium" in reason and "scripts/install_chromium.sh" in reason
