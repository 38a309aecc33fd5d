"""The bibliography is data (issue 28): every chapter's references resolve to a citation."""

from accelkit import references as R


def test_every_chapter_lists_known_references_in_order():
    assert set(R.CHAPTERS) >= {"catalogue", "demand", "roofline", "decision", "validation", "monitor", "probe"}
    for chapter, keys in R.CHAPTERS.items():
        assert keys, f"chapter {chapter} lists no references"
        assert all(k in R.REFERENCES for k in keys)
    text = R.chapter_references("roofline")
    assert text.splitlines()[1] == "[1] " + R.REFERENCES["efficiency"]
    assert "Williams" in R.REFERENCES["williams2009"] and "Roofline" in R.REFERENCES["williams2009"]


def test_an_unknown_chapter_is_refused_with_the_known_ones():
    import pytest

    with pytest.raises(ValueError, match="chapter must be one of catalogue, demand"):
        R.chapter_references("nonsense")
