"""Running a hypothesis state machine the way this suite does: a fixed budget of examples and
steps (`<ENV>_EXAMPLES`, `<ENV>_STEPS` to run more), no example database, and a seed printed on
failure (`<ENV>_SEED` runs the same one again)."""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, seed
from hypothesis import settings as hypothesis_settings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test


def run_seeded(
    machine: type[RuleBasedStateMachine], *, what: str, env: str, examples: int, steps: int
) -> None:
    chosen = int(os.environ.get(f"{env}_SEED") or random.randrange(2**32))
    try:
        run_state_machine_as_test(
            seed(chosen)(machine),
            settings=hypothesis_settings(
                max_examples=int(os.environ.get(f"{env}_EXAMPLES", str(examples))),
                stateful_step_count=int(os.environ.get(f"{env}_STEPS", str(steps))),
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
    except BaseException:
        print(f"\n{what} failed: run again with {env}_SEED={chosen}")
        raise
