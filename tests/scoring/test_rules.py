from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from farklecam.errors import InvalidRulesError
from farklecam.scoring.presets import PRESETS, get_preset, get_rules, preset_names, rules_from_file
from farklecam.scoring.rules import KindScoring, Rules, TieRule, option_names, option_spec

SHARED_RULES = Path(__file__).resolve().parents[3] / "shared" / "rules"


def test_default_is_the_boxed_set() -> None:
    assert get_rules() == Rules(name="boxed")


@pytest.mark.parametrize(
    ("alias", "name"), [("BAR", "house"), ("piggyback", "progressive"), ("busche_neller", "busche-neller")]
)
def test_aliases_resolve(alias: str, name: str) -> None:
    assert get_preset(alias).name == name


def test_unknown_preset_lists_the_presets() -> None:
    with pytest.raises(InvalidRulesError, match="choose one of: boxed, house, progressive"):
        get_rules("yahtzee")


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_cites_its_source(preset: str) -> None:
    p = PRESETS[preset]
    assert p.citations and p.summary
    assert p.rules.name == preset


@pytest.mark.skipif(not SHARED_RULES.is_dir(), reason="../shared/rules not beside the checkout")
@pytest.mark.parametrize("preset", ["boxed", "house", "progressive", "elizabethan"])
def test_citations_quote_the_rule_texts(preset: str) -> None:
    """Each quote attributed to a rule text really is in it (modulo whitespace and ' / ' joins)."""
    for citation in PRESETS[preset].citations:
        path = SHARED_RULES / citation.source
        if not path.exists():
            continue
        text = " ".join(path.read_text().split())
        for piece in citation.quote.split(" / "):
            fragment = " ".join(piece.split()).removesuffix(" (4, 5 and 6 of a kind)")
            assert fragment in text, (citation.source, fragment)


@pytest.mark.parametrize(
    ("settings", "field", "value"),
    [
        (["three_ones=1000"], "three_ones", 1000),
        (["farkle_penalty=1,000"], "farkle_penalty", 1000),
        (["straight=off"], "straight", 0),
        (["must_roll_after_hot_dice=yes"], "must_roll_after_hot_dice", True),
        (["kind_scoring=DOUBLING"], "kind_scoring", KindScoring.DOUBLING),
        (["tie=extra_round"], "tie", TieRule.EXTRA_ROUND),
        (["dice=5"], "dice", 5),
        (["target=5000", "exact_target=true"], "exact_target", True),
    ],
)
def test_settings_parse(settings: list[str], field: str, value: object) -> None:
    assert getattr(get_rules().with_settings(settings), field) == value


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (["three_onez=1000"], "unknown rule option 'three_onez'; valid options: dice, single_one"),
        (["three_ones=1001"], "multiple of 50"),
        (["dice=4"], "must be an integer in 5..6"),
        (["three_ones=10000000"], r"must be a multiple of 50 in 0\.\.2000, got 10000000"),
        (["straight=1000000000000000000000"], r"straight.* in 0\.\.5000"),
        (["three_ones=lots"], r"must be a multiple of 50 in 0\.\.2000 \(or .off.\)"),
        (["kind_scoring=tripling"], "fixed | adding | doubling | triples_only"),
        (["piggyback=maybe"], "true or false"),
        (["noequals"], "key=value"),
        (["name=x"], "unknown rule option 'name'"),
    ],
)
def test_bad_settings_are_clear_errors(settings: list[str], message: str) -> None:
    with pytest.raises(InvalidRulesError, match=message):
        get_rules().with_settings(settings)


def test_key_ignores_name_but_not_options() -> None:
    assert get_rules("house").key() == Rules(name="other", three_ones=1000, four_kind_with_pair=0).key()
    assert get_rules("house").key() != get_rules("progressive").key()
    assert len({p.rules.key() for p in PRESETS.values()}) == len(PRESETS)


def test_every_field_is_an_option() -> None:
    assert set(option_names()) == set(Rules().to_dict()) - {"name"}


def test_bank_minimum() -> None:
    eliz = get_rules("elizabethan")
    assert (eliz.bank_minimum(on_board=False), eliz.bank_minimum(on_board=True)) == (1000, 350)
    boxed = get_rules("boxed")
    assert (boxed.bank_minimum(on_board=False), boxed.bank_minimum(on_board=True)) == (500, 0)


def test_kind_scoring_modes() -> None:
    base = get_rules("boxed").with_options({"three_ones": 1000})
    assert [base.kind(2, n) for n in (3, 4, 5, 6)] == [200, 1000, 2000, 3000]
    adding = base.with_options({"kind_scoring": "adding"})
    assert [adding.kind(2, n) for n in (3, 4, 5, 6)] == [200, 400, 600, 800]
    doubling = base.with_options({"kind_scoring": "doubling"})
    assert [doubling.kind(1, n) for n in (3, 4, 5, 6)] == [1000, 2000, 4000, 8000]
    triples = base.with_options({"kind_scoring": "triples_only"})
    assert [triples.kind(4, n) for n in (3, 4, 5, 6)] == [400, 0, 0, 0]


def test_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('preset = "house"\nfarkle_penalty = 500\nmust_roll_after_hot_dice = true\n')
    rules = rules_from_file(path)
    assert (rules.name, rules.three_ones, rules.farkle_penalty, rules.must_roll_after_hot_dice) == (
        "house",
        1000,
        500,
        True,
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("preset = 'nope'\n", "unknown rule preset"),
        ("x = 1\n", "unknown rule option 'x'"),
        ("= broken", "not valid TOML"),
    ],
)
def test_bad_toml_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content)
    with pytest.raises(InvalidRulesError, match=message):
        rules_from_file(path)


def test_missing_toml_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidRulesError, match="cannot read rules file"):
        rules_from_file(tmp_path / "missing.toml")


def test_preset_names_order() -> None:
    assert preset_names() == ("boxed", "house", "progressive", "elizabethan", "busche-neller", "zilch")


def test_every_option_says_what_it_does_and_where_it_comes_from() -> None:
    for name in option_names():
        spec = option_spec(name)
        assert spec is not None, name
        assert spec.description.endswith(".") and spec.source, name


@pytest.mark.parametrize("preset", list(PRESETS))
def test_presets_sit_inside_the_bounds(preset: str) -> None:
    rules = PRESETS[preset].rules
    for name in option_names():
        spec = option_spec(name)
        assert spec is not None
        if spec.low is not None and spec.high is not None:
            assert spec.low <= getattr(rules, name) <= spec.high, (preset, name)


int_options = [n for n in option_names() if (s := option_spec(n)) is not None and s.low is not None]


@given(name=st.sampled_from(int_options), value=st.integers(min_value=-(10**30), max_value=10**30))
def test_an_integer_option_is_accepted_exactly_inside_its_range(name: str, value: int) -> None:
    """Every integer option takes exactly the values its spec allows, and names the range otherwise."""
    spec = option_spec(name)
    assert spec is not None and spec.low is not None and spec.high is not None
    inside = spec.low <= value <= spec.high and value % spec.step == 0
    if inside:
        assert getattr(Rules().with_options({name: value}), name) == value
    else:
        with pytest.raises(InvalidRulesError, match=rf"{name}.* in {spec.low}\.\.{spec.high}"):
            Rules().with_options({name: str(value)})
