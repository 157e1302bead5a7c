"""Running the conformance checks: adapters and cassettes in, a rule x adapter matrix out.

    from conformance.suite.runner import SuiteConfig, run
    report = run(SuiteConfig.for_refs(["anthropic", "openai-chat"]))
    print(report.exit_code)

Every check yields `Outcome`s (one per case: a cassette interaction, an adapter pair, a
dropped block); they are folded into one `RuleResult` per (rule, adapter): failed when any
case failed, passed when any passed, skipped (with the reasons) otherwise. The run blocks
the network: adapters are pure translation, and a replay must never reach a provider.
"""

from __future__ import annotations

import fnmatch
import inspect
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..adapters import registry
from ..adapters.protocol import Adapter, capabilities_of
from ..core import config as project_config
from ..core.errors import InputError
from ..core.findings import Selection, Severity
from ..formats.canonical.markers import DEFAULT_CRITICAL_KEY
from . import checks
from .capture import NetworkBlockedError, capture_warnings, network_blocked
from .cassettes import Cassette, Interaction, iter_cassettes
from .checks.capabilities import declaration_of
from .checks.cassette_apis import set_aside_damaged
from .outcome import (
    SUITE_SUBJECT,
    AdapterUnderTest,
    Outcome,
    RuleResult,
    Status,
    Verdict,
    collect_crashes,
    not_offered,
    stop_collecting,
    with_traceback,
)
from .rules import BOOLEAN_CAPABILITIES, CATALOG, EXERCISED, EXERCISERS, NEEDS

if TYPE_CHECKING:  # a type only: the exec host loads when an exec: reference is given
    from ..adapters.exec.manifest import ExecSettings

__all__ = [
    "SUITE_SUBJECT",
    "AdapterUnderTest",
    "NetworkBlockedError",
    "Outcome",
    "RuleResult",
    "Status",
    "SuiteConfig",
    "SuiteReport",
    "Verdict",
    "capture_warnings",
    "network_blocked",
    "run",
]


def default_cassette_root() -> Path | None:
    """The project's own cassettes: `cassettes/` of a checkout, or `_cassettes` in a wheel."""
    here = Path(__file__).resolve().parents[1]
    for candidate in (here / "_cassettes", here.parent / "cassettes"):
        if candidate.is_dir():
            return candidate
    return None


def recorded_folders() -> dict[str, dict[str, int]]:
    """Wire API -> the folders of this project's own cassettes holding its exchanges, each
    with how many (what `cassette_folders` may name: `turnspec wire show`), read in one pass."""
    root = default_cassette_root()
    out: dict[str, dict[str, int]] = {}
    if root is None:
        return out
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        for c in iter_cassettes(folder):
            for it in c.interactions:
                if it.api is not None:
                    counts = out.setdefault(it.api, {})
                    counts[folder.name] = counts.get(folder.name, 0) + 1
    return out


def local_cassette_root() -> Path | None:
    """`./cassettes` of the folder the command runs in (an adapter repository's own
    `cassettes/<adapter>/`), when present and not turnspec's own (in a checkout, `./cassettes`
    is what `default_cassette_root` reads)."""
    p = Path("cassettes")
    own = Path(__file__).resolve().parents[2] / "cassettes"
    return p if p.is_dir() and p.resolve() != own else None


SAMPLES_ENV = "TURNSPEC_SAMPLES"
"""The environment variable naming a folder of third-party recordings to replay (a CI sets
it); read only when neither `--samples`/`--no-samples` nor `[tool.turnspec] samples` says."""


@dataclass(frozen=True)
class Samples:
    """The third-party recordings a run replays, and what asked for them: never a default
    derived from where turnspec is installed, so a wheel and a checkout run the same cases."""

    path: Path | None = None
    source: str = "none asked for"  # "--samples", "TURNSPEC_SAMPLES", "[tool.turnspec] samples in F"

    def describe(self) -> str:
        """One line for a report: the folder and what named it, or that none was read."""
        if self.path is None:
            return f"third-party recordings: none ({self.source})"
        return f"third-party recordings: {self.path} (from {self.source})"


def samples_asked(
    explicit: Path | None = None,
    *,
    none: bool = False,
    config: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Samples:
    """The recordings a run was asked for: `--samples DIR` (`explicit`), else `[tool.turnspec]
    samples` of the closest pyproject.toml (`config`, relative to its folder), else the
    `TURNSPEC_SAMPLES` variable; `none` (`--no-samples`) reads none. A folder named but
    missing is an `InputError` naming who named it, and so is asking for both."""
    if none and explicit is not None:
        raise InputError(f"--samples {explicit} and --no-samples contradict each other: give one")
    if none:
        return Samples(None, "--no-samples")
    if explicit is not None:
        return _existing(explicit, "--samples")
    found = project_config.load(config if config is not None else project_config.find())
    if found.samples is not None and found.path is not None:
        return _existing(found.samples, f"[tool.turnspec] samples in {found.path}")
    value = (os.environ if env is None else env).get(SAMPLES_ENV, "")
    if value:
        return _existing(Path(value), SAMPLES_ENV)
    return Samples(None, f"none asked for: --samples DIR, [tool.turnspec] samples or {SAMPLES_ENV}")


def _existing(path: Path, source: str) -> Samples:
    if not path.is_dir():
        raise InputError(f"{source}: {path}: not a directory")
    return Samples(path, source)


def _declared_folders(adapter: Adapter) -> tuple[str, ...] | None:
    declared = getattr(adapter, "cassette_folders", None)
    if isinstance(declared, tuple) and declared and all(isinstance(n, str) for n in declared):
        return declared
    return None


def cassette_folders(adapter: Adapter) -> tuple[str, ...]:
    """The folder names of `<root>/<name>/` searched for an adapter's cassettes in the
    user's roots (`--cassettes`, `./cassettes`): its name, or what it declares in
    `cassette_folders` (a bridge reads the cassettes of its wire API's reference adapter:
    `pydantic-ai:anthropic` those of `anthropic`)."""
    return _declared_folders(adapter) or (str(adapter.name),)


def project_folders(adapter: Adapter) -> tuple[str, ...]:
    """The folders of this project's own cassettes (`default_cassette_root`) an adapter is
    judged against: those it asks for (`cassette_folders`), or, for this project's own
    adapters (defined in the `conformance` package), the folder of its name. Never by a
    coincidence of names: a third party's adapter named `ollama` is judged on its own
    recordings, not silently on `cassettes/ollama/` as well (issue 43 item 7); it gets them by
    asking (`cassette_folders = ("ollama",)`)."""
    declared = _declared_folders(adapter)
    if declared is not None:
        return declared
    return (str(adapter.name),) if type(adapter).__module__.split(".")[0] == "conformance" else ()


def cassette_origin(folder: Path) -> str:
    """How case labels name where a cassette folder is: `turnspec/<folder>` under this
    project's own cassettes (wherever it is installed), else the folder relative to the
    working folder (the repository in CI), else as given. Two folders of one name
    (`./cassettes/ollama/` and turnspec's `cassettes/ollama/`) then label their cases apart.
    A label holds no `:` (a reason is `<case>: <why>`)."""
    full = folder.resolve()
    own = default_cassette_root()
    if own is not None and full.is_relative_to(own.resolve()):
        rel = full.relative_to(own.resolve()).as_posix()
        return f"turnspec/{rel}" if rel != "." else "turnspec"
    cwd = Path.cwd().resolve()
    return full.relative_to(cwd).as_posix() if full.is_relative_to(cwd) and full != cwd else str(folder)


@dataclass
class SuiteConfig:
    subjects: list[AdapterUnderTest]
    peers: list[Adapter] = field(default_factory=list)
    samples: Path | None = None
    selection: Selection = field(default_factory=Selection)
    # the metadata key that marks a block critical (§4.2.2 names none; TC203 plants it)
    critical_key: str = DEFAULT_CRITICAL_KEY
    # what asked for `samples` (`Samples.source`), said in every report
    samples_source: str = ""

    @classmethod
    def for_refs(
        cls,
        refs: Iterable[str],
        *,
        cassettes: Iterable[Path] = (),
        samples: Samples | Path | Literal["default"] | None = "default",
        selection: Selection | None = None,
        peers: bool = True,
        critical_key: str = DEFAULT_CRITICAL_KEY,
        roots: Iterable[Path] = (),
        exec_settings: ExecSettings | None = None,
    ) -> SuiteConfig:
        """Adapters by reference; the cross-provider matrix also takes every registered adapter.

        `samples`: "default" reads what the environment asks for (`samples_asked()`: the
        `[tool.turnspec]` key, then `TURNSPEC_SAMPLES`); a path reads that folder; None none.
        `roots` are further folders searched only as `<root>/<adapter>/` (`conform` passes
        `./cassettes`). `exec_settings`: `--exec-timeout` and `--validate-protocol` for the
        `exec:` references (docs/exec-protocol.md)."""
        asked = _samples(samples)
        refs = list(refs) or sorted(registry.available())
        cassettes = list(cassettes)
        project = default_cassette_root()
        candidates = [p for p in [*cassettes, project, *roots] if p is not None]
        first: dict[Path, Path] = {}  # resolved -> the first spelling of a root
        for p in candidates:  # `./cassettes` of a turnspec checkout is its own root: read once
            first.setdefault(p.resolve(), p)
        all_roots = list(first.values())
        # the project's own root, unless the user named it (then it is one of theirs)
        own_root = project if project is not None and first.get(project.resolve()) is project else None
        subjects = []
        for ref in refs:
            a = registry.load(ref, exec_settings=exec_settings)
            dirs = [
                r / n
                for r in all_roots
                for n in (project_folders(a) if r is own_root else cassette_folders(a))
                if (r / n).is_dir()
            ]
            dirs += [r for r in cassettes if r.is_dir() and not any(r.glob("*/")) and r not in dirs]
            subjects.append(AdapterUnderTest(ref, a, dirs))
        names = {s.name for s in subjects}
        peer_list = [registry.load(n) for n in sorted(registry.available()) if peers] if peers else []
        peer_list = [p for p in peer_list if p.name not in names]
        return cls(subjects, peer_list, asked.path, selection or Selection(), critical_key, asked.source)

    @classmethod
    def for_adapter(
        cls,
        adapter: Adapter,
        *,
        cassette_dirs: Iterable[Path] = (),
        samples: Samples | Path | Literal["default"] | None = None,
        selection: Selection | None = None,
        peers: bool = True,
        critical_key: str = DEFAULT_CRITICAL_KEY,
    ) -> SuiteConfig:
        asked = _samples(samples)
        subject = AdapterUnderTest(str(adapter.name), adapter, list(cassette_dirs))
        peer_list = [registry.load(n) for n in sorted(registry.available())] if peers else []
        peer_list = [p for p in peer_list if p.name != subject.name]
        return cls([subject], peer_list, asked.path, selection or Selection(), critical_key, asked.source)


def _samples(samples: Samples | Path | Literal["default"] | None) -> Samples:
    if isinstance(samples, Samples):
        return samples
    if samples == "default":
        return samples_asked()
    if samples is None:
        return Samples(None, "none given")
    return Samples(samples, "the caller")


@dataclass
class SuiteReport:
    adapters: list[str]
    results: list[RuleResult]
    outcomes: list[Outcome]
    pairs: dict[str, dict[str, Status]]
    elapsed_s: float
    cassettes_read: int = 0
    # adapter -> declared-true capability -> cases run that exercised it
    capabilities: dict[str, dict[str, int]] = field(default_factory=dict)
    fail_on_skip: bool = False
    # adapter -> which capability list it declares (TC001: contract §3.4 or canonical §7.2)
    declarations: dict[str, str] = field(default_factory=dict)
    # (adapter, interaction label) -> (cassette file, line of the interaction), for CI locations
    locations: dict[tuple[str, str], tuple[Path, int | None]] = field(default_factory=dict)
    # what was replayed: each folder read (turnspec's own named `turnspec/<folder>`, never by
    # where turnspec is installed) with its cassette count, and the third-party recordings
    # with what asked for them (`Samples.describe`)
    recordings: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> list[RuleResult]:
        return [r for r in self.results if r.status == "fail"]

    @property
    def skipped(self) -> list[RuleResult]:
        """Rules an adapter under test did not run at all (TC800 is about the recordings)."""
        return [r for r in self.results if r.status == "skip" and r.adapter != SUITE_SUBJECT]

    @property
    def warned(self) -> list[RuleResult]:
        """Advisory rules whose cases failed: reported, not failing the run (--strict fails them)."""
        return [r for r in self.results if r.status == "warn"]

    @property
    def unexercised(self) -> list[tuple[str, str]]:
        """(adapter, capability) declared true that no case exercised."""
        return [
            (o.adapter, o.subject)
            for o in self.outcomes
            if o.rule == EXERCISED.id and o.status != "pass" and o.capability == o.subject
        ]

    @property
    def exit_code(self) -> int:
        # --fail-on-skip: a rule an adapter did not run, or a declared capability no case exercised
        return 1 if self.failed or (self.fail_on_skip and (self.skipped or self.unexercised)) else 0

    @property
    def cases_run(self) -> int:
        return sum(r.cases_run for r in self.results)

    @property
    def cases_skipped(self) -> int:
        return sum(r.skipped for r in self.results)

    @property
    def checked_nothing(self) -> bool:
        """No case of any adapter ran (a selection whose every case was skipped): never an OK."""
        return not any(r.cases_run for r in self.results if r.adapter != SUITE_SUBJECT)

    @property
    def verdict(self) -> Literal["OK", "FAIL", "NOTHING CHECKED"]:
        """The summary line's first word, agreeing with `exit_code`: FAIL exactly when it is
        1, else NOTHING CHECKED when no case of an adapter ran, else OK."""
        if self.exit_code:
            return "FAIL"
        return "NOTHING CHECKED" if self.checked_nothing else "OK"

    def result(self, rule: str, adapter: str) -> RuleResult | None:
        for r in self.results:
            if r.rule == rule and r.adapter == adapter:
                return r
        return None


def fold(
    outcomes: Iterable[Outcome], rules: Iterable[str], adapters: Iterable[str], sel: Selection | None = None
) -> list[RuleResult]:
    """One RuleResult per (rule, adapter). A failing case of an advisory rule (severity
    warning under `sel`: not promoted by --strict) makes the cell "warn", not "fail"."""
    sel = sel or Selection()
    table: dict[tuple[str, str], RuleResult] = {}
    failures: dict[tuple[str, str], list[str]] = {}
    for rule in rules:
        for a in adapters:
            table[(rule, a)] = RuleResult(rule, a, "skip")
    for o in outcomes:
        r = table.get((o.rule, o.adapter))
        if r is None:
            r = table[(o.rule, o.adapter)] = RuleResult(o.rule, o.adapter, "skip")
        cap = capability_of(o)
        if cap is not None and o.status != "skip":
            r.capabilities[cap] = r.capabilities.get(cap, 0) + 1
        if o.status == "fail":
            r.failed += 1
            failures.setdefault((o.rule, o.adapter), []).append(f"{o.subject}: {o.message}")
            if o.traceback:
                r.tracebacks.setdefault(f"{o.subject}: {o.message}", o.traceback)
        elif o.status == "pass":
            r.passed += 1
        else:
            r.skipped += 1
            text = o.message if o.subject in ("", "-") else f"{o.subject}: {o.message}"
            if o.message and text not in r.reasons and len(r.reasons) < 100:
                r.reasons.append(text)
            if o.message and text not in r.skip_reasons and len(r.skip_reasons) < 100:
                r.skip_reasons.append(text)
    for key, r in table.items():
        r.status = "fail" if r.failed else "pass" if r.passed else "skip"
        if r.status == "fail" and r.rule in CATALOG and sel.severity(CATALOG[r.rule]) == Severity.WARNING:
            r.status = "warn"
        if r.status in ("fail", "warn"):
            r.reasons = failures[key][:50]
        elif r.status == "skip" and not r.reasons:
            r.reasons.append("no case applies to this adapter")
    return sorted(table.values(), key=lambda r: (r.rule, r.adapter))


def load_cassettes(dirs: Iterable[Path]) -> list[Cassette]:
    """The third-party recordings under a samples root: labelled by their path below it
    (`owner__repo/tests/.../x.yaml#0`), which already says where each comes from."""
    out: list[Cassette] = []
    for d in dirs:
        for c in iter_cassettes(d):
            c.label = f"{d.name}/{c.label}" if d.is_dir() else c.label
            out.append(c)
    return out


def load_own(dirs: Iterable[Path]) -> list[Cassette]:
    """An adapter's own cassettes, each interaction labelled with its folder
    (`cassette_origin`): `turnspec/ollama/tools.yaml#0`, `cassettes/ollama/tools.yaml#0`."""
    out: list[Cassette] = []
    for d in dirs:
        origin = cassette_origin(d if d.is_dir() else d.parent)
        for c in iter_cassettes(d):
            c.label = f"{origin}/{c.label}" if origin else c.label
            for it in c.interactions:
                it.cassette = c.label
            out.append(c)
    return out


def capability_of(o: Outcome) -> str | None:
    """The capability a case exercised: its own tag, a TC501/TC502 case named after the
    capability, or the capability its rule needs."""
    if o.capability:
        return o.capability
    if o.subject in BOOLEAN_CAPABILITIES:
        return o.subject
    return NEEDS.get(o.rule)


def capability_gate(
    subjects: list[AdapterUnderTest], outcomes: list[Outcome], sel: Selection
) -> tuple[list[Outcome], dict[str, dict[str, int]]]:
    """TC002: every boolean capability an adapter declares true is exercised by a case that
    ran (passed or failed); a declaration no case checked is a skip naming the cassette to
    add (never a silent pass; `--strict` and `--fail-on-skip` fail it)."""
    counts: dict[str, dict[str, int]] = {}
    gate: list[Outcome] = []
    for s in subjects:
        declared = [c for c in BOOLEAN_CAPABILITIES if capabilities_of(s.adapter).get(c) is True]
        mine = counts[s.name] = dict.fromkeys(declared, 0)
        for o in outcomes:
            cap = capability_of(o)
            if o.adapter == s.name and o.status != "skip" and cap in mine:
                mine[cap] += 1
        for c in declared:
            rules = EXERCISERS.get(c, ())
            if not all(sel.enabled(r) for r in rules):
                ignored = ", ".join(r for r in rules if not sel.enabled(r))
                gate.append(Outcome(EXERCISED.id, s.name, "skip", c, f"{ignored} not run (ignored), so it cannot tell"))
                continue
            if mine[c] > 0:
                gate.append(Outcome(EXERCISED.id, s.name, "pass", c, "", c))
                continue
            # no sentence makes an unexercised declaration wrong (contract §3.4 asks it to be
            # honest, §10.1.5 that a false flag fails cleanly): the suite could not look, so a
            # skip saying which recording would let it; --strict fails it (a finding: exit 1)
            # and --fail-on-skip fails the run
            how = ", ".join(rules) or "no check covers it"
            msg = (
                f"declared true, but no case exercised it (cases come from {how}): add a cassette of "
                f"{CASSETTE_HINTS.get(c, 'a call that uses it')} to {s.name}'s cassettes "
                "(`turnspec wire record` makes one)"
            )
            gate.append(Outcome(EXERCISED.id, s.name, "fail" if sel.strict else "skip", c, msg, c))
    return gate, counts


def gate_selection(sel: Selection) -> Selection:
    """What runs: `sel`, and, when TC002 is selected, the rules whose cases exercise a
    declared capability (`EXERCISERS`), which TC002 counts though the report shows only
    `sel`'s rules: `--select TC002` alone judges the declarations instead of running no case.
    A rule `--ignore`d stays off."""
    if not sel.select or not sel.enabled(EXERCISED.id):
        return sel
    extra = tuple(dict.fromkeys(r for rules in EXERCISERS.values() for r in rules))
    return Selection(select=(*sel.select, *extra), ignore=sel.ignore, strict=sel.strict)


CASSETTE_HINTS: dict[str, str] = {
    "supports_thinking": "a response with thinking (and the next request sending it back)",
    "supports_images": "a request with an image",
    "supports_tools": "a response with a tool call",
    "supports_system_prompt": "a request with a system prompt",
    "supports_structured_output": "a request with a JSON schema output",
    "supports_streaming": "a streamed response",
    "supports_streaming_tool_calls": "a streamed response with a tool call",
    "supports_parallel_tool_calls": "a response with two tool calls",
    "supports_prompt_caching": "a response whose usage reports cache reads or writes",
    "supports_system_messages_in_list": "a request with system messages in the list",
}
"""TC002's skip reason: the recording that would exercise each capability."""


def declared_gaps(subjects: Iterable[AdapterUnderTest], outcomes: list[Outcome]) -> list[Outcome]:
    """A bridge's declared gaps (`bridge_gaps`: objects with `rules`, `subjects` (fnmatch
    patterns of case subjects), `reason` and optionally `when` (a regex the failure's reason
    must match), see `conformance.bridges.kit.Gap`): a failing
    case they cover is what the wrapped library cannot express, not a verdict on it, so it
    is reported skipped with the gap's reason (and what failed). A reason that lists wire
    differences (`/path: ...; /path: ... (compared ...)`, TC802's) is also covered when each
    difference alone is one some `when` gap of the case explains (two gaps meeting in one
    request); a list cut at its first 20 is not. Nothing else changes."""
    gaps = {s.name: tuple(getattr(s.adapter, "bridge_gaps", ()) or ()) for s in subjects}
    out = []
    for o in outcomes:
        mine = [
            g
            for g in gaps.get(o.adapter, ())
            if o.status == "fail" and o.rule in g.rules and any(_case_matches(o.subject, p) for p in g.subjects)
        ]
        gap = next((g for g in mine if re.search(str(getattr(g, "when", "") or ""), o.message) is not None), None)
        if gap is not None:
            out.append(replace(o, status="skip", message=f"bridge gap: {gap.reason} ({o.message})"))
            continue
        used = _each_difference_explained(o.message, [g for g in mine if getattr(g, "when", "")])
        if used:
            why = "; ".join(dict.fromkeys(g.reason for g in used))
            out.append(replace(o, status="skip", message=f"bridge gaps: {why} ({o.message})"))
        else:
            out.append(o)
    return out


_PROJECT_ORIGIN = re.compile(r"^turnspec/[^/#]+/")


def _case_matches(subject: str, pattern: str) -> bool:
    """Whether a gap's fnmatch `pattern` names the case `subject`: as labelled
    (`turnspec/openai-chat/cache.yaml#0`), or without the project folder's origin, as this
    project's cassettes were labelled before their cases carried it (`cache.yaml#*`)."""
    bare = _PROJECT_ORIGIN.sub("", subject)
    return fnmatch.fnmatchcase(subject, pattern) or (bare != subject and fnmatch.fnmatchcase(bare, pattern))


_DIFFERENCE = re.compile(r"; (?=/)")  # a difference list's separator: each entry is an RFC 6901 path


def _each_difference_explained(message: str, gaps: list[Any]) -> list[Any]:
    """The gaps that explain every difference `message` lists, one by one (each tried as the
    reason of a failure with that difference alone); [] when one is unexplained, when the
    message lists no differences, or lists 20 (`equivalence.diff` stops there)."""
    head, sep, tail = message.partition(" (compared")
    suffix = sep + tail
    parts = _DIFFERENCE.split(head) if head.startswith("/") else []
    if not gaps or len(parts) < 2 or len(parts) >= 20:
        return []
    used = []
    for part in parts:
        g = next((g for g in gaps if re.search(str(g.when), part + suffix) is not None), None)
        if g is None:
            return []
        used.append(g)
    return used


def run(
    config: SuiteConfig, *, progress: Callable[[str], None] | None = None, fail_on_skip: bool = False
) -> SuiteReport:
    started = time.perf_counter()
    sel = config.selection
    runs = gate_selection(sel)
    samples = load_cassettes([config.samples]) if config.samples is not None else []
    outcomes: list[Outcome] = []
    counted: list[Outcome] = []  # cases of rules run only for TC002 to count (not reported)
    # the run's own capture keeps adapters' WARN lines (expected: the checks provoke them)
    # off stderr; each check captures what it inspects
    crashes, token = collect_crashes()
    try:
        with network_blocked(), capture_warnings():
            own = {s.name: load_own(s.cassette_dirs) for s in config.subjects}
            locations = _locations(own, samples)
            # judged before any adapter sees them: a damaged recording is TC800's, never a case
            damaged = set_aside_damaged([*samples, *(c for cs in own.values() for c in cs)])
            project = default_cassette_root()
            env = checks.Env(
                config.subjects,
                config.peers,
                own,
                samples,
                runs,
                critical_key=config.critical_key,
                damaged=damaged,
                project=load_own([project]) if project is not None else [],
            )
            for check in checks.CHECKS:
                if not any(runs.enabled(r) for r in check.rules):
                    continue
                if progress:
                    progress(check.name)
                mine: list[Outcome] = []
                try:
                    for o in check.fn(env):
                        if sel.enabled(o.rule):
                            mine.append(with_traceback(not_offered(o, crashes), crashes))
                        elif runs.enabled(o.rule):
                            counted.append(not_offered(o, crashes))
                except Exception as exc:
                    # the last resort: a check never raises (each judges what it could not
                    # read as a case), but one that does must not stop the whole run
                    stopped = _stopped(check, env, exc, [*outcomes, *mine])
                    mine += [with_traceback(not_offered(o, crashes), crashes) for o in stopped]
                mine += _unreported_faults(check, env, mine)
                outcomes += mine
                crashes.clear()
    finally:
        stop_collecting(token)
    outcomes = declared_gaps(config.subjects, outcomes)
    gate, counts = capability_gate(config.subjects, [*outcomes, *declared_gaps(config.subjects, counted)], runs)
    if sel.enabled(EXERCISED.id):
        outcomes.extend(gate)
    names = [s.name for s in config.subjects]
    rules = [r.id for r in CATALOG if sel.enabled(r.id)]
    results = fold(outcomes, rules, names, sel)
    results = [r for r in results if (r.adapter == SUITE_SUBJECT) == (r.rule == "TC800")]
    if any(o.adapter == SUITE_SUBJECT for o in outcomes):
        names.append(SUITE_SUBJECT)
    return SuiteReport(
        names,
        results,
        outcomes,
        env.pairs,
        time.perf_counter() - started,
        cassettes_read=len(samples) + sum(len(v) for v in own.values()),
        capabilities=counts,
        fail_on_skip=fail_on_skip,
        declarations={s.name: declaration_of(_caps(s.adapter)) for s in config.subjects},
        locations={**locations, **_adapter_sources(config.subjects)},
        recordings=_recordings(config, own, samples),
    )


def _recordings(config: SuiteConfig, own: Mapping[str, list[Cassette]], samples: list[Cassette]) -> dict[str, Any]:
    """What a run replayed, for every report: each cassette folder (named as case labels name
    it, `cassette_origin`) with its count, and the third-party recordings with what asked for
    them."""
    folders: dict[str, int] = {}
    for s in config.subjects:
        for d in s.cassette_dirs:
            folders[cassette_origin(d)] = sum(
                1 for c in own.get(s.name, []) if c.path.parent == d or d in c.path.parents
            )
    # an adapter none of whose folders exists (an exec child whose hello names none, so the
    # default `[name]` matches nothing): what it asked for, so the report says why its
    # recording checks skip instead of an unexplained `none`
    unfound = {s.name: list(cassette_folders(s.adapter)) for s in config.subjects if not s.cassette_dirs}
    return {
        "folders": folders,
        "folders_not_found": unfound,
        "samples": str(config.samples) if config.samples is not None else None,
        "samples_cassettes": len(samples),
        "samples_source": config.samples_source,
    }


def _stopped(check: checks.Check, env: checks.Env, exc: Exception, so_far: list[Outcome]) -> list[Outcome]:
    """A failing case for a check that raised instead of judging: its first selected rule, for
    the adapter its last case was about (every subject when it yielded none), naming the
    exception (its traceback goes with the case) and that the check's remaining cases were
    not run. `turnspec conform` goes on with the next check."""
    rule = next((r for r in check.rules if env.sel.enabled(r)), check.rules[0])
    names = [s.name for s in env.subjects]
    last = next((o.adapter for o in reversed(so_far) if o.rule in check.rules and o.adapter in names), None)
    why = (
        f"the check stopped on adapter output it could not read ({checks.crash(exc)}); its remaining cases were not run"
    )
    return [Outcome(rule, name, "fail", f"{check.name} (stopped)", why) for name in ([last] if last else names)]


def _unreported_faults(check: checks.Check, env: checks.Env, mine: list[Outcome]) -> list[Outcome]:
    """A failing case for each fault of an adapter that reports them (`take_faults`: an exec
    child that died, hung or broke the protocol during the check) that none of the check's
    failing cases names: a check that skipped past the exception must not hide it."""
    out: list[Outcome] = []
    rule = next((r for r in check.rules if env.sel.enabled(r)), check.rules[0])
    for s in env.subjects:
        take = getattr(s.adapter, "take_faults", None)
        if not callable(take):
            continue
        said = [o.message for o in mine if o.adapter == s.name and o.status == "fail"]
        for fault in dict.fromkeys(str(f) for f in take()):
            if not any(fault in m for m in said):
                why = f"an exec call failed and the check went on without it: {fault}"
                out.append(Outcome(rule, s.name, "fail", f"{check.name} (exec)", why))
    return out


def _locations(
    own: Mapping[str, list[Cassette]], samples: list[Cassette]
) -> dict[tuple[str, str], tuple[Path, int | None]]:
    """Where each interaction a case can name was read from: an adapter's own cassettes and
    the samples (replayed for every adapter; TC800 judges them, and every own cassette's
    recordings, for the suite)."""
    out: dict[tuple[str, str], tuple[Path, int | None]] = {}
    everyone = [c for cs in own.values() for c in cs]
    for name in [*own, SUITE_SUBJECT]:
        for c in [*(own.get(name, []) if name != SUITE_SUBJECT else everyone), *samples]:
            for it in c.interactions:
                if it.path is not None:
                    out[(name, it.label)] = (it.path, it.line)
    return out


ADAPTER_SOURCE = ""
"""The interaction label of `SuiteReport.locations` that holds where an adapter is defined
(its class's file and line): where CI outputs place a failing case of no recording."""


def _adapter_sources(subjects: Iterable[AdapterUnderTest]) -> dict[tuple[str, str], tuple[Path, int | None]]:
    """Each adapter's class: the file it is defined in and the line of its `class` statement
    (none for a class whose source cannot be found: built in, or made at run time). An
    adapter that is no class of its own (an exec child, whose proxy is the host's) says where
    it is defined in `source_location` (a file, or None for none)."""
    out: dict[tuple[str, str], tuple[Path, int | None]] = {}
    for s in subjects:
        if hasattr(s.adapter, "source_location"):
            where = s.adapter.source_location
            if isinstance(where, Path):
                out[(s.name, ADAPTER_SOURCE)] = (where, None)
            continue
        cls = type(s.adapter)
        try:
            source = inspect.getsourcefile(cls)
            line: int | None = inspect.getsourcelines(cls)[1] if source else None
        except (OSError, TypeError):
            continue
        if source:
            out[(s.name, ADAPTER_SOURCE)] = (Path(source), line or None)
    return out


def _caps(a: Adapter) -> dict[str, object]:
    """The declared capabilities as a dict, whatever an untrusted adapter put there (TC001 judges them)."""
    return capabilities_of(a)


def interactions(cassettes: Iterable[Cassette]) -> Iterator[Interaction]:
    for c in cassettes:
        yield from c.interactions
