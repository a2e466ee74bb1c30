"""What a person sees in the MLflow UI: both runs listed, their loss curves, the compare page.

The runs are real: a stable_gp run and a tf_norm_nan run trained by the real CLI against a real
``mlflow server`` (``support.tracked_runs``, shared with the other server tests). Headless
Chromium then opens the pages; screenshots land in ``test-artifacts/`` to be looked at.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from support.browser import save_screenshot, wait_for_css, wait_for_texts
from support.tracked_runs import EXPERIMENT, ServerRuns

METRICS = ("critic_loss", "generator_loss", "wasserstein_estimate")
# MLflow 3.17 opens experiments in its GenAI view; this query selects the training-runs view.
MODEL_TRAINING = "workflowType=machine_learning"


def _close_assistant_panel(driver) -> None:
    """The assistant side panel covers a third of the page; close it when it is open."""
    from selenium.webdriver.common.by import By

    for button in driver.find_elements(By.CSS_SELECTOR, "button[aria-label='Close']"):
        if button.is_displayed():
            button.click()
            return


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
    experiment_id = server_runs.experiment_id
    run_ids = [server_runs.run_ids["stable"], server_runs.run_ids["nan"]]
    base = f"{server_runs.url}/#/experiments/{experiment_id}"

    browser.get(f"{base}/runs?{MODEL_TRAINING}")
    wait_for_texts(browser, [EXPERIMENT, "stable_gp", "tf_norm_nan", "2 matching runs"])
    _close_assistant_panel(browser)
    save_screenshot(browser, "mlflow-ui-experiment-runs")

    # Chart view of the same page: one line chart per metric (12, alphabetical; the first rows
    # render without scrolling), each with both runs' curves (the NaN run's stops at nan.step).
    browser.get(f"{base}/runs?{MODEL_TRAINING}&compareRunsMode=CHART")
    wait_for_texts(
        browser,
        ["critic_loss", "stable_gp (critic_loss)", "tf_norm_nan (critic_loss)"]
        + ["generator_loss", "stable_gp (generator_loss)", "tf_norm_nan (generator_loss)"],
    )
    wait_for_css(browser, "[data-testid='experiment-view-compare-runs-card'] svg", minimum=3)
    save_screenshot(browser, "mlflow-ui-experiment-charts")

    # The compare page, in the form the UI itself builds (getCompareRunPageRoute in the bundle):
    # the differing params (gp.norm, model.critic.output) side by side.
    runs = quote(json.dumps(run_ids))
    experiments = quote(json.dumps([experiment_id]))
    browser.get(
        f"{server_runs.url}/#/compare-runs?runs={runs}&experiments={experiments}&{MODEL_TRAINING}"
    )
    text = wait_for_texts(
        browser,
        ["Comparing 2 Runs from 1 Experiment", "stable_gp", "tf_norm_nan", *METRICS]
        + ["gp.norm", "safe_sqrt", "tf_norm", "model.critic.output", "tanh"],
    )
    assert all(run_id in text for run_id in run_ids)
    wait_for_css(browser, ".js-plotly-plot")  # the parallel-coordinates chart was drawn
    save_screenshot(browser, "mlflow-ui-compare-runs")
    _scroll_to_text(browser, "Metrics")  # the side-by-side table of last metric values
    save_screenshot(browser, "mlflow-ui-compare-runs-metrics")


def test_missing_chromium_is_a_skip_reason_naming_the_installer(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    import support.browser as browser_support

    monkeypatch.setattr(browser_support, "CHROMIUM", tmp_path / "no-chromium")
    reason = browser_support.chromium_missing_reason()
    assert reason is not None
    assert "no-chromium" in reason and "scripts/install_chromium.sh" in reason
