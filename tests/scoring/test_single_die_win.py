"""A missed single die with throws to spare (Elizabethan rules) is thrown again, by the chance to win too."""

from __future__ import annotations

import pytest

from farklecam.errors import IllegalActionError
from farklecam.scoring.advisor import advise
from farklecam.scoring.presets import get_rules
from farklecam.scoring.winprob import advise_win

RULES = get_rules("elizabethan")


@pytest.mark.parametrize("scores", [(2000, 3000), (9000, 10_200), (9000, 9500, 10_200)])  # the exact cases
def test_throwing_again_is_worth_what_the_next_throw_brings(scores: tuple[int, ...]) -> None:
    def win(face: int, throws: int) -> float:
        return advise_win((face,), RULES, scores, turn_total=1000, throws_left=throws).win

    assert advise_win((3,), RULES, scores, turn_total=1000, throws_left=1).farkle  # the last throw missed
    for throws in (2, 3):
        again = advise_win((3,), RULES, scores, turn_total=1000, throws_left=throws)
        assert again.throw_again and not again.farkle and again.action == "roll"
        # a throw of the die: a 1 or a 5 (each 1/6) scores; else one throw fewer is left
        step = (win(1, throws) + win(5, throws)) / 6 + 4 / 6 * win(3, throws - 1)
        assert again.win == pytest.approx(step, abs=1e-12)


def test_three_players_away_from_the_last_round_throw_again_too() -> None:
    again = advise_win((3,), RULES, (2000, 3000, 2500), turn_total=1000, throws_left=2)
    lost = advise_win((3,), RULES, (2000, 3000, 2500), turn_total=1000, throws_left=1)
    assert again.throw_again and again.approximate and lost.farkle
    assert lost.win < again.win < advise_win((1,), RULES, (2000, 3000, 2500), turn_total=1000).win


def test_the_default_is_the_first_throw_as_the_points_advice_reads_it() -> None:
    found = advise_win((3,), RULES, (2000, 3000), turn_total=1000)
    points = advise((3,), RULES, turn_total=1000)
    assert found.throw_again and points.throw_again
    assert found.win == advise_win((3,), RULES, (2000, 3000), turn_total=1000, throws_left=3).win


@pytest.mark.parametrize(("dice", "throws", "message"), [((3, 4), 2, "single die"), ((3,), 4, "1-3")])
def test_throws_left_out_of_place_is_refused(dice: tuple[int, ...], throws: int, message: str) -> None:
    with pytest.raises(IllegalActionError, match=message):
        advise_win(dice, RULES, (2000, 3000), throws_left=throws)
