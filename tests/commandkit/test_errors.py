"""commandkit.errors: how a library's error reads in one line."""

import pytest


@pytest.mark.parametrize(
    "text,line,reason",
    [
        ('{\n "a": "b', True, "Unterminated string starting at line 2, column 7"),
        ('{\n "a": "b', False, "Unterminated string starting at column 7"),
        ('{"a": }', True, "Expecting value at line 1, column 7"),
    ],
)
def test_a_json_error_says_where_once(text, line, reason):
    """Issue 50.4: json's msg "Unterminated string starting at" has its position apart; one
    phrase, never "starting at at line 2"."""
    import json

    from commandkit.errors import json_reason

    with pytest.raises(json.JSONDecodeError) as e:
        json.loads(text)
    assert json_reason(e.value, line=line) == reason
