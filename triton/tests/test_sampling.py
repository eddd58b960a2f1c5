"""The batched sampler (chatglm.engine.sampling.sample_tokens): the same kept sets as transformers 4.40.2's
warpers, a per-request seed that gives the same tokens alone or in any batch, id -1 for a row whose own settings
make its distribution invalid, and no host synchronisation."""
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from chatglm.engine.generation import invalid_distribution_message
from chatglm.engine.sampling import INVALID_TOKEN, RowSettings, RowWarper, SamplingTensors, TokenPresence, choose_tokens, \
    sample_tokens, seen_from_ids, uniforms

transformers = pytest.importorskip("transformers")
from transformers.generation.logits_process import (  # noqa: E402
    RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper)

VOCAB = 2000


def params(settings, counters=None, seeds=None):
    return SamplingTensors.build(settings, counters or [0] * len(settings), seeds=seeds)


def kept(scores):
    return torch.isfinite(scores)


def test_top_p_keeps_the_same_sets_as_transformers_top_p_warper():
    gen = torch.Generator().manual_seed(0)
    same = total = 0
    for top_p in (0.1, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0):
        logits = torch.randn(64, VOCAB, generator=gen) * 3
        ours = RowWarper([RowSettings(1.0, top_p, 1)] * 64)(logits)
        theirs = TopPLogitsWarper(top_p)(None, logits.clone())
        same += int((kept(ours) == kept(theirs)).all(dim=-1).sum())
        total += 64
    assert same / total >= 0.99, f"{same} of {total} kept sets identical"


def test_temperature_top_k_and_top_p_together_match_transformers_in_its_order():
    gen = torch.Generator().manual_seed(1)
    same = total = 0
    for temperature, top_k, top_p in ((0.7, 50, 0.8), (1.3, 10, 0.95), (0.5, 1, 0.5), (1.0, 0, 0.7), (0.9, 3000, 1.0)):
        logits = torch.randn(32, VOCAB, generator=gen) * 2
        ours = RowWarper([RowSettings(temperature, top_p, 1, top_k)] * 32)(logits)
        theirs = TemperatureLogitsWarper(temperature)(None, logits.clone())
        if top_k:
            theirs = TopKLogitsWarper(top_k)(None, theirs)
        theirs = TopPLogitsWarper(top_p)(None, theirs)
        same += int((kept(ours) == kept(theirs)).all(dim=-1).sum())
        total += 32
        both = kept(ours) & kept(theirs)
        assert torch.allclose(ours[both], theirs[both])  # the kept scores are the scaled logits
    assert same / total >= 0.99, f"{same} of {total} kept sets identical"


def test_repetition_penalty_matches_transformers_processor():
    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(4, VOCAB, generator=gen)
    input_ids = torch.randint(0, VOCAB, (4, 30), generator=gen)
    ours = RowWarper([RowSettings(1.0, 1.0, 1, 0, 1.3)] * 4)(logits, seen=seen_from_ids(input_ids, VOCAB))
    theirs = RepetitionPenaltyLogitsProcessor(1.3)(input_ids, logits.clone())
    assert torch.allclose(ours, theirs)
    # greedy rows see the penalty too (transformers applies processors before the argmax)
    greedy = sample_tokens(logits, params([RowSettings(0.0, 1.0, 1, 0, 1.3)] * 4), seen_from_ids(input_ids, VOCAB))
    assert greedy.tolist() == theirs.argmax(dim=-1).tolist()


def test_the_smallest_accepted_repetition_penalty_keeps_every_row_valid():
    """request.MIN_REPETITION_PENALTY is the range that works: at that penalty, an fp16-max score of a seen token
    and the smallest temperature that still samples stay finite (a tiny penalty such as 1e-38 would overflow)."""
    from chatglm.serving.request import MIN_REPETITION_PENALTY

    logits = torch.randn(3, VOCAB, generator=torch.Generator().manual_seed(7))
    logits[:, 0], logits[:, 1] = 65504.0, -65504.0  # fp16's largest scores, both seen
    seen = seen_from_ids(torch.tensor([[0, 1]] * 3), VOCAB)
    rows = [RowSettings(t, 0.8, 1, 0, MIN_REPETITION_PENALTY) for t in (0.0, 1e-5, 2.0)]
    assert (sample_tokens(logits, params(rows, seeds=[5] * 3), seen) >= 0).all()
    tiny = [RowSettings(1e-5, 0.8, 1, 0, 1e-38)]
    assert sample_tokens(logits[:1], params(tiny, seeds=[5]), seen[:1]).tolist() == [INVALID_TOKEN]


def test_a_sampling_failure_names_a_penalty_below_1_in_its_advice():
    """A penalty below 1 multiplies scores, as a small temperature divides them: the advice names both then."""
    assert "repetition_penalty closer to 1" in invalid_distribution_message(RowSettings(0.5, 0.8, 1, 0, 0.5))
    assert "repetition_penalty closer to 1" not in invalid_distribution_message(RowSettings(0.5, 0.8, 1, 0, 1.2))


def test_temperatures_below_1e_5_are_greedy():
    logits = torch.randn(5, VOCAB, generator=torch.Generator().manual_seed(3))
    rows = [RowSettings(t, 0.8, 1) for t in (0.0, 1e-39, 1e-30, 9.9e-6, 1e-5)]
    ids = sample_tokens(logits, params(rows, seeds=[11] * 5))
    assert ids[:4].tolist() == logits[:4].argmax(dim=-1).tolist()
    assert ids[4] >= 0  # 1e-5 samples (and stays finite)


def test_a_seed_gives_the_same_tokens_alone_and_in_any_batch():
    gen = torch.Generator().manual_seed(4)
    steps = [torch.randn(6, VOCAB, generator=gen) for _ in range(40)]
    settings = RowSettings(0.9, 0.9, 1, 40, 1.0, seed=1234)
    others = [RowSettings(1.0, 0.7, 1, 0), RowSettings(0.0, 1.0, 1), RowSettings(1.5, 1.0, 1, 5)]
    alone = [sample_tokens(s[:1], params([settings], [i], [1234]))[0].item() for i, s in enumerate(steps)]
    for position in range(4):  # the seeded row at every position of a batch of 4, with other rows around it
        rows = others[:position] + [settings] + others[position:]
        logits = [torch.cat([s[1:1 + position], s[:1], s[1 + position:4]]) for s in steps]
        batch = [sample_tokens(l, params(rows, [i] * 4, [7, 8, 9, 10][:position] + [1234] + [7, 8, 9, 10][position:3]))
                 [position].item() for i, l in enumerate(logits)]
        assert batch == alone
    different = [sample_tokens(s[:1], params([settings], [i], [99]))[0].item() for i, s in enumerate(steps)]
    assert different != alone  # the seed matters


def test_sampling_follows_the_warped_distribution():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05, 0, 0, 0, 0]]))  # zero probability: log 0 = -inf
    logits[0, 4:] = -1e4  # (finite: a row with -inf would be "invalid" to ChatGLM's guard)
    counts = torch.zeros(8)
    draws = 4000
    rows = [RowSettings(1.0, 1.0, 1)] * draws
    ids = sample_tokens(logits.expand(draws, 8), params(rows, list(range(draws)), [5] * draws))
    counts.index_add_(0, ids, torch.ones(draws))
    assert torch.allclose(counts / draws, torch.tensor([0.5, 0.3, 0.15, 0.05, 0, 0, 0, 0]), atol=0.03), counts
    top_p = sample_tokens(logits.expand(draws, 8), params([RowSettings(1.0, 0.8, 1)] * draws, list(range(draws)), [5] * draws))
    assert set(top_p.tolist()) == {0, 1}  # the nucleus of 0.8 is the first two
    u = uniforms(torch.full((draws,), 5, dtype=torch.long), torch.arange(draws))
    assert 0 < float(u.min()) and float(u.max()) < 1 and abs(float(u.mean()) - 0.5) < 0.02


def test_a_row_whose_own_settings_overflow_gets_minus_one_and_the_others_are_unchanged():
    logits = torch.randn(3, VOCAB, generator=torch.Generator().manual_seed(5)) * 4
    logits[1] = 3e38  # finite, but any temperature below 1 overflows it
    rows = [RowSettings(0.0, 1.0, 1), RowSettings(0.5, 0.9, 1), RowSettings(0.8, 0.9, 1, 50)]
    ids = sample_tokens(logits, params(rows, [3] * 3, [1, 2, 3]))
    assert ids[1] == INVALID_TOKEN
    alone = [sample_tokens(logits[i:i + 1], params([rows[i]], [3], [[1, 2, 3][i]]))[0].item() for i in (0, 2)]
    assert [ids[0].item(), ids[2].item()] == alone and min(alone) >= 0
    # bypassing validation: a non-greedy flag with a denormal temperature divides by it
    hostile = SamplingTensors.build([RowSettings(1.0, 1.0, 1)], [0], seeds=[1])
    hostile.temperature[0] = 1e-39
    assert sample_tokens(logits[:1], hostile).tolist() == [INVALID_TOKEN]


def test_nan_logits_follow_chatglm_s_guard():
    logits = torch.randn(2, VOCAB)
    logits[0, 7] = float("nan")
    ids = sample_tokens(logits, params([RowSettings(0.8, 0.8, 1)] * 2, seeds=[1, 2]))
    assert ids[0] == 5 and ids[1] >= 0  # ChatGLM's InvalidScoreLogitsProcessor forces token 5


class SyncCounter(TorchDispatchMode):
    """Counts the ops that make the host wait for the device."""

    SYNCING = ("_local_scalar_dense", "nonzero", "item", "is_nonzero", "equal", "masked_select")

    def __init__(self):
        super().__init__()
        self.syncs = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__.split(".")[0]
        if name in self.SYNCING:
            self.syncs.append(name)
        return func(*args, **(kwargs or {}))


def test_sampling_a_mixed_batch_never_synchronises_with_the_host():
    logits = torch.randn(4, VOCAB)
    rows = [RowSettings(0.0, 1.0, 1), RowSettings(0.8, 0.8, 1, 50, 1.2), RowSettings(1.0, 1.0, 1),
            RowSettings(1e-39, 1e-30, 1, 0)]
    p = params(rows, [1, 2, 3, 4], [1, 2, 3, 4])
    presence = TokenPresence(8, VOCAB)
    presence.start(2, [1, 2, 3])
    slots = torch.tensor([0, 2, 4, 6])
    with SyncCounter() as counter:
        ids = sample_tokens(logits, p, presence.rows(slots))
        presence.add(slots, ids)
    assert counter.syncs == [] and ids.dtype == torch.int64 and ids.shape == (4,)
    assert bool(presence.bits[2, ids[1]]) and bool(presence.bits[2, 1])


def test_choose_tokens_is_one_list_of_ids():
    logits = torch.randn(2, VOCAB)
    assert choose_tokens(logits, [RowSettings(0.0, 1.0, 1)] * 2, [0, 0], [1, 1]) == logits.argmax(-1).tolist()


def test_an_all_greedy_call_takes_the_argmax_as_the_general_path_does():
    """With every row greedy (known on the host) the sampler skips warping and drawing: the same ids as the general
    path, for finite rows, a NaN row (ChatGLM's fallback id) and an infinite one."""
    import dataclasses

    generator = torch.Generator().manual_seed(3)
    logits = torch.randn(5, 300, generator=generator)
    logits[1, 7] = float("nan")
    logits[2, 9] = float("inf")
    settings = [RowSettings(0.0, 1.0, 16)] * 5
    fast = SamplingTensors.build(settings, [0] * 5, None, [1, 2, 3, 4, 5])
    assert fast.all_greedy
    general = dataclasses.replace(fast, all_greedy=False)
    assert torch.equal(sample_tokens(logits, fast), sample_tokens(logits, general))
    mixed = SamplingTensors.build(settings[:4] + [RowSettings(0.8, 0.9, 16)], [0] * 5, None, [1, 2, 3, 4, 5])
    assert not mixed.all_greedy
