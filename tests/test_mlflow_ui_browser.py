"""What a person sees in the MLflow UI: both runs listed, their loss curves, the compare page.

Runs are logged through ``MlflowClient`` into a real ``mlflow server``; headless Chromium then
opens the pages and screenshots land in ``test-artifacts/`` to be looked at.
"""

from __future__ import annotations

import json
import math
from urllib.parse import quote

import pytest
from mlflow import MlflowClient
from support.browser import (  # noqa: F401 (browser is a fixture)
    browser,
    save_screenshot,
    wait_for_css,
    wait_for_texts,
)
from support.mlflow_server import MlflowServer, mlflow_server  # noqa: F401 (fixture)

METRICS = ("critic_loss", "generator_loss", "wasserstein_estimate")
STEPS = 20
# MLflow 3.17 opens experiments in its GenAI view; this query selects the training-runs view.
MODEL_TRAINING = "workflowType=machine_learning"


def _log_run(client: MlflowClient, experiment_id: str, name: str, gp_weight: float) -> str:
    run = client.create_run(experiment_id, run_name=name)
    run_id = run.info.run_id
    client.log_param(run_id, "gp_weight", gp_weight)
    client.log_param(run_id, "critic_steps", 5)
    for step in range(STEPS):
        estimate = 2.0 * math.exp(-step / (6.0 if gp_weight else 3.0))
        client.log_metric(run_id, "wasserstein_estimate", estimate, step=step)
        client.log_metric(run_id, "critic_loss", -estimate + 0.1, step=step)
        client.log_metric(run_id, "generator_loss", 0.5 * estimate, step=step)
    client.set_terminated(run_id)
    return run_id


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
def test_runs_and_compare_view_render_in_chromium(
    browser,  # noqa: F811 (imported fixture; first, so a missing chromium skips before the server)
    mlflow_server: MlflowServer,  # noqa: F811 (imported fixture)
) -> None:
    client = MlflowClient(mlflow_server.url)
    experiment_id = client.create_experiment("wgangp")
    run_ids = [
        _log_run(client, experiment_id, "stable_gp", gp_weight=10.0),
        _log_run(client, experiment_id, "tf_norm_nan", gp_weight=0.0),
    ]
    base = f"{mlflow_server.url}/#/experiments/{experiment_id}"

    browser.get(f"{base}/runs?{MODEL_TRAINING}")
    wait_for_texts(browser, ["wgangp", "stable_gp", "tf_norm_nan", "2 matching runs"])
    _close_assistant_panel(browser)
    save_screenshot(browser, "mlflow-ui-experiment-runs")

    # Chart view of the same page: one line chart per metric, each with both runs.
    browser.get(f"{base}/runs?{MODEL_TRAINING}&compareRunsMode=CHART")
    wait_for_texts(browser, [*METRICS, "stable_gp (critic_loss)", "tf_norm_nan (critic_loss)"])
    wait_for_css(browser, "[data-testid='experiment-view-compare-runs-card'] svg", minimum=3)
    save_screenshot(browser, "mlflow-ui-experiment-charts")

    # The compare page, in the form the UI itself builds (getCompareRunPageRoute in the bundle).
    runs = quote(json.dumps(run_ids))
    experiments = quote(json.dumps([experiment_id]))
    browser.get(
        f"{mlflow_server.url}/#/compare-runs?runs={runs}&experiments={experiments}&{MODEL_TRAINING}"
    )
    text = wait_for_texts(
        browser,
        ["Comparing 2 Runs from 1 Experiment", "stable_gp", "tf_norm_nan", *METRICS, "gp_weight"],
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
