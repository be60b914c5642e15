"""The share of each property test's examples that CI's quick runs on other Pythons take (tests/support/examples.py)."""

from __future__ import annotations

import os

import pytest

from tests.support.examples import FEWEST, SHARE, SHARE_VARIABLE, examples, share_of


def test_a_full_share_runs_every_named_example() -> None:
    assert [examples(count, 1.0) for count in (1, 40, 300, 1000)] == [1, 40, 300, 1000]


def test_a_share_runs_that_part_of_each_count_but_never_fewer_than_the_fewest_nor_more_than_named() -> None:
    assert examples(300, 0.25) == 75
    assert examples(1000, 0.25) == 250
    assert examples(20, 0.25) == FEWEST
    assert examples(FEWEST - 3, 0.25) == FEWEST - 3


def test_the_variable_names_the_share_and_nothing_else_passes() -> None:
    assert share_of(None) == 1.0
    assert share_of("0.25") == 0.25
    assert share_of("1") == 1.0
    for text in ("0", "-0.5", "1.5", "a quarter", "", "nan"):
        with pytest.raises(ValueError, match=SHARE_VARIABLE):
            share_of(text)


def test_this_run_takes_the_share_its_environment_names() -> None:
    assert share_of(os.environ.get(SHARE_VARIABLE)) == SHARE
