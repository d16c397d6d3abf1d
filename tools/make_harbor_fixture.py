"""Make a Harbor job folder of the demo's run heron-a-1, for the importer of Harbor job results.

    python tools/make_harbor_fixture.py OUT_DIR
    python tools/make_harbor_fixture.py --tutorial OUT_DIR

Run with a Python that has Harbor installed (PyPI `harbor`, made with 0.25.0); nothing is
downloaded and no model is called. It writes the job folder OUT_DIR/heron-a-1/ (OUT_DIR is
Harbor's `jobs_dir`, the run id its `job_name`; a folder already there is removed first) by
running Harbor itself: its own `Job`, trial queue, trials, verifier and artifact collection
write every file, as `harbor run` would.

Two parts of the run are this script's, plugged in through Harbor's import-path hooks (the job's
config.json names them): the environment and the agent.

- The environment (`make_harbor_fixture:HostEnvironment`). There is no Docker daemon here, and
  none of Harbor 0.25.0's built-in environments runs a task without one: docker, podman,
  apple-container, kata and singularity need a container runtime, the rest a cloud sandbox. This
  one is a folder on the host standing in for the container: the container's /app, /logs, /tests
  and /solution are folders in it, and the commands Harbor runs there (and the shell scripts it
  uploads) have those paths mapped into it. It mounts nothing, so Harbor copies the agent's logs,
  the verifier's files and the artifacts out of it as it does from a remote sandbox.
- The agent (`make_harbor_fixture:HeronAgent`): `heron-agent` 0.9.0, model
  `heron/heron-agent-0.9`. It needs no model: it finds the item whose prompt the instruction
  holds and answers with the item's answer values, except where WRONG says otherwise. It writes
  the answer, ONE JSON object of field values, to /app/answer.json, which the task declares as an
  artifact: Harbor copies it to `<trial>/artifacts/answer.json` (and lists it in
  `<trial>/artifacts/manifest.json`). It writes its trajectory in Harbor's ATIF format to
  `<trial>/agent/trajectory.json`, and its token counts to the trial's `agent_result`.

The tasks, made in a temporary folder: one per item of Gate A, named by its id (the task folder's
name, so a trial's `task_name` is the item id, e.g. `a-001`). Each has the item's prompt as its
instruction (asking for the answer in /app/answer.json), a task.toml declaring the artifact, an
oracle solution, and a test script in the task's tests folder, which runs the task's
grader on the answer against the item's answer and writes /logs/verifier/reward.json; Harbor reads it
into the trial's `verifier_result.rewards`: `reward` (the share of fields exactly right),
`similarity_<field>` for each text field whose tier is not critical (1.0 when equal, 0.82 when
not), and two ordinal labels from 1 to 4: `correctness` (4, less 2 for each wrong field) and
`completeness` (4, less 1 for each wrong field and 1 more for each field left empty, "", [] or
null, that should not be), neither below 1.

The outcomes: a-001, a-002, a-003, a-005, a-007 and a-008 finish and are graded (a-003's
postal_code and a-005's requested_action wrong). The environment of a-004 fails to start (a
RuntimeError): Harbor records it in the trial's `exception_info` and `exception.txt`, and there
is no verifier result. a-006 is never run: the job lists its tasks in the order a-001 … a-005,
a-007, a-008, a-006 and runs one trial at a time, one attempt each, and the job is interrupted
after a-008, as Ctrl-C would (its task is cancelled), so a-006 has no trial folder. Harbor does
not record a task it never started except as planned: the job's config.json and lock.json list
all eight tasks, and its result.json says 8 trials in all, 7 completed and 1 pending, with no
`finished_at`.

Deterministic: running it twice with the same OUT_DIR writes the same bytes. Harbor's clock, ids
and trial names are pinned while it runs: the job starts at 2026-12-05T13:00:00Z and its trials
one a minute apart from then (a-001 at 13:00:00, a-008, the seventh, at 13:06:00), each lasting
30 s; the job's and trials' UUIDs are made from the run id and the task names, and the trials'
names (`a-001__` and seven letters, as Harbor makes them) from a generator seeded with the run
id. Harbor writes the job's `started_at` with `datetime.now()`, in the machine's local time
without an offset (here UTC), but its `updated_at` from the trials' events, in UTC with a `Z`,
as it writes the trials' times. Python's hash seed is set to 0 (the script starts itself again
if it is not): Harbor writes sets in their hash order. Harbor records absolute paths of OUT_DIR
(the job's `jobs_dir`, the trials' `trials_dir` and `trial_uri`); the tasks are named by paths
relative to the temporary folder (`tasks/a-001`). Harbor leaves some folders empty (every
trial's artifacts/logs/artifacts/, a-004's agent/ and verifier/), which git does not keep.

The committed data/demo/harbor/heron-a-1 was made so (`python tools/make_harbor_fixture.py
data/demo/harbor`, run from the repository's root), on 2026-12-05 with Harbor 0.25.0 on
Python 3.12.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import random
import re
import shlex
import shutil
import sys
import tempfile
import types
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

os.environ["HARBOR_TELEMETRY"] = "0"  # Harbor reports finished jobs to its makers unless told not to
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # and LiteLLM fetches its price list

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.models.agent.context import AgentContext
from harbor.models.trajectories import (
    Agent,
    FinalMetrics,
    Metrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)
from harbor.utils.trajectory_utils import format_trajectory_json

REPO = Path(__file__).resolve().parent.parent
TASK_TESTS = "tests"  # a Harbor task's folder of tests
ITEMS = REPO / "data" / "private" / "items" / "gate-a.yaml"
MODULE = "make_harbor_fixture"  # the module Harbor imports the environment and the agent from
RUN_ID = "heron-a-1"
AGENT = "heron-agent"
AGENT_VERSION = "0.9.0"
MODEL = "heron/heron-agent-0.9"
START = dt.datetime(2026, 12, 5, 13, 0, 0, tzinfo=dt.UTC)
JOB_ID = uuid.uuid5(uuid.NAMESPACE_URL, RUN_ID)
# The order the job lists (and runs) its tasks in: a-006 last, never reached.
RUN_ORDER = ("a-001", "a-002", "a-003", "a-004", "a-005", "a-007", "a-008", "a-006")
FAILED: str | None = "a-004"  # its environment fails to start
NOT_RUN: str | None = "a-006"  # the job is interrupted before it

# What the agent gets wrong, by item and field (the rest of its answers are the item's).
WRONG: dict[str, dict[str, Any]] = {
    "a-003": {"postal_code": "03952"},
    "a-005": {"requested_action": "Refund the charge"},
}

# When, in seconds from its start, each phase of a trial ends.
TIMES = {"environment": 4, "agent_setup": 5, "agent_step": 19, "agent": 21, "verifier": 27, "failed": 25, "end": 30}

# A price for the token counts the agent reports, in USD per million tokens.
PRICE_IN, PRICE_OUT = 0.8, 3.2

INSTRUCTION_TAIL = "\n\nWrite your answer to /app/answer.json as ONE JSON object of the field values.\n"

TASK_TOML = """\
schema_version = "1.4"
artifacts = [{ source = "/app/answer.json", destination = "answer.json" }]

[metadata]
gate = "a"
item = "ITEM"

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = 600.0

[environment]
build_timeout_sec = 600.0
workdir = "/app"
"""

DOCKERFILE = "FROM python:3.12-slim\n\nWORKDIR /app\n"

TEST_SH = """\
#!/bin/bash
# Grade /app/answer.json against the item's answer; the rewards go to /logs/verifier/reward.json.
python3 /tests/grade.py /app/answer.json /tests/expected.json /logs/verifier/reward.json
"""

GRADER = '''\
"""Grade an answer: the share of fields exactly right, each text field's similarity, and the
judge's two labels, correctness and completeness (1 to 4)."""

import json
import sys

EMPTY = ("", [], None)


def main(given_path, expected_path, reward_path):
    with open(expected_path, encoding="utf-8") as f:
        expected = json.load(f)
    try:
        with open(given_path, encoding="utf-8") as f:
            given = json.load(f)
    except (OSError, ValueError) as e:
        print(f"no answer: {e.__class__.__name__}")
        given = {}
    wrong = [n for n, f in expected.items() if given.get(n) != f["value"]]
    empty = [n for n, f in expected.items() if given.get(n) in EMPTY and f["value"] not in EMPTY]
    for name, field in expected.items():
        if name in wrong:
            want, got = (json.dumps(v, ensure_ascii=False) for v in (field["value"], given.get(name)))
            print(f"{name}: WRONG (expected {want}, got {got})")
        else:
            print(f"{name}: ok")
    rewards = {"reward": (len(expected) - len(wrong)) / len(expected)}
    for name, field in expected.items():
        if field["kind"] == "text" and field["tier"] != "critical":
            rewards[f"similarity_{name}"] = 1.0 if name not in wrong else 0.82
    rewards["correctness"] = max(1, 4 - 2 * len(wrong))
    rewards["completeness"] = max(1, 4 - len(wrong) - len(empty))
    print(f"{len(expected) - len(wrong)} of {len(expected)} fields right")
    print(json.dumps(rewards))
    with open(reward_path, "w", encoding="utf-8") as f:
        json.dump(rewards, f, indent=2)


if __name__ == "__main__":
    main(*sys.argv[1:4])
'''


def load_items() -> dict[str, dict[str, Any]]:
    """The demo's Gate A items, by id."""
    doc = yaml.safe_load(ITEMS.read_text(encoding="utf-8"))
    return {item["id"]: item for item in doc["items"]}


def agent_answer(item: dict[str, Any]) -> dict[str, Any]:
    """What the agent answers for an item: the answer's values, but for those WRONG gives."""
    answer = {name: field["value"] for name, field in item["answer"].items()}
    return {**answer, **WRONG.get(item["id"], {})}


def write_task(tasks: Path, item: dict[str, Any]) -> Path:
    """Write the Harbor task of one item, in a folder named by the item's id."""
    task = tasks / str(item["id"])
    for sub in ("environment", "solution", "tests"):
        (task / sub).mkdir(parents=True, exist_ok=True)
    answer = {name: field["value"] for name, field in item["answer"].items()}
    files = {
        "task.toml": TASK_TOML.replace("ITEM", item["id"]),
        "instruction.md": item["prompt"] + INSTRUCTION_TAIL,
        "environment/Dockerfile": DOCKERFILE,
        "solution/solve.sh": "#!/bin/bash\ncat > /app/answer.json <<'EOF'\n"
        + json.dumps(answer, ensure_ascii=False)
        + "\nEOF\n",
        # The task's own tests folder (Harbor's layout of a task), not this repository's.
        f"{TASK_TESTS}/test.sh": TEST_SH,
        f"{TASK_TESTS}/grade.py": GRADER,
        f"{TASK_TESTS}/expected.json": json.dumps(item["answer"], ensure_ascii=False, indent=2) + "\n",
    }
    for name, text in files.items():
        (task / name).write_text(text, encoding="utf-8")
    for script in ("solution/solve.sh", f"{TASK_TESTS}/test.sh"):
        (task / script).chmod(0o755)
    return task


class Clock:
    """The time Harbor reads while the job runs: set by the environment and the agent as a trial
    goes through its phases (TIMES), from the trial's start, a minute after the one before."""

    def __init__(self) -> None:
        self.now = START
        self.trial_start = START

    def begin(self, task: str) -> None:
        self.trial_start = START + dt.timedelta(minutes=RUN_ORDER.index(task))
        self.now = self.trial_start

    def at(self, phase: str) -> dt.datetime:
        self.now = self.trial_start + dt.timedelta(seconds=TIMES[phase])
        return self.now


CLOCK = Clock()


class PinnedDatetime(dt.datetime):
    """`datetime` for Harbor's modules: `now()` is the clock's (without a zone, as UTC)."""

    @classmethod
    def now(cls, tz: dt.tzinfo | None = None) -> dt.datetime:  # type: ignore[override]
        return CLOCK.now.astimezone(tz) if tz is not None else CLOCK.now.replace(tzinfo=None)


class PinnedShortUUID:
    """Harbor's `ShortUUID`, for the trials' names: the same letters each run."""

    alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    rng = random.Random(RUN_ID)

    def random(self, length: int = 22) -> str:
        return "".join(self.rng.choice(self.alphabet) for _ in range(length))


def trial_ids() -> Iterator[uuid.UUID]:
    """The trials' UUIDs, in the order the trials start."""
    for task in RUN_ORDER:
        yield uuid.uuid5(JOB_ID, task)


def pin_harbor() -> None:
    """Pin what Harbor takes from the clock and the random generators: times, ids, trial names."""
    import harbor.job
    import harbor.models.job.lock
    import harbor.models.trial.config
    import harbor.models.trial.result
    import harbor.trial.hooks
    import harbor.trial.trial

    for module in (
        harbor.job,
        harbor.models.job.lock,
        harbor.models.trial.result,
        harbor.trial.hooks,
        harbor.trial.trial,
    ):
        module.datetime = PinnedDatetime
    harbor.job.uuid4 = lambda: JOB_ID
    harbor.trial.trial.uuid4 = trial_ids().__next__
    harbor.models.trial.config.ShortUUID = PinnedShortUUID


# The container's top folders that the host environment keeps in its sandbox folder.
CONTAINER_PATH = re.compile(r"(?<![\w.~/-])/(?:app|logs|tests|solution)(?=[/\s'\";&|)<>]|$)")


class HostEnvironment(BaseEnvironment):
    """A sandbox folder on the host in place of a container (see the module's docstring)."""

    sandboxes: Path = Path(tempfile.gettempdir())  # set by run_job to a temporary folder

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.root: Path = self.sandboxes / self.session_id
        CLOCK.begin(self.environment_name)

    @staticmethod
    def type() -> str:
        return "host"

    def _validate_definition(self) -> None:
        if not self.environment_dir.is_dir():
            raise FileNotFoundError(f"{self.environment_dir} not found")

    def host_path(self, path: str) -> Path:
        """Where a path of the container is in the sandbox folder."""
        parts = PurePosixPath(path).parts
        return self.root.joinpath(*parts[1:]) if parts[:1] == ("/",) else self.root / "app" / path

    def to_host(self, text: str) -> str:
        return CONTAINER_PATH.sub(lambda m: f"{self.root}{m.group(0)}", text)

    def from_host(self, text: str) -> str:
        return text.replace(str(self.root), "")

    async def start(self, force_build: bool) -> None:
        for folder in ("app", "logs/agent", "logs/verifier", "logs/artifacts"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        if self.environment_name == FAILED:
            CLOCK.at("failed")
            raise RuntimeError("the sandbox exited with code 137 before it was ready (out of memory)")
        CLOCK.at("environment")

    async def stop(self, delete: bool) -> None:
        if delete:
            shutil.rmtree(self.root, ignore_errors=True)
        CLOCK.at("end")

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = self.host_path(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_path, target)
        if target.suffix == ".sh":  # a script: its container paths are mapped too
            target.write_text(self.to_host(target.read_text(encoding="utf-8")), encoding="utf-8")
            target.chmod(0o755)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        for path in sorted(Path(source_dir).rglob("*")):
            if path.is_file():
                relative = path.relative_to(source_dir).as_posix()
                await self.upload_file(path, f"{target_dir.rstrip('/')}/{relative}")

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        source = self.host_path(source_path)
        if not source.is_file():
            raise FileNotFoundError(f"no file {source_path} in the environment")
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        source = self.host_path(source_dir)
        if not source.is_dir():
            raise FileNotFoundError(f"no folder {source_dir} in the environment")
        shutil.copytree(source, target_dir, dirs_exist_ok=True)

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # python3 is this one
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            self.to_host(command),
            cwd=self.host_path(cwd or self.task_env_config.workdir or "/app"),
            env={**os.environ, "PATH": path, **(self._merge_env(env) or {})},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=timeout_sec)
        if command.startswith("(/tests/test.sh)"):  # the verifier's run of the task's tests
            CLOCK.at("verifier")
        return ExecResult(
            stdout=self.from_host(stdout.decode()),
            stderr=self.from_host(stderr.decode()),
            return_code=process.returncode or 0,
        )


class HeronAgent(BaseAgent):
    """heron-agent: answers each item with its answer, a few fields wrong (WRONG), with no model."""

    @staticmethod
    def name() -> str:
        return AGENT

    def version(self) -> str:
        return AGENT_VERSION

    async def setup(self, environment: BaseEnvironment) -> None:
        CLOCK.at("agent_setup")

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        [item] = [item for item in load_items().values() if item["prompt"] in instruction]
        text = json.dumps(agent_answer(item), ensure_ascii=False)
        done = await environment.exec(f"printf '%s\\n' {shlex.quote(text)} > /app/answer.json")
        if done.return_code != 0:
            raise RuntimeError(f"could not write /app/answer.json: {done.stderr}")
        n_in, n_out = len(instruction.encode()) // 4, len(text.encode()) // 4
        cost = round((n_in * PRICE_IN + n_out * PRICE_OUT) / 1e6, 8)
        trajectory = self.trajectory(instruction, text, n_in, n_out, cost)
        (self.logs_dir / "trajectory.json").write_text(format_trajectory_json(trajectory.to_json_dict()))
        context.n_input_tokens, context.n_cache_tokens, context.n_output_tokens = n_in, 0, n_out
        context.cost_usd = cost
        CLOCK.at("agent")

    def trajectory(self, instruction: str, text: str, n_in: int, n_out: int, cost: float) -> Trajectory:
        """The run in Harbor's ATIF: the task's instruction, and one reply that writes the answer."""
        asked, answered = CLOCK.now, CLOCK.at("agent_step")
        call = ToolCall(
            tool_call_id="call_1", function_name="write_file", arguments={"path": "/app/answer.json", "content": text}
        )
        return Trajectory(
            session_id=self.session_id,
            agent=Agent(name=AGENT, version=AGENT_VERSION, model_name=MODEL),
            steps=[
                Step(step_id=1, timestamp=asked.isoformat(), source="user", message=instruction),
                Step(
                    step_id=2,
                    timestamp=answered.isoformat(),
                    source="agent",
                    model_name=MODEL,
                    message=text,
                    tool_calls=[call],
                    observation=Observation(
                        results=[ObservationResult(source_call_id="call_1", content="wrote /app/answer.json")]
                    ),
                    metrics=Metrics(prompt_tokens=n_in, completion_tokens=n_out, cached_tokens=0, cost_usd=cost),
                ),
            ],
            final_metrics=FinalMetrics(
                total_prompt_tokens=n_in,
                total_completion_tokens=n_out,
                total_cached_tokens=0,
                total_cost_usd=cost,
                total_steps=2,
            ),
        )


def register_module() -> None:
    """Harbor imports the environment and the agent by their import path: make it name this module."""
    if MODULE not in sys.modules:
        module = types.ModuleType(MODULE, __doc__)
        module.__dict__.update({name: value for name, value in globals().items() if not name.startswith("__")})
        sys.modules[MODULE] = module


async def run_job(jobs_dir: Path, work: Path) -> None:
    """Run the job in Harbor, its tasks in `work`/tasks (named relative to it, the current folder),
    and interrupt it when the last trial before NOT_RUN ends."""
    from harbor.job import Job
    from harbor.models.job.config import JobConfig
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig
    from harbor.trial.hooks import TrialHookEvent

    HostEnvironment.sandboxes = work / "sandboxes"
    config = JobConfig(
        job_name=RUN_ID,
        jobs_dir=jobs_dir,
        n_attempts=1,
        n_concurrent_trials=1,
        quiet=True,
        environment=EnvironmentConfig(import_path=f"{MODULE}:HostEnvironment"),
        agents=[AgentConfig(import_path=f"{MODULE}:HeronAgent", model_name=MODEL)],
        tasks=[TaskConfig(path=Path("tasks") / task) for task in RUN_ORDER],
    )
    job = await Job.create(config)
    runner: list[asyncio.Task[Any]] = []

    async def interrupt(event: TrialHookEvent) -> None:
        if NOT_RUN is not None and event.task_name == RUN_ORDER[RUN_ORDER.index(NOT_RUN) - 1]:
            runner[0].cancel()

    job.on_trial_ended(interrupt)
    runner.append(asyncio.ensure_future(job.run()))
    try:
        await runner[0]
    except asyncio.CancelledError:
        if not runner[0].cancelled():
            raise


def make_job(out: Path) -> Path:
    """Write the job folder out/<run> (heron-a-1, or the tutorial's) by running Harbor; return its path."""
    register_module()
    pin_harbor()
    jobs_dir = out.resolve()
    job_dir = jobs_dir / RUN_ID
    if job_dir.exists():
        shutil.rmtree(job_dir)  # else Harbor would resume the job found there
    items = load_items()
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="harbor-fixture-") as tmp:
        work = Path(tmp)
        for task in RUN_ORDER:
            write_task(work / "tasks", items[task])
        os.chdir(work)
        try:
            asyncio.run(run_job(jobs_dir, work))
        finally:
            os.chdir(here)
        leaks = [p for p in job_dir.rglob("*") if p.is_file() and tmp in p.read_text(errors="replace")]
    if leaks:
        raise RuntimeError(f"the temporary folder is named in {leaks}")
    return job_dir


def tutorial() -> None:
    """The tutorial's job instead of the demo's (--tutorial): run dockhand-a-1 of the example
    program's four Gate A items (examples/items.yaml), by the agent dockhand 0.2.0, every trial
    finished, a-002's postal code wrong; the job ends normally."""
    global ITEMS, RUN_ID, AGENT, AGENT_VERSION, MODEL, JOB_ID, RUN_ORDER, FAILED, NOT_RUN, WRONG
    ITEMS = REPO / "examples" / "items.yaml"
    RUN_ID, AGENT, AGENT_VERSION, MODEL = "dockhand-a-1", "dockhand", "0.2.0", "dockhand/dockhand-0.2"
    JOB_ID = uuid.uuid5(uuid.NAMESPACE_URL, RUN_ID)
    RUN_ORDER, FAILED, NOT_RUN = ("a-001", "a-002", "a-003", "a-004"), None, None
    WRONG = {"a-002": {"postal_code": "60601"}}


def main(argv: list[str]) -> int:
    given = [a for a in argv if a != "--tutorial"]
    if len(given) != 1 or given[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if os.environ.get("PYTHONHASHSEED") != "0":  # Harbor writes sets in hash order
        os.execve(sys.executable, [sys.executable, __file__, *argv], {**os.environ, "PYTHONHASHSEED": "0"})
    if "--tutorial" in argv:
        tutorial()
    job_dir = make_job(Path(given[0]))
    for path in sorted(job_dir.rglob("*")):
        print(path.relative_to(job_dir).as_posix() + ("/" if path.is_dir() else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
