"""Elicitation forms turned into questions, and answers into what the server gets
(the host-independent part; real servers ask in test_mcp_real_servers.py and through the
editor in test_lsp_mcp_command.py)."""

from __future__ import annotations

import mcp_types as types

from agentls.mcp.elicitation import Elicitation, ask, convert, form_field
from tests.mcp_servers.questions import ScriptedUser

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 2},
        "ok": {"type": "boolean", "default": True},
    },
    "required": ["name"],
}


def _form(schema: dict[str, object] = SCHEMA) -> Elicitation:
    params = types.ElicitRequestFormParams(message="Tell me", requested_schema=schema)
    return Elicitation.of("srv", params)


def test_fields_come_from_the_restricted_schema() -> None:
    fields = {f.name: f for f in _form().fields}
    assert fields["name"].kind == "text"
    assert fields["name"].required
    assert fields["age"].kind == "integer"
    assert fields["age"].maximum == 150
    assert [(c.value, c.label) for c in fields["size"].choices] == [("s", "Small"), ("m", "Medium")]
    assert fields["tags"].kind == "choices"
    assert fields["tags"].max_items == 2
    assert fields["ok"].default is True
    assert isinstance(form_field("x", {"type": "object"}, False), str)  # not allowed: reported


def test_typed_values_are_checked_against_the_field() -> None:
    fields = {f.name: f for f in _form().fields}
    assert convert(fields["age"], "42") == (42, None)
    assert convert(fields["age"], "200")[1] == "200 is above 150"
    assert convert(fields["age"], "forty")[1] == "'forty' is not an integer"
    assert convert(fields["name"], "A")[1] == "at least 2 characters"
    email = form_field("e", {"type": "string", "format": "email"}, True)
    assert not isinstance(email, str)
    assert convert(email, "a@b.io") == ("a@b.io", None)
    assert "not an email" in str(convert(email, "nope")[1])


async def test_answers_are_sent_with_the_values_not_the_labels() -> None:
    user = ScriptedUser(
        choices={"for size": "Medium", "for tags": ["c", "a"], "for ok": "No"},
        texts={"for Name": "Ada", "for age": ["old", "36"]},
    )
    result = await ask(user, _form())
    assert result.action == "accept"
    assert result.content == {
        "name": "Ada",
        "age": 36,
        "size": "m",
        "tags": ["c", "a"],
        "ok": False,
    }
    # at most 2 tags: after two picks the field ends without asking for "Done"
    tag_questions = [o for m, o in user.asked if "for tags" in m]
    assert len(tag_questions) == 2


async def test_without_free_text_defaults_are_used_and_a_required_text_cancels() -> None:
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "note": {"type": "string", "default": "-"}},
    }
    user = ScriptedUser(choices={"for ok": "Yes"}, typing=False)
    assert (await ask(user, _form(schema))).content == {"ok": True, "note": "-"}
    blocked = ScriptedUser(typing=False)
    assert (await ask(blocked, _form())).action == "cancel"  # `name` cannot be typed here
    assert not any(o == [] for _, o in blocked.asked)  # no text question was attempted


async def test_decline_dismiss_nobody_and_url_mode() -> None:
    assert (await ask(ScriptedUser(choices={"asks:": "Decline"}), _form())).action == "decline"
    assert (await ask(None, _form())).action == "cancel"
    url = types.ElicitRequestURLParams(
        message="Connect your account", url="https://example.com/connect", elicitation_id="1"
    )
    user = ScriptedUser(choices={"open https://example.com/connect": "Open the page"})
    result = await ask(user, Elicitation.of("srv", url))
    assert result.action == "accept"
    assert user.opened == ["https://example.com/connect"]
    assert "MCP server 'srv'" in user.asked[0][0]
    for bad in ("file:///etc/passwd", "javascript:alert(1)", "http://10.0.0.1/x"):
        sneaky = types.ElicitRequestURLParams(message="m", url=bad, elicitation_id="2")
        tempted = ScriptedUser(choices={"open": "Open the page"})
        assert (await ask(tempted, Elicitation.of("srv", sneaky))).action == "decline"
        assert tempted.opened == []
        assert tempted.asked == []  # not even offered
