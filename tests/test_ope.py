"""Off-policy evaluation (#31): SPEC's worked example 10, Open Bandit Pipeline's estimators on
its own synthetic data (to 1e-9), and brute force where obp has no estimator."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.errors import InputError, OptionError

from .obp_oracle import load

OBP_EST, OBP_SLATE, OBP_DATA, OBP_SLATE_DATA = load()


def test_spec_worked_example_10():
    log = pd.DataFrame({"user_id": ["c1", "c1", "c2", "c2"], "position": [1, 2, 1, 2],
                        "item_id": ["A", "B", "C", "A"], "reward": [1, 0, 0, 1],
                        "propensity": [0.5, 0.4, 0.2, 0.5],
                        "cascade_propensity": [0.5, 0.2, 0.2, 0.1],
                        "slate_propensity": [0.2, 0.2, 0.1, 0.1]})
    run = pd.DataFrame({"user_id": ["c1", "c1", "c2", "c2"], "item_id": ["A", "C", "A", "C"],
                        "rank": [1, 2, 1, 2]})
    result = rankeval.ope(log, run)
    got = {k: e.value for k, e in result.runs[0].estimates.items()}
    assert got["iips"] == 1.0 and got["sips"] == 0.0 and got["rips"] == 1.0
    assert math.isnan(got["snsips"])  # no slate matches: the mean weight is 0, undefined
    assert result.to_dict()["runs"][0]["estimates"]["snsips"]["value"] is None


def _slate_data(seed: int, n_rounds: int = 400, actions: int = 5, length: int = 3):
    """obp's synthetic slate data and an evaluation policy's probabilities (obp's own)."""
    dataset = OBP_SLATE_DATA.SyntheticSlateBanditDataset(
        n_unique_action=actions, len_list=length, dim_context=2, reward_type="binary",
        reward_structure="cascade_additive", click_model=None, random_state=seed,
        behavior_policy_function=OBP_SLATE_DATA.linear_behavior_policy_logit)
    feedback = dataset.obtain_batch_bandit_feedback(n_rounds=n_rounds,
                                                    return_pscore_item_position=True)
    logit = np.random.default_rng(seed).normal(size=(n_rounds, actions))
    pscore, item_position, cascade = dataset.obtain_pscore_given_evaluation_policy_logit(
        action=feedback["action"], evaluation_policy_logit_=logit,
        return_pscore_item_position=True)
    action_dist = dataset.calc_evaluation_policy_action_dist(
        action=feedback["action"], evaluation_policy_logit_=logit)
    return dataset, feedback, logit, (pscore, item_position, cascade), action_dist


def _log_frame(feedback) -> pd.DataFrame:
    return pd.DataFrame({
        "slate_id": feedback["slate_id"], "user_id": [f"u{s}" for s in feedback["slate_id"]],
        "position": feedback["position"] + 1, "item_id": [f"a{a}" for a in feedback["action"]],
        "reward": feedback["reward"], "propensity": feedback["pscore_item_position"],
        "cascade_propensity": feedback["pscore_cascade"],
        "slate_propensity": feedback["pscore"]})


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_slate_ips_family_equals_obp(seed):
    """Every IPS estimator of obp's slate module, on its synthetic data, with the evaluation
    policy's probabilities of the logged slots given as a table."""
    _, fb, _, (pscore, item_position, cascade), _ = _slate_data(seed)
    log = _log_frame(fb)
    policy = log[["slate_id", "user_id", "position", "item_id"]].assign(
        probability=item_position, cascade_probability=cascade, slate_probability=pscore)
    result = rankeval.ope(log, policy)
    got = {k: e.value for k, e in result.runs[0].estimates.items()}
    common = {"slate_id": fb["slate_id"], "reward": fb["reward"], "position": fb["position"]}
    S = OBP_SLATE
    want = {
        "sips": S.SlateStandardIPS(len_list=3).estimate_policy_value(
            **common, pscore=fb["pscore"], evaluation_policy_pscore=pscore),
        "iips": S.SlateIndependentIPS(len_list=3).estimate_policy_value(
            **common, pscore_item_position=fb["pscore_item_position"],
            evaluation_policy_pscore_item_position=item_position),
        "rips": S.SlateRewardInteractionIPS(len_list=3).estimate_policy_value(
            **common, pscore_cascade=fb["pscore_cascade"],
            evaluation_policy_pscore_cascade=cascade),
        "snsips": S.SelfNormalizedSlateStandardIPS(len_list=3).estimate_policy_value(
            **common, pscore=fb["pscore"], evaluation_policy_pscore=pscore),
        "sniips": S.SelfNormalizedSlateIndependentIPS(len_list=3).estimate_policy_value(
            **common, pscore_item_position=fb["pscore_item_position"],
            evaluation_policy_pscore_item_position=item_position),
        "snrips": S.SelfNormalizedSlateRewardInteractionIPS(len_list=3).estimate_policy_value(
            **common, pscore_cascade=fb["pscore_cascade"],
            evaluation_policy_pscore_cascade=cascade),
    }
    assert set(got) == set(want)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-9), name


def _every_slot(fb, action_dist, actions: int, length: int) -> pd.DataFrame:
    """The policy at every (slate, position, action): obp's conditional probabilities given
    the logged items above."""
    n = len(np.unique(fb["slate_id"]))
    slate, pos, act = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(length),
                                                      np.arange(actions), indexing="ij"))
    return pd.DataFrame({"slate_id": slate, "user_id": [f"u{s}" for s in slate],
                         "position": pos + 1, "item_id": [f"a{a}" for a in act],
                         "conditional_probability": action_dist})


@pytest.mark.parametrize("seed", [4, 5])
def test_cascade_doubly_robust_equals_obp(seed):
    """Cascade-DR with a reward model at every (slate, position, action) and the policy's
    conditional probabilities (obp's action distribution); the top-k probabilities derived
    from them equal obp's, so the reward-interaction and standard IPS agree too."""
    _, fb, _, (pscore, _, cascade), action_dist = _slate_data(seed, actions=4)
    log = _log_frame(fb)
    q_hat = np.random.default_rng(seed + 100).uniform(size=len(action_dist))
    policy = _every_slot(fb, action_dist, 4, 3)
    model = policy.drop(columns="conditional_probability").assign(predicted_reward=q_hat)
    result = rankeval.ope(log, policy, reward_model=model,
                          estimators="cascade_dr,rips,snrips,sips")
    got = {k: e.value for k, e in result.runs[0].estimates.items()}
    want = OBP_SLATE.SlateCascadeDoublyRobust(len_list=3, n_unique_action=4
                                              ).estimate_policy_value(
        slate_id=fb["slate_id"], action=fb["action"], reward=fb["reward"],
        position=fb["position"], pscore_cascade=fb["pscore_cascade"],
        evaluation_policy_pscore_cascade=cascade, q_hat=q_hat,
        evaluation_policy_action_dist=action_dist)
    assert got["cascade_dr"] == pytest.approx(want, abs=1e-9)
    rips = OBP_SLATE.SlateRewardInteractionIPS(len_list=3).estimate_policy_value(
        slate_id=fb["slate_id"], reward=fb["reward"], position=fb["position"],
        pscore_cascade=fb["pscore_cascade"], evaluation_policy_pscore_cascade=cascade)
    sips = OBP_SLATE.SlateStandardIPS(len_list=3).estimate_policy_value(
        slate_id=fb["slate_id"], reward=fb["reward"], position=fb["position"],
        pscore=fb["pscore"], evaluation_policy_pscore=pscore)
    assert got["rips"] == pytest.approx(rips, abs=1e-9)
    assert got["sips"] == pytest.approx(sips, abs=1e-9)


@pytest.mark.parametrize("seed", [6, 7])
@pytest.mark.parametrize("clip", [None, 5.0])
def test_top1_estimators_equal_obp(seed, clip):
    """A log of single slots: IPS, SNIPS, DM and DR equal obp's (clipped weights as its
    lambda_), with the policy's probability of every action and a reward model."""
    n, actions = 500, 6
    dataset = OBP_DATA.SyntheticBanditDataset(
        n_actions=actions, dim_context=3, reward_type="binary", random_state=seed,
        reward_function=OBP_DATA.logistic_reward_function,
        behavior_policy_function=OBP_DATA.linear_behavior_policy)
    fb = dataset.obtain_batch_bandit_feedback(n_rounds=n)
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, actions)) * 2
    action_dist = (np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True))[:, :, None]
    q = rng.uniform(size=(n, actions, 1))
    log = pd.DataFrame({"user_id": [f"x{i}" for i in range(n)], "position": 1,
                        "item_id": [f"a{a}" for a in fb["action"]], "reward": fb["reward"],
                        "propensity": fb["pscore"]})
    rows, acts = np.meshgrid(np.arange(n), np.arange(actions), indexing="ij")
    policy = pd.DataFrame({"user_id": [f"x{i}" for i in rows.ravel()], "position": 1,
                           "item_id": [f"a{a}" for a in acts.ravel()],
                           "probability": action_dist[:, :, 0].ravel()})
    model = policy.drop(columns="probability").assign(predicted_reward=q[:, :, 0].ravel())
    result = rankeval.ope(log, policy, reward_model=model, clip=clip)
    got = {k: e.value for k, e in result.runs[0].estimates.items()}
    lam = {"lambda_": clip} if clip is not None else {}
    E = OBP_EST
    base = {"reward": fb["reward"], "action": fb["action"], "action_dist": action_dist,
            "pscore": fb["pscore"]}
    want = {
        "ips": E.InverseProbabilityWeighting(**lam).estimate_policy_value(**base),
        # obp's SNIPS takes lambda_ but never clips: clipped, it is the closed form
        "snips": E.SelfNormalizedInverseProbabilityWeighting().estimate_policy_value(**base)
        if clip is None else _clipped_snips(fb, action_dist, clip),
        "dm": E.DirectMethod().estimate_policy_value(action_dist=action_dist,
                                                     estimated_rewards_by_reg_model=q),
        "dr": E.DoublyRobust(**lam).estimate_policy_value(**base,
                                                          estimated_rewards_by_reg_model=q),
    }
    assert set(got) == set(want)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-9), name


def _clipped_snips(fb, action_dist, clip: float) -> float:
    w = np.minimum(action_dist[np.arange(len(fb["action"])), fb["action"], 0] / fb["pscore"],
                   clip)
    return float((fb["reward"] * w).sum() / w.sum())


def _brute_marginals(logit: np.ndarray, length: int) -> np.ndarray:
    """Plackett-Luce marginals P(item at position) by enumerating every ranking."""
    n, actions = logit.shape
    out = np.zeros((n, length, actions))
    for ranking in itertools.permutations(range(actions), length):
        p = np.ones(n)
        left = np.ones((n, actions), bool)
        for a in ranking:
            z = np.where(left, np.exp(logit), 0.0)
            p *= z[:, a] / z.sum(axis=1)
            left[:, a] = False
        for k, a in enumerate(ranking):
            out[:, k, a] += p
    return out


def test_sampled_rankings_are_their_empirical_policy():
    """A run of sampled rankings is the policy that draws one of them at random: its
    estimates equal those of that policy's probabilities computed by brute force."""
    rng = np.random.default_rng(9)
    users, items, length, samples = 30, 6, 3, 4
    log_rows, run_rows = [], []
    for u in range(users):
        shown = rng.permutation(items)[:length]
        for k, a in enumerate(shown):
            log_rows.append((f"u{u}", k + 1, f"i{a}", float(rng.random() < 0.4),
                             float(rng.uniform(0.2, 0.9)), float(rng.uniform(0.05, 0.5))))
        for s in range(samples):
            drawn = shown if rng.random() < 0.4 else rng.permutation(items)[:length]
            run_rows += [(f"u{u}", f"s{s}", f"i{a}", k + 1) for k, a in enumerate(drawn)]
    log = pd.DataFrame(log_rows, columns=["user_id", "position", "item_id", "reward",
                                          "propensity", "cascade_propensity"])
    log["cascade_propensity"] = log.groupby("user_id")["cascade_propensity"].cummin()
    run = pd.DataFrame(run_rows, columns=["user_id", "sample", "item_id", "rank"])
    result = rankeval.ope(log, run)
    got = {k: e.value for k, e in result.runs[0].estimates.items()}
    iips = rips = 0.0
    for u, slate in log.groupby("user_id"):
        lists = run[run.user_id == u].sort_values(["sample", "rank"]).groupby("sample")
        lists = [g.item_id.tolist() for _, g in lists]
        for _, row in slate.iterrows():
            k = int(row.position)
            marginal = np.mean([len(x) >= k and x[k - 1] == row.item_id for x in lists])
            logged = slate.sort_values("position").item_id.tolist()[:k]
            prefix = np.mean([x[:k] == logged for x in lists])
            iips += marginal / row.propensity * row.reward
            rips += prefix / row.cascade_propensity * row.reward
    assert got["iips"] == pytest.approx(iips / users, abs=1e-12)
    assert got["rips"] == pytest.approx(rips / users, abs=1e-12)
    assert "sips" not in got  # no slate propensity in the log: said in the warnings
    assert any("sips not estimated" in w for w in result.runs[0].warnings)


def test_bad_logs_are_one_line_naming_the_rows():
    log = pd.DataFrame({"user_id": ["u", "u", "v"], "position": [1, 1, 2],
                        "item_id": ["a", "b", "c"], "reward": [1, 0, 1],
                        "propensity": [0.5, 1.5, 0.0]})
    run = pd.DataFrame({"user_id": ["u"], "item_id": ["a"], "rank": [1]})
    with pytest.raises(InputError, match="propensities outside"):
        rankeval.ope(log, run)
    log["propensity"] = 0.5
    with pytest.raises(InputError, match="repeated within a slate"):
        rankeval.ope(log, run)
    log["position"] = [1, 2, 2]
    with pytest.raises(InputError, match="do not run 1, 2, 3"):
        rankeval.ope(log, run)
    with pytest.raises(InputError, match="1 probability outside"):
        rankeval.ope(log.assign(position=[1, 2, 1]),
                     run.assign(position=1, probability=1.5).drop(columns="rank"))
    with pytest.raises(InputError, match="no propensity column"):
        rankeval.ope(log.assign(position=[1, 2, 1]).drop(columns="propensity"), run)
    with pytest.raises(OptionError, match=r"unknown estimator 'magic'; known: sips, iips, rips, "
                       r"snsips, sniips, snrips, dm, cascade_dr, ips, snips, dr$"):
        rankeval.ope(log.assign(position=[1, 2, 1]), run, estimators="magic")
    with pytest.raises(OptionError, match="needs a reward model"):
        rankeval.ope(log.assign(position=[1, 2, 1]), run, estimators="dm")


@pytest.mark.parametrize("name", ["snsips", "sniips", "snrips", "snips"])
def test_a_self_normalised_estimator_is_its_plain_one_normalised(name):
    from rankeval.offpolicy.estimators import ESTIMATORS

    normalised, plain = ESTIMATORS[name], ESTIMATORS[name.removeprefix("sn")]
    assert normalised.normalised and not plain.normalised
    assert (normalised.weights, normalised.model) == (plain.weights, plain.model)
    assert normalised.assumption == f"as {plain.name}; biased, lower variance"


def test_slate_direct_method_is_the_policys_expected_predicted_reward():
    """DM on slates: per slate, the sum over positions and items of the policy's probability
    of the item there (Plackett-Luce marginals by enumerating every ranking) times the
    reward model's prediction; averaged over slates."""
    _, fb, logit, _, _ = _slate_data(8, n_rounds=60, actions=4)
    log = _log_frame(fb)
    marginals = _brute_marginals(logit, 3)  # slates x positions x actions
    n = len(logit)
    slate, pos, act = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(3),
                                                      np.arange(4), indexing="ij"))
    q_hat = np.random.default_rng(8).uniform(size=len(slate))
    policy = pd.DataFrame({"slate_id": slate, "user_id": [f"u{s}" for s in slate],
                           "position": pos + 1, "item_id": [f"a{a}" for a in act],
                           "probability": marginals.ravel()})
    model = policy.drop(columns="probability").assign(predicted_reward=q_hat)
    result = rankeval.ope(log, policy, reward_model=model, estimators="dm,iips")
    want = (marginals.ravel() * q_hat).sum() / n
    assert result.runs[0].estimates["dm"].value == pytest.approx(want, abs=1e-12)


def test_a_ranked_run_equals_its_probabilities():
    """A ranked run and the same policy written as probabilities (1 for the run's item at
    each position, given any logged items above) give the same estimates, DR included."""
    rng = np.random.default_rng(10)
    items, length = [f"i{j}" for j in range(7)], 3
    log_rows, run_rows, model_rows = [], [], []
    for u in range(40):
        shown = rng.permutation(items)[:length]
        ranked = shown if rng.random() < 0.3 else rng.permutation(items)[:5]
        p = np.sort(rng.uniform(0.05, 0.9, size=length))[::-1]
        log_rows += [(f"u{u}", k + 1, a, float(rng.random() < 0.5), rng.uniform(0.1, 1),
                      p[: k + 1].prod(), p.prod()) for k, a in enumerate(shown)]
        run_rows += [(f"u{u}", a, k + 1) for k, a in enumerate(ranked)]
        model_rows += [(f"u{u}", k + 1, a, rng.uniform()) for k in range(length) for a in items]
    log = pd.DataFrame(log_rows, columns=["user_id", "position", "item_id", "reward",
                                          "propensity", "cascade_propensity",
                                          "slate_propensity"])
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "rank"])
    model = pd.DataFrame(model_rows, columns=["user_id", "position", "item_id",
                                              "predicted_reward"])
    ranked = {u: g.sort_values("rank").item_id.tolist() for u, g in run.groupby("user_id")}
    probability = pd.DataFrame([(u, k + 1, a, 1.0, 1.0) for u, lst in ranked.items()
                                for k, a in enumerate(lst[:length])],
                               columns=["user_id", "position", "item_id", "probability",
                                        "conditional_probability"])
    a = rankeval.ope(log, run, reward_model=model, rounds=200)
    b = rankeval.ope(log, probability, reward_model=model, rounds=200)
    assert set(a.runs[0].estimates) == set(b.runs[0].estimates) >= {"sips", "cascade_dr", "dm"}
    for name, e in a.runs[0].estimates.items():
        assert e.value == pytest.approx(b.runs[0].estimates[name].value, abs=1e-12), name


def _make_log():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent.parent / "sample_data" / "make_log.py"
    spec = importlib.util.spec_from_file_location("make_log", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("model, unbiased, biased", [
    ("position", ("sips", "iips", "rips", "cascade_dr"), ()),
    ("cascade", ("sips", "rips", "cascade_dr"), ("iips",)),
])
def test_unbiased_estimators_find_the_true_value_on_average(model, unbiased, biased):
    """On simulated logs of a world where the truth is known (sample_data/make_log.py), the
    mean of each unbiased estimator over many logs lies within 4 standard errors of the
    new policy's true value (the rough reward model does not bias cascade-DR), while the
    position-based IIPS, whose assumption a cascade breaks, lies beyond them: the check
    can tell."""
    gen = _make_log()
    w = gen.world()
    rng = np.random.default_rng(31)
    found: dict[str, list[float]] = {k: [] for k in (*unbiased, *biased)}
    for _ in range(150):
        log, run, truth = gen.simulate(w, 300, rng, model)
        model_rows = gen.reward_model(w, log)
        result = rankeval.ope(log, run, reward_model=model_rows, estimators=list(found),
                              rounds=1)
        for k in found:
            found[k].append(result.runs[0].estimates[k].value - truth)
    for k, errors in found.items():
        se = np.std(errors) / math.sqrt(len(errors))
        if k in unbiased:
            assert abs(np.mean(errors)) < 4 * se, (k, np.mean(errors), se)
        else:
            assert abs(np.mean(errors)) > 4 * se, (k, np.mean(errors), se)


SAMPLE_LOG = ("sample_data/log.csv", "sample_data/log_candidate.csv")


def test_the_command_line_gives_the_librarys_numbers_in_every_format(run_cli, tmp_path):
    """rankeval ope: JSON, CSV, Markdown and the table carry the library's estimates; two
    runs get paired differences; --per-context writes each slate's share (their mean is
    the estimate)."""
    log, run = SAMPLE_LOG
    ranked = pd.read_csv(run)
    other = tmp_path / "other.csv"
    ranked.assign(rank=ranked.groupby("user_id").cumcount(ascending=False) + 1).to_csv(
        other, index=False)
    lib = rankeval.ope(log, [run, str(other)], names=["cand", "flip"], rounds=300)
    r = run_cli("ope", log, run, other, "--name", "cand", "--name", "flip", "--rounds", "300",
                "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    doc = r.json()
    for got, want in zip(doc["runs"], lib.runs, strict=True):
        assert {k: e["value"] for k, e in got["estimates"].items()} == pytest.approx(
            {k: e.value for k, e in want.estimates.items()}, abs=1e-15)
    assert {(d["run"], d["estimator"]) for d in doc["differences"]} == {
        ("flip", k) for k in lib.runs[0].estimates}
    r = run_cli("ope", log, run, "-f", "csv", "-q")
    rows = [line.split(",") for line in r.stdout.splitlines()]
    assert rows[0][:5] == ["kind", "run", "baseline", "estimator", "value"]
    iips = next(x for x in rows if x[3] == "iips")
    assert float(iips[4]) == pytest.approx(lib.runs[0].estimates["iips"].value, abs=1e-15)
    for fmt, text in (("markdown", "Off-policy estimates of"), ("table", "Weights of"),
                      ("html", "<h2>Off-policy estimates of")):
        r = run_cli("ope", log, run, "-f", fmt, "-q")
        assert r.exit_code == 0 and text in r.stdout, r.stderr
    per = tmp_path / "per.csv"
    r = run_cli("ope", log, run, "--per-context", per, "-q")
    assert r.exit_code == 0, r.stderr
    table = pd.read_csv(per)
    assert list(table.columns[:2]) == ["user_id", "sips"]
    for k, e in lib.runs[0].estimates.items():
        assert table[k].mean() == pytest.approx(e.value, abs=1e-12), k


def test_gates_and_exit_codes(run_cli, tmp_path):
    """--fail-under: exit 1 below the threshold (the verdict in the report), 0 above; a
    bad gate or a bad log is one line on stderr and exit 2."""
    log, run = SAMPLE_LOG
    iips = rankeval.ope(log, run, rounds=10).runs[0].estimates["iips"].value
    ok = run_cli("ope", log, run, "--fail-under", f"iips={iips - 0.01}", "-q")
    assert ok.exit_code == 0 and "passed" in ok.stdout
    bad = run_cli("ope", log, run, "--fail-under", f"iips={iips + 0.01}", "-q", "-f", "json")
    assert bad.exit_code == 1 and bad.json()["gates"]["passed"] is False
    for args, text in (((log, run, "--fail-under", "magic=1"), "ESTIMATOR=VALUE"),
                       ((log, run, "--clip", "0"), "'--clip': 0.0 is not in the range x>0")):
        r = run_cli("ope", *args)
        assert r.exit_code == 2 and text in r.stderr and r.stderr.count("\n") == 1, r.stderr
    broken = tmp_path / "log.csv"
    pd.read_csv(log).assign(propensity=1.5).to_csv(broken, index=False)
    r = run_cli("ope", broken, run)
    assert r.exit_code == 2 and "log.csv" in r.stderr and "propensities outside" in r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_the_log_from_standard_input(run_cli):
    log, run = SAMPLE_LOG
    with open(log, encoding="utf-8") as f:
        text = f.read()
    r = run_cli("ope", "-", run, "--log-format", "csv", "-f", "json", "-q", "--rounds", "50",
                input=text)
    assert r.exit_code == 0, r.stderr
    want = rankeval.ope(log, run, rounds=50).runs[0].estimates["iips"].value
    assert r.json()["runs"][0]["estimates"]["iips"]["value"] == pytest.approx(want, abs=1e-15)
