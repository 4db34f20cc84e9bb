"""The last round: exact chances for any number of players, checked against a plain recursion."""

from __future__ import annotations

import random

import pytest

from farklecam.scoring import last_round, last_round_dp, winprob
from farklecam.scoring.presets import get_rules
from farklecam.scoring.rules import Rules
from farklecam.scoring.setasides import legal_set_asides
from tests.scoring.last_round_brute import Brute

#: A short cut (points) so that the plain recursion runs in milliseconds; the solver plays the same game.
CUT = 600


def random_last_round(rng: random.Random, players: int, rules: Rules) -> tuple[list[int], int, tuple[int, ...]]:
    """Scores in turn order from the mover (someone at the target), a turn total and a roll."""
    goal = rules.target
    trigger = rng.randrange(1, players)
    scores = [goal - 50 * rng.randint(1, 16) for _ in range(players)]  # within reach of the target
    scores[trigger] = goal + 50 * rng.randint(0, 8)
    for k in range(trigger + 1, players):  # these played their last turn: some passed the trigger
        if rng.random() < 0.4:
            scores[k] = goal + 50 * rng.randint(0, 10)
    if rng.random() < 0.2:  # a later player exactly on the best score's heels, the mover tied ahead
        scores[rng.randrange(1, players)] = max(scores[1:])
    turn_total = 50 * rng.randint(0, 20)
    roll = tuple(sorted(rng.randint(1, 6) for _ in range(rng.randint(1, rules.dice))))
    return scores, turn_total, roll


def plays(
    brute: Brute, rules: Rules, roll: tuple[int, ...], turn_total: int
) -> dict[tuple[tuple[int, ...], str], float]:
    """Every play of the roll (keep, then bank or roll) with its exact chance to win."""
    out = {}
    for option in legal_set_asides(roll, rules):
        total, left = turn_total + option.points, 0 if option.hot_dice else option.dice_left
        bank = brute.bank(total, left)
        if bank is not None:
            out[(option.keep, "bank")] = bank
        out[(option.keep, "roll")] = brute.roll(total, left)
    return out


@pytest.mark.parametrize("players", [3, 4])
def test_advice_maximises_the_exact_chance_in_random_last_rounds(players: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(last_round_dp, "cut_units", lambda rules: CUT // 50)  # the solver plays the oracle's game
    rules = get_rules("house")
    rng = random.Random(players)
    later_seen = set()
    for _ in range(100):
        scores, turn_total, roll = random_last_round(rng, players, rules)
        advice = winprob.advise_win(roll, rules, scores, turn_total=turn_total)
        brute = Brute(rules, scores, turn_total, CUT // 50)
        later_seen.add(len(brute.bases) - 1)
        assert advice.last_turn and not advice.approximate
        if advice.farkle:
            assert not legal_set_asides(roll, rules) and advice.win == 0.0
            continue
        chances = plays(brute, rules, roll, turn_total)
        best = max(chances.values())
        assert chances[(advice.keep, advice.action)] == pytest.approx(best, abs=1e-12), (scores, turn_total, roll)
        assert advice.win == pytest.approx(best, abs=1e-12)
        for other in advice.alternatives:  # each keep's own best play, at its exact chance
            assert other.win == pytest.approx(chances[(other.keep, other.action)], abs=1e-12)
    assert later_seen == set(range(players - 1))  # the mover last, and one or more players still to come


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("progressive", {}),  # a bank passes its dice and total to the next player
        ("elizabethan", {}),  # three throws for a single die, a turn minimum
        ("zilch", {}),  # six dice never farkle
        ("boxed", {"must_roll_after_hot_dice": True}),
        ("boxed", {"exact_target": True}),
    ],
)
def test_every_rule_set_matches_the_plain_recursion(preset: str, options: dict[str, object]) -> None:
    rules = get_rules(preset).with_options(options)
    rng = random.Random(preset)
    for _ in range(6):
        scores, turn_total, roll = random_last_round(rng, 4, rules)
        if rules.exact_target:
            scores = [min(s, rules.target) for s in scores]
        brute = Brute(rules, scores, turn_total, CUT // 50)
        turn = last_round.mover_turn(rules, scores, turn_total=turn_total, cut=CUT)
        for option in legal_set_asides(roll, rules):
            total, left = turn_total + option.points, 0 if option.hot_dice else option.dice_left
            assert turn.roll(total, left) == pytest.approx(brute.roll(total, left), abs=1e-12)
            assert turn.bank(total, left) == pytest.approx(brute.bank(total, left), abs=1e-12)


def test_the_cut_changes_nothing_that_shows() -> None:
    rules = get_rules("house")
    scores = [9000, 9900, 9500, 10200]
    cut = last_round_dp.cut_units(rules) * 50
    near = last_round.mover_turn(rules, scores, turn_total=1150)
    far = last_round.mover_turn(rules, scores, turn_total=1150, cut=cut + 2000)
    for total, left in [(1300, 0), (1300, 4), (1250, 5), (1200, 5)]:
        assert near.roll(total, left) == pytest.approx(far.roll(total, left), abs=1e-12)
        assert near.bank(total, left) == pytest.approx(far.bank(total, left), abs=1e-12)


def test_players_still_to_play_are_counted() -> None:
    # Ann 9,000 has 1,150 set aside and throws 1,5; Bob 9,900 and Cy 9,500 still have their last turn.
    rules = get_rules("house")
    advice = winprob.advise_win((1, 5), rules, [9000, 9900, 9500, 10200], turn_total=1150)
    assert (advice.keep, advice.action) == ((1, 5), "roll") and not advice.approximate
    turn = last_round.mover_turn(rules, [9000, 9900, 9500, 10200], turn_total=1150)
    bank, roll = turn.bank(1300, 0), turn.roll(1300, 0)  # 1 and 5 kept: hot dice
    assert bank is not None and bank < 0.3 < roll == pytest.approx(advice.win)
    # Cy has played already (the scores are in turn order): banking 10,300 only has Bob to fear
    bob = last_round.mover_turn(rules, [9000, 9900, 10200, 9500], turn_total=1150).bank(1300, 0)
    cy = last_round.mover_turn(rules, [9000, 9500, 10200, 9900], turn_total=1150).bank(1300, 0)
    assert bob is not None and cy is not None and bank < min(bob, cy)
    # Bob's own turn is played to win against Cy too: he sometimes throws on past 10,300 and farkles,
    # so Ann's bank is worth a little more than if Bob stopped as soon as he led
    assert bank > bob * cy


def test_the_mover_last_to_play_races_the_best_score_alone() -> None:
    rules = get_rules("busche-neller").with_options({"target": 1000})
    three = winprob.advise_win((1, 5, 2, 3, 4, 6), rules, (300, 1100, 200))  # 200 played after 1,100
    two = winprob.advise_win((1, 5, 2, 3, 4, 6), rules, (300, 1100))
    assert three.last_turn and not three.approximate and not two.approximate
    assert (three.keep, three.action, three.win) == (two.keep, two.action, two.win)
    before = winprob.advise_win((1, 5, 2, 3, 4, 6), rules, (300, 200, 1100))  # 200 still to play
    assert before.win < two.win


@pytest.mark.parametrize(("tie", "exact"), [("shared", True), ("extra_round", False)])
def test_a_tie_is_shared_by_every_leader(tie: str, exact: bool) -> None:
    rules = get_rules("house").with_options({"tie": tie})
    turn = last_round.mover_turn(rules, [9000, 10000, 10000], turn_total=900)
    assert turn.bank(1000, 5) == pytest.approx(1 / 3)  # on 10,000 with two others: a third of the win
    seats = last_round.read_seats(rules, [9000, 10000, 10000])
    assert seats is not None and last_round.is_exact(rules, seats) is exact


def test_seats_are_read_in_turn_order() -> None:
    rules = get_rules("house")
    assert last_round.read_seats(rules, [5000, 9000, 8000]) is None
    seats = last_round.read_seats(rules, [9000, 9900, 9500, 10200, 10400])
    assert seats == last_round.LastRoundSeats(9000, (9900, 9500), 10400, 1)
