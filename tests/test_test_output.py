"""The test run's own output: expected failures are summarised once per reason."""

from pathlib import Path

pytest_plugins = ["pytester"]


def test_xfails_are_grouped_by_reason(pytester):
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile("""
        import pytest

        @pytest.mark.parametrize("p", ["est1-check_a", "est1-check_b", "est2-check_a"])
        @pytest.mark.xfail(reason="one long reason shared by many checks")
        def test_x(p):
            assert False

        @pytest.mark.xfail(reason="another")
        def test_y():
            assert False
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(xfailed=4)
    result.stdout.fnmatch_lines([
        "*4 expected failures (xfail), by reason*",
        "XFAIL x3: one long reason shared by many checks",
        "*::test_x[[]est1[]]: check_a, check_b",
        "*::test_x[[]est2[]]: check_a",
        "XFAIL x1: another",
        "*::test_y",
    ])
    assert result.stdout.str().count("one long reason") == 1
