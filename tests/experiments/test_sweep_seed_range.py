"""The compact seed form of a sweep, ``seeds: {first: 5000, count: 20}``: the games it
plays, how they are counted beside other seed sets, and its refusals."""

from __future__ import annotations

import pytest

from dp_online_envs.lab.experiments import ExperimentError, parse_sweep


def _seeds(sweep) -> list[int]:
    return sorted({g.seed_index for g in sweep.games})


def test_first_and_count_play_the_indices_first_to_first_plus_count(small_sweep):
    compact = parse_sweep(dict(small_sweep, seeds={"first": 5000, "count": 3}))
    listed = parse_sweep(dict(small_sweep, seeds=[5000, 5001, 5002]))
    assert _seeds(compact) == [5000, 5001, 5002]
    assert [g.game_id for g in compact.games] == [g.game_id for g in listed.games]
    assert len(compact) == len(listed) == 5 * 3


def test_two_seed_sets_in_two_blocks_are_counted_as_their_union(small_sweep):
    blocks = dict(small_sweep, experiments=[
        {"name": "a", "tags": {"seed_set": "discovery"}, "seeds": 4},
        {"name": "a", "tags": {"seed_set": "replication"},
         "seeds": {"first": 5000, "count": 4}},
        # overlaps both sets: counted once each
        {"name": "b", "seeds": [2, 3, 4, 5001, 5004]},
        {"name": "c", "seeds": {"first": 5002, "count": 4}},
    ])
    sweep = parse_sweep(blocks)
    union = sorted({0, 1, 2, 3, 4, 5000, 5001, 5002, 5003, 5004, 5005})
    assert _seeds(sweep) == union
    assert len(sweep) == len(sweep.games) == 5 * len(union)
    tags = {(g.seed_index, g.tags.get("seed_set")) for g in sweep.games}
    assert (5000, "replication") in tags and (0, "discovery") in tags


def test_a_range_that_does_not_start_at_zero_is_not_counted_from_zero(small_sweep):
    sweep = parse_sweep(dict(small_sweep, seeds={"first": 10**8, "count": 2}))
    assert len(sweep) == 5 * 2 == len(sweep.games)


@pytest.mark.parametrize("seeds, message", [
    ({"first": 5000}, "exactly the keys ['first', 'count']"),
    ({"first": 5000, "count": 3, "step": 2}, "exactly the keys ['first', 'count']"),
    ({"first": -1, "count": 3}, "seeds.first"),
    ({"first": 5000, "count": 0}, "seeds.count"),
    ({"first": 5000, "count": 2.0}, "seeds.count"),
    ({"first": "5000", "count": 2}, "seeds.first"),
])
def test_a_bad_compact_form_is_refused_by_name(small_sweep, seeds, message):
    with pytest.raises(ExperimentError, match="seeds") as err:
        parse_sweep(dict(small_sweep, seeds=seeds))
    assert message in str(err.value)
    assert repr(seeds)[:10] in str(err.value) or message.startswith("seeds.")
