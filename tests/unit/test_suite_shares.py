"""How CI shares out the suite: the part of each property test's examples that the quick
runs on the other Pythons take (tests/support/examples.py), and the folders the quick
subset leaves uncollected (tests/conftest.py)."""

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


def test_the_quick_subset_does_not_collect_the_folders_whose_every_test_is_slow(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/conftest.py: under -m "not slow" tests/cli and tests/integration are not imported;
    under any other expression they are collected (and their tests deselected by marker)."""
    from tests import conftest

    monkeypatch.setattr(pytestconfig.option, "markexpr", " not slow ")
    assert conftest.pytest_ignore_collect(conftest.CLI, pytestconfig) is True
    assert conftest.pytest_ignore_collect(conftest.INTEGRATION / "test_dask.py", pytestconfig) is True
    assert conftest.pytest_ignore_collect(conftest.HERE / "unit" / "test_example_share.py", pytestconfig) is None
    for other in ("", "slow", "integration", "not slow and not property", "not integration"):
        monkeypatch.setattr(pytestconfig.option, "markexpr", other)
        assert conftest.pytest_ignore_collect(conftest.CLI, pytestconfig) is None
