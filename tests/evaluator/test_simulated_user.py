"""The simulated user (evaluator.users): a model behind a local fake endpoint plays the
older adult, answering from the task's hidden intent; its failures are harness errors."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace

import pytest

from elderbench.cli import main as elderbench_main
from evaluator.agents.base import AgentObservation, AgentStep
from evaluator.agents.replay import ReplayAgent
from evaluator.manifest import read_manifest
from evaluator.offline import GraphContext, run_offline
from evaluator.records import ErrorKind, TaskResult, TaskStatus
from evaluator.run_store import RunStore
from evaluator.users import SimulatedUser, hidden_intent, refusal
from graph_builder.io import load_task, save_task
from graph_builder.model import Action, Task
from task_graphs import sample_suite
from tests.evaluator.fake_llm_server import Answer, FakeLLMServer, Received, garbage, reply

INTENT = re.compile(r"What you really want \(the assistant cannot see this\): (.+)")


def from_intent(request: Received) -> Answer:
    """A fake older adult: says back the hidden intent it was sent, nothing else."""
    found = INTENT.search(request.text())
    wanted = found.group(1).strip() if found else "I don't know."
    return reply(f"Oh, {wanted[0].lower()}{wanted[1:]}", prompt_tokens=700, completion_tokens=12)


class AskingAgent(ReplayAgent):
    """Asks once, then walks the graph only if the reply names the person it expects."""

    def __init__(self, expects: str) -> None:
        super().__init__({})
        self.expects = expects
        self.replies: list[str | None] = []

    def step(self, observation: AgentObservation) -> AgentStep:
        if observation.step == 0:
            return AgentStep(action=Action.ask_user("Which daughter do you mean?"))
        if observation.step == 1:
            self.replies.append(observation.user_reply)
            if self.expects not in (observation.user_reply or ""):
                return AgentStep(action=Action.give_up("I do not know whom to call"))
        return super().step(observation)


def sample_task(task_id: str, **changes: object) -> tuple[Task, GraphContext]:
    folder = sample_suite() / task_id
    return replace(load_task(folder), **changes), GraphContext.load(folder)


def endpoint(server: FakeLLMServer, **more: object) -> dict[str, object]:
    return {"base_url": server.base_url, "model": "older-adult", "retries": 0, **more}


def run(task: Task, graph: GraphContext, agent: ReplayAgent, user: SimulatedUser | None):
    records: list = []
    result = run_offline(task, graph, agent, on_step=records.append, user=user)
    return result, records


def test_the_simulated_user_answers_from_the_hidden_intent_and_is_traced_and_priced_apart():
    task, graph = sample_task(
        "call_daughter", intent="Call Emma, my older daughter.", clarifications=()
    )
    with FakeLLMServer(from_intent) as server:
        agent = AskingAgent("Emma")
        result, records = run(task, graph, agent, SimulatedUser(endpoint(server)))
    assert result.success, result.reason
    assert agent.replies == ["Oh, call Emma, my older daughter."]
    sent = server.received[0]
    assert "Which daughter do you mean?" in sent.text() and sent.images() == 1
    assert "call my daughter" in sent.text()  # what the person said
    asked = records[0]
    assert asked.outcome == "asked_user" and "simulated user replied" in asked.rule
    assert asked.extra["user"]["question"] == "Which daughter do you mean?"
    assert asked.extra["user"]["source"] == "simulated"
    assert asked.extra["user_reply"] == "Oh, call Emma, my older daughter."
    # the user's tokens are its own, not the agent's
    assert [u.to_json() for u in result.user_usage] == [
        {"model": "older-adult", "input": 700, "output": 12, "retry_seconds": 0.0}
    ]
    assert result.input_tokens == 0 and result.questions == 1
    again = TaskResult.from_json(json.loads(json.dumps(result.to_json())))
    assert again.user_usage == result.user_usage and again.questions == 1


def test_another_intent_gets_another_answer_and_the_agent_acts_on_it():
    task, graph = sample_task("call_daughter", intent="Call my son Tom.", clarifications=())
    with FakeLLMServer(from_intent) as server:
        agent = AskingAgent("Emma")
        result, _ = run(task, graph, agent, SimulatedUser(endpoint(server)))
    assert agent.replies == ["Oh, call my son Tom."]
    assert result.status is TaskStatus.FAILURE and result.outcome == "gave_up"


def test_without_an_intent_the_normalized_instruction_is_what_the_user_wants():
    task, _ = sample_task("call_daughter", intent=None)
    assert hidden_intent(task) == "Call Daughter (Emma) with the Phone app."


def test_scripted_clarifications_stay_the_default():
    task, graph = sample_task("call_daughter", clarifications=("Emma, dear.",))
    result, records = run(task, graph, AskingAgent("Emma"), None)
    assert result.success, result.reason
    assert records[0].extra["user"]["source"] == "scripted" and not result.user_usage


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (garbage(), "not a chat completion"),
        (reply('{"action": "tap", "x": 10, "y": 20}'), "JSON object"),
        (reply("   "), "empty"),
        (reply("Tap the green button. " * 40), "more than 400"),
        (reply("Emma.", delay=2.0), "within"),
    ],
    ids=["garbage", "acts", "empty", "rambles", "timeout"],
)
def test_a_simulator_failure_is_a_harness_error_not_an_agent_failure(answer, says):
    task, graph = sample_task("call_daughter", intent="Call Emma.")
    with FakeLLMServer([answer]) as server:
        user = SimulatedUser(endpoint(server, timeout=0.5, call_timeout=0.8))
        result, records = run(task, graph, AskingAgent("Emma"), user)
    assert result.status is TaskStatus.ERROR and result.error_kind == ErrorKind.USER_SIMULATOR
    assert says in result.reason and result.reason.startswith("user simulator:")
    assert records[-1].outcome == "asked_user" and result.questions == 1
    if answer.body and b"choices" in answer.body and not answer.delay:
        # a refused reply still cost its tokens, priced apart
        assert result.user_usage and result.user_usage[0].model == "older-adult"


def test_refusal_lets_short_uncertain_replies_through():
    assert refusal("Hmm, I'm not sure. The blue one?", 400) is None
    assert refusal("<tool_call>{}</tool_call>", 400) == (
        "the reply calls a function instead of answering"
    )


def test_eval_records_the_simulator_in_run_json_without_its_key(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OLDER_ADULT_KEY", "sk-simulated-user-secret-123456")
    suite = tmp_path / "suite"
    source = sample_suite()
    (suite / "call_daughter").mkdir(parents=True)
    (suite / "suite.json").write_bytes((source / "suite.json").read_bytes())
    shutil.copytree(source / "call_daughter", suite / "call_daughter", dirs_exist_ok=True)
    task = load_task(suite / "call_daughter")
    save_task(replace(task, intent="Call Emma, my older daughter."), suite / "call_daughter")
    with FakeLLMServer(from_intent) as server:
        config = tmp_path / "user.json"
        config.write_text(
            json.dumps({**endpoint(server), "api_key_env": "OLDER_ADULT_KEY", "persona": "terse"})
        )
        code = elderbench_main(
            [
                "eval",
                "--suite",
                str(suite),
                "--agent",
                "replay",
                "--user-simulator",
                str(config),
                "--out",
                str(tmp_path / "run"),
            ]
        )
    assert code == 0
    info = RunStore.open(tmp_path / "run").info()
    recorded = info["config"]["user_simulator"]
    assert recorded["model"] == "older-adult" and recorded["persona"] == "terse"
    assert "sk-simulated" not in (tmp_path / "run" / "run.json").read_text()
    manifest = read_manifest(tmp_path / "run")  # the simulated user is pinned like a judge
    assert manifest is not None and manifest["models"]["user"] == "older-adult"
    assert "What you really want" in manifest["prompts"]["user.template"]["text"]
    assert server.received == []  # the replay agent never asks


def test_a_bad_simulator_file_is_refused_before_the_run(tmp_path, capsys):
    config = tmp_path / "user.json"
    config.write_text(json.dumps({"base_url": "ftp://x", "model": "m"}))
    code = elderbench_main(
        [
            "eval",
            "--suite",
            str(sample_suite()),
            "--agent",
            "replay",
            "--user-simulator",
            str(config),
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code == 1
    said = capsys.readouterr().err
    assert "--user-simulator: base_url must start with http" in said
    assert not (tmp_path / "run").exists()


def test_report_json_counts_asking_per_run(tmp_path, capsys):
    """Three episodes asked (one success, one failure, one harness error), one did not."""
    store = RunStore.create(tmp_path / "run", {"agent": {"name": "asking"}})
    emma, graph = sample_task("call_daughter", intent="Call Emma.")
    with FakeLLMServer(from_intent) as server:
        store.append_result(
            run(emma, graph, AskingAgent("Emma"), SimulatedUser(endpoint(server)))[0]
        )
    with FakeLLMServer([garbage()]) as server:
        broken = replace(emma, id="call_daughter_again")
        store.append_result(
            run(broken, graph, AskingAgent("Emma"), SimulatedUser(endpoint(server)))[0]
        )
    tom, graph = sample_task("text_tom_late")  # no scripted reply: asking ends it
    store.append_result(run(tom, graph, AskingAgent("Emma"), None)[0])
    font, graph = sample_task("font_bigger")
    store.append_result(run(font, graph, ReplayAgent({}), None)[0])
    assert elderbench_main(["report", str(tmp_path / "run"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    asking = data["asking"]
    assert asking["episodes"] == 3 and asking["episodes_that_asked"] == 2
    assert asking["questions_per_episode"] == pytest.approx(2 / 3)
    assert asking["sr_when_asked"] == {"value": 0.5, "successes": 1, "episodes": 2}
    assert asking["sr_when_not_asked"] == {"value": 1.0, "successes": 1, "episodes": 1}
    assert asking["asking_by_label"] == {
        "under_specified_or_ambiguous": {"episodes": 2, "asked": 2, "rate": 1.0},
        "other": {"episodes": 1, "asked": 0, "rate": 0.0},
    }
    assert asking["steps"]["ask_user"] == 2 and asking["user_simulator_errors"] == 1
    assert data["counts"]["user_simulator_errors"] == 1
    assert "1 user simulator error excluded" in data["sr_line"]
    assert data["tokens"]["user_input"] == 700 and data["tokens"]["input"] == 0
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Asking the user" in report and "| Episodes that asked | 66.7% (2 of 3) |" in report


def test_online_the_simulated_user_sees_the_phone_and_its_failure_is_an_error(
    virtual_server, tmp_path
):
    from devices.android import AndroidDevice, adb_client
    from evaluator.online import run_online
    from graph_builder.model import ResetRecipe
    from tests.evaluator.scripted import ScriptedAgent

    task = Task(
        id="which_setting",
        instruction="make it easier to see",
        app="com.android.settings",
        protocol="online",
        reset=ResetRecipe("com.android.settings"),
        intent="Make the letters bigger, not the screen brighter.",
        max_steps=4,
    )
    store = RunStore.create(tmp_path / "run", {"agent": {"name": "scripted"}})
    device = AndroidDevice("virtual-1", client=adb_client(port=virtual_server.port), timeout=5.0)
    try:
        for task_id, answers in (("answered", from_intent), ("unanswered", [garbage()])):
            agent = ScriptedAgent([Action.ask_user("Bigger letters or a brighter screen?")])
            trace = store.start_trace(task_id)
            records: list = []
            with FakeLLMServer(answers) as server:
                result = run_online(
                    replace(task, id=task_id),
                    agent,
                    device,
                    trace,
                    on_step=records.append,
                    user=SimulatedUser(endpoint(server)),
                )
            trace.close()
            assert server.received[0].images() == 1  # the phone's screen as it is now
            if task_id == "answered":
                said = "Oh, make the letters bigger, not the screen brighter."
                assert agent.seen[1].user_reply == said
                assert records[0].extra["user"]["reply"] == said
                assert result.status is TaskStatus.FAILURE  # it never said done
                assert result.user_usage[0].input_tokens == 700
            else:
                assert result.status is TaskStatus.ERROR
                assert result.error_kind == ErrorKind.USER_SIMULATOR
                assert len(records) == 1 and result.device == "virtual-1"
    finally:
        device.close()


def test_an_asking_agent_through_the_cli_gets_the_simulated_reply_and_succeeds(tmp_path, capsys):
    """elderbench eval with the openai agent (JSON family) and --user-simulator, both
    played by one local endpoint: the agent asks which child, the simulated user answers
    from the task's hidden intent, and the agent then calls the one it was told."""
    from tests.evaluator.test_family_runs import FamilyModel

    navigator = FamilyModel("json")
    asked: list[str] = []

    def endpoint_answer(request: Received) -> Answer:
        text = request.text()
        if INTENT.search(text):  # the simulated user's prompt
            return from_intent(request)
        if not asked:
            asked.append(text)
            return reply('{"action": "ask_user", "question": "Your son or your daughter?"}')
        return navigator(request)

    with FakeLLMServer(endpoint_answer) as server:
        agent = tmp_path / "agent.json"
        agent.write_text(json.dumps({**endpoint(server), "model": "agent", "family": "json"}))
        user = tmp_path / "user.json"
        user.write_text(json.dumps(endpoint(server)))
        argv = ["eval", "--suite", str(sample_suite()), "--agent", "openai"]
        argv += ["--agent-config", str(agent), "--user-simulator", str(user)]
        argv += ["--tasks", "call_my_child", "--out", str(tmp_path / "run")]
        assert elderbench_main(argv) == 0
        user_prompts = [r for r in server.received if INTENT.search(r.text())]
        agent_prompts = [r.text() for r in server.received if not INTENT.search(r.text())]
    # the agent's next prompt carries the reply
    said = "The user answered your question: Oh, call my son Tom, not my daughter Emma."
    assert said in agent_prompts[1] and said not in agent_prompts[0]
    (result,) = RunStore.open(tmp_path / "run").results()
    assert result.success, result.reason
    assert result.questions == 1 and [u.model for u in result.user_usage] == ["older-adult"]
    (prompt,) = user_prompts
    assert "Call my son Tom, not my daughter Emma." in prompt.text()
    assert "give my child a ring" in prompt.text() and "Your son or your daughter?" in prompt.text()
    steps = RunStore.open(tmp_path / "run").read_steps("call_my_child")
    assert steps[0].extra["user"]["reply"] == "Oh, call my son Tom, not my daughter Emma."
    capsys.readouterr()
    assert elderbench_main(["report", str(tmp_path / "run"), "--json"]) == 0
    asking = json.loads(capsys.readouterr().out)["asking"]
    assert asking["episodes_that_asked"] == 1 and asking["sr_when_asked"]["successes"] == 1
