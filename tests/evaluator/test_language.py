"""The language analysis: instruction statistics, proposals and reviews, attribution,
interactions and failure analysis."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from elderbench.cli import main as elderbench
from evaluator.chat_client import ChatClient, EndpointConfig
from evaluator.errors import ConfigError
from evaluator.language import proposals as prop
from evaluator.language.attribution import (
    Observation,
    correlations,
    feature_matrix,
    interactions,
)
from evaluator.language.failures import (
    confirm_failure,
    failure_analysis,
    propose_failures,
    read_failure_proposals,
)
from evaluator.language.fm import fit_ensemble
from evaluator.language.instructions import (
    Instruction,
    compare_sets,
    instruction_stats,
    read_instruction_set,
    test_share,
)
from evaluator.language.text import features
from evaluator.records import TaskResult, TaskStatus
from evaluator.run_store import FailureCategory, FailureTag, RunStore
from evaluator.stats import chi_square, cohen_kappa, contingency_test, fisher_exact
from graph_builder.io import load_task
from graph_builder.model import Labels
from tests.evaluator.fake_llm_server import FakeLLMServer, reply

SAMPLE = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"


# --------------------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("text", "chars", "words", "verbs"),
    [
        ("the words are too small", 23, 5, 0),
        ("call my daughter", 16, 3, 1),
        ("  Open   Settings and turn on Wi-Fi ", 31, 6, 2),
        ("屏幕太暗了", 5, 5, 0),
        ("帮我打电话给女儿", 8, 8, 2),  # 打电话 is one verb, not 打 + 电话
        ("call 女儿 now", 11, 4, 1),  # mixed scripts
        ("ｃａｌｌ Anna", 9, 2, 1),  # full-width letters fold under NFKC
        ("I stopped it, then went home", 28, 6, 2),  # inflected and irregular forms
    ],
)
def test_text_features_count_characters_words_and_verbs(text, chars, words, verbs):
    f = features(text)
    assert (f.chars, f.words, f.verbs) == (chars, words, verbs)


def test_instruction_stats_on_a_hand_made_list():
    items = [
        Instruction("call my daughter", Labels("social_communication", ("elliptical",))),
        Instruction("屏幕太暗了", Labels("system_settings", ("elliptical",), ("indirect_speech",))),
        Instruction(
            "please open the messages app and send Tom the photo",
            Labels("social_communication", ("canonical", "compound")),
        ),
        Instruction("the words are too small", Labels("system_settings", ("narrative",))),
    ]
    s = instruction_stats(items)
    assert s.n == 4
    assert s.count_under_20 == 2 and s.share_under_20 == 0.5
    assert s.mean_chars == pytest.approx((16 + 5 + 51 + 23) / 4)
    assert s.median_words == 5  # 3, 5, 5, 10 words
    assert s.labels["scenario"]["system_settings"].count == 2
    assert s.labels["syntax"]["elliptical"].share == 0.5
    assert s.labels["semantics"]["indirect_speech"].count == 1
    assert sum(s.length_bins.values()) == 4
    assert s.share_multi_verb == 0.25  # open + send


def test_a_share_test_uses_fisher_for_small_counts_and_chi_square_otherwise():
    small = test_share("x", 1, 10, 6, 10)
    assert small.test == "fisher"
    # brute force: every table with the same margins no more likely than the observed one
    n, row1, col1 = 20, 10, 7
    probs = {
        a: math.comb(col1, a) * math.comb(n - col1, row1 - a) / math.comb(n, row1)
        for a in range(0, 8)
    }
    assert small.p_value == pytest.approx(sum(p for p in probs.values() if p <= probs[1] + 1e-12))
    large = test_share("x", 40, 100, 60, 100)
    assert large.test == "chi-square"
    # Pearson chi-square by hand: expected 50 in every cell, statistic 4 * 10**2 / 50 = 8
    assert large.p_value == pytest.approx(math.erfc(math.sqrt(8 / 2)), rel=1e-9)


def test_two_sets_are_compared_per_category(tmp_path):
    ours = tmp_path / "ours.tsv"
    ours.write_text(
        "instruction\tscenario\tsyntax\tsemantics\n"
        + "".join(f"short {i}\tsystem_settings\telliptical\tindirect_speech\n" for i in range(12))
        + "".join(
            f"please open the settings app and make the font larger {i}\tsystem_settings\t"
            "canonical\t\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text(
        "".join(
            json.dumps(
                {
                    "instruction": f"open the clock app and set an alarm for seven, {i}",
                    "labels": {"scenario": "tool_assistance", "syntax": ["canonical"]},
                }
            )
            + "\n"
            for i in range(15)
        ),
        encoding="utf-8",
    )
    c = compare_sets(read_instruction_set(ours), read_instruction_set(theirs))
    assert (c.length.count_a, c.length.count_b) == (12, 0)
    assert c.length.p_value < 0.001
    by_name = {t.category: t for t in c.labels}
    assert by_name["syntax=canonical"].count_a == 3 and by_name["syntax=canonical"].count_b == 15
    assert by_name["semantics=indirect_speech"].test == "chi-square"
    tool = by_name["scenario=tool_assistance"]  # 0 of 15 against 15 of 15: expected 7.5
    assert tool.test == "chi-square"
    assert tool.p_value == pytest.approx(math.erfc(math.sqrt(30 / 2)), rel=1e-9)
    rare = test_share("rare", 0, 15, 3, 15)
    assert rare.test == "fisher" and rare.p_value == pytest.approx(fisher_exact([[0, 15], [3, 12]]))


def test_instruction_files_in_every_format_and_their_errors(tmp_path):
    txt = tmp_path / "list.txt"
    txt.write_text("# another benchmark\nturn on wifi\n\n打开微信\n", encoding="utf-8")
    s = read_instruction_set(txt)
    assert [i.text for i in s.items] == ["turn on wifi", "打开微信"] and not s.labelled
    js = tmp_path / "list.json"
    js.write_text(json.dumps(["a", {"instruction": "b", "labels": {"syntax": "x;y"}}]))
    assert read_instruction_set(js).items[1].labels.syntax == ("x", "y")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instruction": "ok"}\n{oops\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl, line 2"):
        read_instruction_set(bad)
    with pytest.raises(ConfigError, match="no such file"):
        read_instruction_set(tmp_path / "missing.txt")
    (tmp_path / "folder").mkdir()
    with pytest.raises(ConfigError, match="must be a suite"):
        read_instruction_set(tmp_path / "folder")


# --------------------------------------------------------------------------- attribution


def _planted(n: int = 600, seed: int = 42) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b, c, d = (rng.random((4, n)) < 0.4).astype(float)
    e = rng.normal(size=n)
    logit = -0.3 + 0.3 * a - 0.2 * c + 1.8 * a * b - 1.4 * c * e + 0.6 * b * d
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    return np.stack([a, b, c, d, e], 1), y


def test_the_factorization_machine_recovers_planted_interactions():
    x, y = _planted()
    fitted = fit_ensemble(x, y, resamples=4)
    w = fitted.mean
    pairs = {(i, j): w[i, j] for i in range(5) for j in range(i + 1, 5)}
    ranked = sorted(pairs, key=pairs.get)
    assert ranked[-1] == (0, 1)  # the strongest positive: a x b (+1.8)
    assert ranked[0] == (2, 4)  # the strongest negative: c x e (-1.4)
    assert w[1, 3] > 0  # the weaker planted b x d (+0.6) keeps its sign
    assert fitted.sign_agreement[0, 1] == 1.0 and fitted.sign_agreement[2, 4] == 1.0
    again = fit_ensemble(x, y, resamples=4)
    assert np.array_equal(again.mean, fitted.mean)  # seeded: the same numbers every time


def _observations(n_per: int = 12) -> list[Observation]:
    obs = []
    for i in range(n_per):
        obs.append(
            Observation(
                f"s{i}",
                "r",
                "open settings and turn on wifi",
                (("scenario", "system_settings"), ("syntax", "canonical")),
                True,
            )
        )
        obs.append(
            Observation(
                f"e{i}",
                "r",
                "too dark",
                (("scenario", "system_settings"), ("syntax", "elliptical")),
                i < 2,
            )
        )
    obs.append(Observation("rare", "r", "ring Tom", (("scenario", "social_communication"),), False))
    return obs


def test_correlations_need_a_minimum_group_and_are_corrected():
    tests = {t.feature: t for t in correlations(feature_matrix(_observations()))}
    rare = tests["scenario=social_communication"]
    assert rare.r is None and "1 of 25" in rare.note
    canonical = tests["syntax=canonical"]
    assert canonical.r is not None and canonical.r > 0.7
    tested = [t for t in tests.values() if t.r is not None]
    assert all(t.p_holm >= t.p_value and t.q_bh >= t.p_value for t in tested)
    assert max(t.p_holm for t in tested) <= 1.0


def test_interactions_list_only_pairs_seen_together_often_enough():
    matrix = feature_matrix(_observations())
    analysis = interactions(matrix, tasks=25, min_support=5)
    names = {tuple(sorted((p.first, p.second))) for p in (*analysis.positive, *analysis.negative)}
    assert all("scenario=social_communication" not in pair for pair in names)
    assert all(p.support >= 5 for p in (*analysis.positive, *analysis.negative))


# --------------------------------------------------------------------------- proposals


@pytest.fixture
def suite(tmp_path) -> Path:
    """Three sample tasks in a suite of their own (one loses its labels and rewrite)."""
    out = tmp_path / "suite"
    out.mkdir()
    shutil.copy(SAMPLE / "suite.json", out / "suite.json")
    for task_id in ("call_daughter", "airplane_on", "fahrenheit"):
        (out / task_id).mkdir()
        shutil.copy(SAMPLE / task_id / "task.json", out / task_id / "task.json")
    data = json.loads((out / "fahrenheit" / "task.json").read_text())
    data["labels"] = {"scenario": None, "syntax": [], "semantics": []}
    data["normalized_instruction"] = None
    (out / "fahrenheit" / "task.json").write_text(json.dumps(data))
    return out


def _client(server: FakeLLMServer) -> ChatClient:
    return ChatClient(EndpointConfig(server.base_url, "labeller", retries=0))


def _label_reply(request) -> object:
    text = request.text()
    if "flying tomorrow" in text:
        return reply("I am not sure.")  # garbage: no JSON
    return reply(
        'Here: {"scenario": "system_settings", "syntax": ["elliptical"], '
        '"semantics": ["indirect_speech"]}'
    )


def test_label_proposals_are_stored_apart_and_garbage_is_an_item_error(suite):
    before = {d.name: (d / "task.json").read_bytes() for d in suite.glob("*/") if d.is_dir()}
    with FakeLLMServer(_label_reply) as server:
        store = prop.propose(suite, prop.Kind.LABELS, _client(server))
        prompt = server.received[0].text()
    assert "referential_ambiguity" in prompt and "could point to more than one" in prompt
    after = {
        d.name: (d / "task.json").read_bytes() for d in suite.glob("*/") if d.name != "language"
    }
    assert after == before  # proposing never touches task.json
    airplane = store.get(prop.Kind.LABELS, "airplane_on")
    assert airplane.proposed is None and "no JSON object" in airplane.error
    assert airplane.raw == "I am not sure."
    fahrenheit = store.get(prop.Kind.LABELS, "fahrenheit")
    assert fahrenheit.proposed["syntax"] == ["elliptical"] and fahrenheit.model == "labeller"
    # a second pass retries only the failed item
    with FakeLLMServer([reply('{"scenario": "system_settings", "syntax": ["elliptical"]}')]) as s2:
        store = prop.propose(suite, prop.Kind.LABELS, _client(s2))
        assert len(s2.received) == 1
    assert store.get(prop.Kind.LABELS, "airplane_on").error is None


def test_a_label_review_written_while_proposals_are_made_is_kept(suite):
    """A person accepts the first task's proposal in the studio while the model is still
    asked about the others: the proposal run's later writes must not put the file back as
    it was before the review."""
    reviewed: list[str] = []

    def on_event(event) -> None:  # type: ignore[no-untyped-def]
        if event.task_id == "call_daughter" and not event.skipped:
            first = "airplane_on"  # the suite lists it first; its reply was garbage
            prop.decide(suite, prop.Kind.LABELS, first, "rejected", annotator="ann-1")
            reviewed.append(first)

    with FakeLLMServer(_label_reply) as server:
        prop.propose(suite, prop.Kind.LABELS, _client(server), on_event=on_event)
    assert reviewed == ["airplane_on"]
    stored = prop.ProposalStore(suite)
    review = stored.get(prop.Kind.LABELS, "airplane_on").review
    assert review is not None and review.annotator == "ann-1"
    assert set(stored.all(prop.Kind.LABELS)) == {"airplane_on", "call_daughter", "fahrenheit"}


def test_a_review_waits_for_the_suite_lock_and_then_names_its_holder(suite, monkeypatch):
    from graph_builder.build import suite_lock

    monkeypatch.setattr(prop, "LOCK_WAIT_S", 0.2)
    with (
        suite_lock(suite, purpose="a build of task graphs"),
        pytest.raises(ConfigError, match="a build of task graphs"),
    ):
        prop.decide(suite, prop.Kind.LABELS, "fahrenheit", "rejected", annotator="ann-1")
    assert not (suite / "language" / "proposals.json").exists()  # nothing half-written


def test_a_label_outside_the_vocabulary_is_refused():
    vocab = {"scenario": ["a"], "syntax": ["b"], "semantics": []}
    with pytest.raises(prop.ReplyError, match="syntax=zz"):
        prop.parse_label_reply('{"scenario": "a", "syntax": ["zz"]}', vocab)


def test_a_verified_label_is_never_overwritten(suite):
    with FakeLLMServer(_label_reply) as server:
        prop.propose(suite, prop.Kind.LABELS, _client(server), force=True)
    original = load_task(suite / "call_daughter").labels
    with pytest.raises(ConfigError, match="never replaces"):
        prop.review(suite, prop.Kind.LABELS, "call_daughter", "accepted", annotator="ann-1")
    assert load_task(suite / "call_daughter").labels == original
    task = prop.review(suite, prop.Kind.LABELS, "fahrenheit", "accepted", annotator="ann-1")
    assert task.labels.syntax == ("elliptical",)
    assert load_task(suite / "fahrenheit").labels.scenario == "system_settings"
    record = prop.ProposalStore(suite).get(prop.Kind.LABELS, "fahrenheit")
    assert record.review.annotator == "ann-1" and record.review.decision is prop.Decision.ACCEPTED
    # a person's explicit correction is the one way to change verified labels
    prop.review(
        suite,
        prop.Kind.LABELS,
        "call_daughter",
        "corrected",
        annotator="ann-2",
        value={"scenario": "social_communication", "syntax": ["narrative"], "semantics": []},
    )
    assert load_task(suite / "call_daughter").labels.syntax == ("narrative",)


def test_label_agreement_per_dimension_with_kappa(suite):
    answers = {
        "call_daughter": '{"scenario": "social_communication", "syntax": ["elliptical"], '
        '"semantics": ["referential_ambiguity"]}',
        "airplane_on": '{"scenario": "social_communication", "syntax": ["elliptical"], '
        '"semantics": ["indirect_speech"]}',
    }

    def answer(request):
        for task_id, text in answers.items():
            if load_task(suite / task_id).instruction in request.text():
                return reply(text)
        return reply('{"scenario": "system_settings", "syntax": [], "semantics": []}')

    with FakeLLMServer(answer) as server:
        prop.propose(suite, prop.Kind.LABELS, _client(server), tasks=list(answers))
    verified = {t: load_task(suite / t).labels for t in answers}
    by_dim = {a.dimension: a for a in prop.label_agreement(suite)}
    scenario = by_dim["scenario"]
    assert scenario.tasks == 2  # fahrenheit has no verified labels: not counted
    expected = cohen_kappa(
        ["social_communication", "social_communication"],
        [verified["call_daughter"].scenario, verified["airplane_on"].scenario],
    )
    assert scenario.decisions.kappa == expected.kappa
    assert scenario.exact == pytest.approx(
        sum(v.scenario == "social_communication" for v in verified.values()) / 2
    )
    semantics = by_dim["semantics"]
    assert semantics.decisions.n == 2 * 4  # two tasks x four semantics labels


def test_cohen_kappa_by_hand():
    k = cohen_kappa([1, 1, 1, 0, 0, 0, 1, 0], [1, 1, 0, 0, 0, 1, 1, 0])
    # observed 6/8; each rater says 1 half the time: chance 0.5; kappa (0.75 - 0.5) / 0.5
    assert k.observed == 0.75 and k.kappa == pytest.approx(0.5)
    assert cohen_kappa(["a", "a"], ["a", "a"]).kappa is None  # undefined, not 1


def test_normalized_rewrites_are_proposed_and_accepted_only_where_none_exists(suite):
    with FakeLLMServer([reply('{"rewrite": "In Weather, switch the unit to Fahrenheit."}')]) as s:
        prop.propose(suite, prop.Kind.REWRITES, _client(s))
    task = prop.review(suite, prop.Kind.REWRITES, "fahrenheit", "accepted", annotator="ann-1")
    assert task.normalized_instruction == "In Weather, switch the unit to Fahrenheit."
    before = load_task(suite / "call_daughter").normalized_instruction
    with pytest.raises(ConfigError, match="never replaces"):
        prop.review(suite, prop.Kind.REWRITES, "call_daughter", "accepted", annotator="ann-1")
    assert load_task(suite / "call_daughter").normalized_instruction == before


def test_label_cli_proposes_reports_bad_replies_and_reviews(suite, tmp_path, capsys):
    endpoint = tmp_path / "endpoint.json"
    with FakeLLMServer(_label_reply) as server:
        endpoint.write_text(json.dumps({"base_url": server.base_url, "model": "m", "retries": 0}))
        code = elderbench(["label", str(suite), "--endpoint", str(endpoint)])
    out = capsys.readouterr()
    assert code == 1 and "airplane_on: error" in out.err and "1 replies unusable" in out.out
    assert elderbench(["label", str(suite), "--accept", "fahrenheit"]) == 1
    assert "--annotator" in capsys.readouterr().err
    assert elderbench(["label", str(suite), "--accept", "fahrenheit", "--annotator", "a"]) == 0
    assert load_task(suite / "fahrenheit").labels.scenario == "system_settings"


# --------------------------------------------------------------------------- failures


@pytest.fixture
def run(tmp_path) -> RunStore:
    store = RunStore.create(tmp_path / "run", {"agent": {"name": "test"}, "suite": {}})
    for i, status in enumerate(["failure"] * 5 + ["success", "error"]):
        store.append_result(
            TaskResult(f"t{i}", TaskStatus(status), "online", instruction=f"do thing {i}")
        )
    return store


def test_failure_shares_are_of_analysed_failures_by_primary_tag(run):
    run.set_tags("t0", [FailureTag(FailureCategory.INTENT), FailureTag(FailureCategory.GROUNDING)])
    run.set_tags("t1", [FailureTag(FailureCategory.INTENT)])
    run.set_tags("t2", [FailureTag(FailureCategory.GROUNDING)])
    run.set_tags("t5", [FailureTag(FailureCategory.PLANNING)])  # a success: set aside
    f = failure_analysis(run)
    assert (f.failures, f.analysed, f.set_aside) == (5, 3, 1)
    shares = {c.title: c for c in f.categories}
    intent = shares["Intent understanding / capability boundary"]
    assert intent.primary == 2 and intent.share == pytest.approx(2 / 3)
    grounding = shares["Visual grounding / action execution"]
    assert grounding.primary == 1 and grounding.any_tag == 2
    assert sum(c.primary for c in f.categories) == f.analysed


def test_failure_proposals_come_from_the_model_and_count_once_confirmed(run):
    answers = [
        reply('{"category": "long_horizon_planning", "reason": "lost track"}'),
        reply("no idea"),
        reply('{"category": "weather", "reason": "?"}'),
    ]
    with FakeLLMServer(answers) as server:
        proposals = propose_failures(run, _client(server))
        assert len(server.received) == 5  # the five failures, not the success or the error
    assert proposals["t0"]["category"] == "long_horizon_planning"
    assert "no JSON object" in proposals["t1"]["error"]
    assert "not one of" in proposals["t2"]["error"]
    assert failure_analysis(run).analysed == 0  # proposals are not analyses
    confirm_failure(run, "t0", annotator="ann-1")
    tag = run.tags()["t0"][0]
    assert tag.category is FailureCategory.PLANNING and "ann-1" in tag.note
    assert read_failure_proposals(run)["t0"]["review"]["agreed"] is True
    assert failure_analysis(run).analysed == 1


def test_a_review_written_while_proposals_are_made_is_kept(run):
    """A reviewer confirms t0's proposal as soon as it is written, while the model is still
    asked about the other failures: the later writes must not put back the file as it was
    before the review."""
    answers = [reply('{"category": "long_horizon_planning", "reason": "lost track"}')] * 5

    def on_event(event) -> None:  # type: ignore[no-untyped-def]
        if event.task_id == "t1":  # another studio, meanwhile
            confirm_failure(run, "t0", annotator="ann-1")

    with FakeLLMServer(answers) as server:
        proposals = propose_failures(run, _client(server), on_event=on_event)
    assert len(proposals) == 5
    stored = read_failure_proposals(run)
    assert stored["t0"]["review"] == {"annotator": "ann-1", "agreed": True}
    assert set(stored) == {"t0", "t1", "t2", "t3", "t4"}


# --------------------------------------------------------------------------- the command


def test_analyze_json_on_the_sample_suite(tmp_path, capsys):
    against = tmp_path / "other.txt"
    against.write_text("please open the settings app and turn on airplane mode\n" * 6)
    code = elderbench(
        ["analyze", str(SAMPLE), "--against", str(against), "--json", "--out", str(tmp_path / "a")]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    stats = data["instructions"]
    assert stats["n"] == len(list(SAMPLE.glob("*/task.json")))
    assert 0 < stats["share_under_20"] < 1
    assert data["comparison"]["share_under_20"]["count_b"] == 0
    assert data["comparison"]["labels"] == []  # a plain list has no labels to compare
    assert "interactions" in data and data["interactions"] is None  # no runs given
    assert (tmp_path / "a" / "analysis.html").read_text().count("<svg") >= 2


def test_length_bins_with_small_expected_counts_get_an_exact_test_and_say_so(tmp_path, capsys):
    """analyze --against on small sets: most expected counts of the 2 x 5 length-bin table
    are under 5, so the chi-square approximation is not used unmarked (as the 2x2 share
    tests switch to Fisher under the same rule)."""
    against = tmp_path / "other.txt"
    against.write_text("please open the settings app and turn on airplane mode\n" * 6)
    out = tmp_path / "a"
    assert (
        elderbench(["analyze", str(SAMPLE), "--against", str(against), "--json", "--out", str(out)])
        == 0
    )
    bins = json.loads(capsys.readouterr().out)["comparison"]["length_bins_test"]
    assert bins["test"] == "monte-carlo" and bins["small_expected"] > 0
    assert bins["resamples"] == 10_000 and 0 < bins["p_value"] <= 1
    text = (out / "analysis.md").read_text()
    assert f"{bins['small_expected']} of {bins['cells']} expected counts are under 5" in text
    assert "chi-square approximation does not hold" in text


def test_length_bins_with_large_counts_keep_the_chi_square():
    big = contingency_test([[30, 40, 22, 10, 8], [12, 25, 40, 30, 20]])
    assert big.test == "chi-square" and big.small_expected == 0
    assert big.p_value == chi_square([[30, 40, 22, 10, 8], [12, 25, 40, 30, 20]]).p_value
    small = contingency_test([[3, 8, 2, 1, 0], [1, 2, 9, 6, 4]])
    assert small.test == "monte-carlo" and small.small_expected == 8 and small.cells == 10
    assert small == contingency_test([[3, 8, 2, 1, 0], [1, 2, 9, 6, 4]])  # seeded
    assert contingency_test([[1, 9], [6, 4]]).test == "fisher"
