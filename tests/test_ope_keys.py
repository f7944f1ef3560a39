"""The keys of a new policy's probabilities and of a reward model (#52): docs/logs.md lets
them name a slot's context by ``user_id``, ``slate_id`` or both, as Open Bandit Pipeline keys
its slates by ``slate_id`` alone. Every key class gives the same estimates, from the library
and the command line; a table with neither key, or naming a slate's user otherwise than the
log, is refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.errors import InputError

from .test_ope import _every_slot, _log_frame, _slate_data

# The key classes of a table keyed by a slot's context (``columns.ONE_OF``)
KEYS = {"slate": ["slate_id"], "user": ["user_id"], "both": ["user_id", "slate_id"]}
ESTIMATORS = "cascade_dr,rips,snrips,sips,iips,dm"


def _inputs(seed: int = 4):
    """obp's slates (one per user, so that a user key names one slate too), the policy's
    conditional probabilities at every slot and a reward model there."""
    _, fb, _, _, action_dist = _slate_data(seed, n_rounds=120, actions=4)
    log = _log_frame(fb)
    policy = _every_slot(fb, action_dist, 4, 3)
    policy["slate_id"] = policy["slate_id"].map(lambda s: f"s{s}")  # ids, not positions
    log["slate_id"] = log["slate_id"].map(lambda s: f"s{s}")
    # the probability of each item at each position, which iips and dm read
    policy["probability"] = policy["conditional_probability"] / 3
    q_hat = np.random.default_rng(seed).uniform(size=len(policy))
    model = policy[["slate_id", "user_id", "position", "item_id"]].assign(predicted_reward=q_hat)
    return log, policy, model


def _keyed(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    return frame.drop(columns=[c for c in ("user_id", "slate_id") if c not in KEYS[key]])


def _values(result) -> dict[str, float]:
    return {k: e.value for k, e in result.runs[0].estimates.items()}


@pytest.mark.parametrize("model_key", sorted(KEYS))
@pytest.mark.parametrize("policy_key", sorted(KEYS))
def test_every_key_class_gives_the_same_estimates(policy_key, model_key):
    log, policy, model = _inputs()
    want = _values(rankeval.ope(log, policy, reward_model=model, estimators=ESTIMATORS))
    got = _values(rankeval.ope(log, _keyed(policy, policy_key),
                               reward_model=_keyed(model, model_key), estimators=ESTIMATORS))
    assert set(got) == set(ESTIMATORS.split(","))
    for name, value in want.items():
        assert np.isfinite(value) and got[name] == pytest.approx(value, abs=1e-12), name


@pytest.mark.parametrize("key", sorted(KEYS))
def test_the_command_line_takes_every_key_class(key, write, run_cli):
    log, policy, model = _inputs()
    paths = [write("log.csv", log), write("policy.csv", _keyed(policy, key)),
             write("model.csv", _keyed(model, key))]
    r = run_cli("ope", paths[0], paths[1], "--reward-model", paths[2], "--estimators",
                ESTIMATORS, "--rounds", "200", "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    got = {k: e["value"] for k, e in json.loads(r.stdout)["runs"][0]["estimates"].items()}
    want = _values(rankeval.ope(log, policy, reward_model=model, estimators=ESTIMATORS,
                                rounds=200))
    assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("role", ["policy", "reward_model"])
def test_a_table_without_user_or_slate_is_refused_naming_both(role, write, run_cli):
    log, policy, model = _inputs()
    bad = {"policy": policy, "reward_model": model}[role].drop(columns=["user_id", "slate_id"])
    with pytest.raises(InputError, match=r"no user or slate column .*slate_id"):
        rankeval.ope(log, bad if role == "policy" else policy,
                     reward_model=bad if role == "reward_model" else model)
    path = write("bad.csv", bad)
    args = [path] if role == "policy" else [write("p.csv", policy), "--reward-model", path]
    r = run_cli("ope", write("log.csv", log), *args, "-q")
    assert r.exit_code == 2 and r.stderr.startswith("rankeval: error: ")
    assert "--user-col or --slate-col" in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("role", ["policy", "reward_model"])
def test_a_slate_given_to_another_user_than_the_logs_is_refused(role):
    log, policy, model = _inputs()
    table = {"policy": policy, "reward_model": model}[role].copy()
    table.loc[table.slate_id == "s3", "user_id"] = "u5"
    with pytest.raises(InputError, match="slates given to another user"):
        rankeval.ope(log, table if role == "policy" else policy,
                     reward_model=table if role == "reward_model" else model)


def test_a_slate_key_needs_the_logs_slates():
    """A slate key names the log's slates: a log without them is told to give them."""
    log, policy, _ = _inputs()
    with pytest.raises(rankeval.OptionError, match="give the log its slate ids"):
        rankeval.ope(log.drop(columns="slate_id"), _keyed(policy, "slate"))
