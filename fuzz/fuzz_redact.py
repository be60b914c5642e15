"""atheris target: arbitrary text in every scanned field; findings are bounded and well-formed."""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import cmp
    import cmp._compiler
    import cmp._explain  # imported lazily by cmp; instrument it up front
    from cmp._redaction._scan import scan


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    texts = [(f"open_questions[{i}]", provider.ConsumeUnicodeNoSurrogates(64)) for i in range(4)]
    for hit in scan(texts):
        assert hit.category in cmp.REDACTION_CATEGORIES
        assert len(hit.echo) <= 33
        assert str(hit).startswith(hit.field + "/" + hit.category + ": ")
        assert hit.found == "-----BEGIN …" or hit.found in dict(texts)[hit.field]


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
