"""The run page's description and the metric sections: the text a reader sees on the run page."""

from __future__ import annotations

from wgangp.tracking import names
from wgangp.tracking.note import NOTE_TAG, PENDING, RunNote, TrainedOn, data_label, headline


def test_headline_names_selection_detection_control_and_near_copies() -> None:
    metrics = {
        "eval/c2st_auc_gbm": 0.7012,
        "eval/c2st_auc_gbm_control": 0.5523,
        "eval/near_copies": 0.0,
        "eval/ks_mean": 0.2,  # not a headline figure
    }
    assert headline(1500, 0.61249, metrics) == (
        "**Selected** step 1,500 (val/score 0.612); **test**: detection AUC 0.701, "
        "real-vs-real control 0.552, near copies 0.000."
    )
    assert headline(None, None, {}) == (
        "**No step selected** (no validation probes): the last step ships; no test evaluation."
    )


def test_note_is_two_lines_data_then_outcome() -> None:
    label = data_label("creditcard", "file", "/data/creditcard.csv")
    note = RunNote(label, TrainedOn(21120, 36, 2000))
    first, second = note.tags()[NOTE_TAG].split("\n\n")
    assert first == (
        "**Trained on** creditcard, file /data/creditcard.csv: 21,120 training rows "
        "(36 rare-class), 2,000 steps."
    )
    assert second == PENDING
    refit = note.with_outcome("done.")
    refit = RunNote(refit.data, refit.fit, TrainedOn(23000, 41, 1500), refit.outcome)
    first, second = refit.text().split("\n\n")
    assert first.endswith("; refit on training + validation rows: 23,000 training rows "
                          "(41 rare-class), 1,500 steps.")  # fmt: skip
    assert second == "done."
    assert data_label("creditcard", "simulated", "simulated(seed=0, rows=4000)") == (
        "simulated rows (seed=0, rows=4000)"
    )


def test_sections_are_what_the_run_page_groups_by() -> None:
    assert names.in_section(names.EVAL, {"ks_mean": 1.0}) == {"eval/ks_mean": 1.0}
    assert names.section_of("refit/train/critic_loss") == names.REFIT
    assert names.section_of("loss") == ""
    assert names.name_in(names.EVAL, "eval/near_copies") == "near_copies"
    assert names.metric(names.REFIT, names.CRITIC_LOSS) == "refit/train/critic_loss"
