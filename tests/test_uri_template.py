"""Tests for mcpkit.server.uri_template (CHECKLIST RES-16, RES-18, RES-19)."""

from __future__ import annotations

import random
import re
import time

import pytest

from mcpkit.server.uri_template import UriTemplate

# --- Parsing (RES-19) --------------------------------------------------------------


def test_properties() -> None:
    t = UriTemplate("db://{schema}/{table}/rows")
    assert t.template == "db://{schema}/{table}/rows"
    assert t.variables == ("schema", "table")
    assert UriTemplate("file:///{+path}").variables == ("path",)
    assert UriTemplate("static://no-vars").variables == ()
    assert repr(t) == "UriTemplate('db://{schema}/{table}/rows')"
    assert t == UriTemplate("db://{schema}/{table}/rows")
    assert len({t, UriTemplate("db://{schema}/{table}/rows")}) == 1


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("x://{#frag}", "operator '#'"),
        ("x://{/seg}", "operator '/'"),
        ("x://{.ext}", "operator '.'"),
        ("x://{;p}", "operator ';'"),
        ("x://{?q}", "operator '?'"),
        ("x://{&q}", "operator '&'"),
        ("x://{=q}", "operator '='"),
        ("x://{a,b}", "variable lists"),
        ("x://{+a,b}", "variable lists"),
        ("x://{a*}", "modifiers"),
        ("x://{a:3}", "modifiers"),
        ("x://{}", "empty expression"),
        ("x://{+}", "invalid variable name"),
        ("x://{a-b}", "invalid variable name"),
        ("x://{a b}", "invalid variable name"),
        ("x://{a", "unbalanced"),
        ("x://a}", "unbalanced"),
        ("x://{{a}}", "unbalanced"),
        ("x://{a}/{a}", "repeats"),
    ],
)
def test_unsupported_or_invalid_templates(template: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        UriTemplate(template)


def test_rfc6570_varnames() -> None:
    assert UriTemplate("x://{a.b}/{c_1}/{%41}").variables == ("a.b", "c_1", "%41")


def test_is_template() -> None:
    assert UriTemplate.is_template("file:///{path}")
    assert UriTemplate.is_template("file:///{+path}")
    assert not UriTemplate.is_template("file:///etc/hosts")
    assert not UriTemplate.is_template("x://{}")
    assert not UriTemplate.is_template("x://}{")


# --- Matching ------------------------------------------------------------------------


def test_simple_match() -> None:
    t = UriTemplate("db://{schema}/{table}/rows")
    assert t.match("db://public/users/rows") == {"schema": "public", "table": "users"}
    assert t.match("db://public/users/rows/") is None  # anchored at the end
    assert t.match("xdb://public/users/rows") is None  # anchored at the start
    assert t.match("db://public/a/b/rows") is None  # {var} is one segment
    assert t.match("db:///users/rows") is None  # {var} is non-empty
    assert t.match("db://pub?lic/users/rows") is None
    assert t.match("db://pub#lic/users/rows") is None


def test_literals_are_not_regex() -> None:
    t = UriTemplate("x://a.b/{id}(1)")
    assert t.match("x://a.b/7(1)") == {"id": "7"}
    assert t.match("x://aXb/7(1)") is None


def test_match_percent_decodes() -> None:
    t = UriTemplate("test://template/{id}/data")
    assert t.match("test://template/hello%20world/data") == {"id": "hello world"}
    assert t.match("test://template/%E4%B8%96%E7%95%8C/data") == {"id": "世界"}
    assert t.match("test://template/a%252Fb/data") == {"id": "a%2Fb"}  # decoded exactly once


def test_reserved_match_allows_slashes() -> None:
    t = UriTemplate("file:///{+path}")
    assert t.match("file:///projects/app/config.json") == {"path": "projects/app/config.json"}
    assert t.match("file:///a%20b/c") == {"path": "a b/c"}
    assert t.match("file:///") is None
    suffix = UriTemplate("repo://{owner}/{+path}/raw")
    assert suffix.match("repo://me/src/a/b.py/raw") == {"owner": "me", "path": "src/a/b.py"}


@pytest.mark.parametrize(
    "uri",
    [
        "test://template/..%2Fetc/data",  # RES-18: encoded slash in {var}
        "test://template/%2e%2e/data",  # RES-18: encoded dot-dot
        "test://template/%2E%2E/data",
        "test://template/../data",
        "test://template/..%5Cetc/data",  # backslash
        "test://template/a%5Cb/data",
        "test://template/a%00b/data",  # NUL
        "test://template/a%2Fb/data",  # {var} never yields "/"
        "test://template/%zz/data",  # malformed percent-encoding
        "test://template/%/data",
        "test://template/%FF/data",  # not UTF-8
        "test://template/a\nb/data",  # raw control character
        "test://template/a\x00b/data",
    ],
)
def test_simple_match_rejects_traversal(uri: str) -> None:
    # RES-16, RES-18
    assert UriTemplate("test://template/{id}/data").match(uri) is None


@pytest.mark.parametrize(
    "uri",
    [
        "file:///../etc/passwd",
        "file:///a/../../etc/passwd",
        "file:///a/%2e%2e/%2e%2e/etc/passwd",
        "file:///a/.%2E/b",
        "file:///a/..",
        "file:///..",
        "file:///a%2F..%2Fb",
        "file:///a\\..\\b",
        "file:///a%5C..%5Cb",
        "file:///a%00.txt",
        "file:///a/%C0%AE%C0%AE/b",  # overlong UTF-8 "..": invalid UTF-8
    ],
)
def test_reserved_match_rejects_traversal(uri: str) -> None:
    # RES-16, RES-18
    assert UriTemplate("file:///{+path}").match(uri) is None


def test_dots_that_are_not_traversal() -> None:
    t = UriTemplate("file:///{+path}")
    assert t.match("file:///a/..b/c") == {"path": "a/..b/c"}
    assert t.match("file:///a/b../c") == {"path": "a/b../c"}
    assert t.match("file:///a/./c") == {"path": "a/./c"}
    assert UriTemplate("x://{id}").match("x://...") == {"id": "..."}


def test_match_is_fast_on_long_input() -> None:
    t = UriTemplate("test://{a}/{b}/{+rest}/end")
    uri = "test://x/y/" + "a/" * 50_000 + "not-the-end"
    start = time.perf_counter()
    assert t.match(uri) is None
    assert time.perf_counter() - start < 1.0


# --- Expansion -----------------------------------------------------------------------


def test_expand_simple() -> None:
    t = UriTemplate("test://template/{id}/data")
    assert t.expand(id="abc") == "test://template/abc/data"
    assert t.expand(id="a b/c?d#e") == "test://template/a%20b%2Fc%3Fd%23e/data"
    assert t.expand(id="-._~") == "test://template/-._~/data"  # unreserved kept
    assert t.expand(id="世界") == "test://template/%E4%B8%96%E7%95%8C/data"
    assert t.expand(id="100%") == "test://template/100%25/data"


def test_expand_reserved() -> None:
    t = UriTemplate("file:///{+path}")
    assert t.expand(path="a/b c/d.txt") == "file:///a/b%20c/d.txt"
    assert t.expand(path=":/?#[]@!$&'()*+,;=") == "file:///:/?#[]@!$&'()*+,;="
    assert t.expand(path="a%20b%zz") == "file:///a%20b%25zz"  # pct-triplets pass through


def test_expand_match_round_trip() -> None:
    t = UriTemplate("db://{schema}/{table}/rows/{+key}")
    values = {"schema": "my schema", "table": "t?#&", "key": "k/1/世界"}
    assert t.match(t.expand(**values)) == values


def test_expand_missing_or_unknown_variables() -> None:
    t = UriTemplate("db://{schema}/{table}")
    with pytest.raises(ValueError, match="needs values"):
        t.expand(schema="a")
    with pytest.raises(ValueError, match="no variables"):
        t.expand(schema="a", table="b", extra="c")
    assert UriTemplate("static://x").expand() == "static://x"


# --- Ambiguity and performance -----------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("x://{a}{b}", "adjacent"),
        ("x://{a}{+b}", "adjacent"),
        ("x://{+a}/{+b}", "at most one"),
        ("x://a\nb/{id}", "control character"),
    ],
)
def test_ambiguous_templates_rejected(template: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        UriTemplate(template)


def test_split_of_ambiguous_matches() -> None:
    # Before the {+var} (or with none), a {var} followed by more variables ends at the
    # first occurrence of the literal after it; after the {+var} the split mirrors that
    # from the right; the {+var} takes the longest value the other parts allow.
    assert UriTemplate("x://{name}.{ext}").match("x://a.b.c") == {"name": "a", "ext": "b.c"}
    t = UriTemplate("x://{a}.{b}/{+path}/{c}.{d}")
    assert t.match("x://1.2.3/p/q/4.5.6") == {
        "a": "1",
        "b": "2.3",
        "path": "p/q",
        "c": "4.5",
        "d": "6",
    }
    assert UriTemplate("file:///{+dir}/{name}").match("file:///a/b/c") == {
        "dir": "a/b",
        "name": "c",
    }


@pytest.mark.parametrize(
    "template",
    ["x://{a}.{b}.{c}/end", "x://{+a}.{b}.{c}/end", "x://{a}x{+b}x{c}xend", "x://{a}aa{b}ab{c}"],
)
def test_match_is_linear_on_hostile_input(template: str) -> None:
    # RES-16: a crafted URI must not make matching take quadratic or worse time
    uri = "x://" + "a.x" * 100_000
    start = time.perf_counter()
    assert UriTemplate(template).match(uri) is None
    assert time.perf_counter() - start < 0.5


def _naive_regex(template: str) -> re.Pattern[str]:
    """Reference matcher: a plain backtracking regex with the same character classes."""
    pattern = re.sub(
        r"\\\{(\\\+)?[a-z0-9]+\\\}",
        lambda m: r"([^\x00-\x1f\x7f]+)" if m.group(1) else r"([^/?#\x00-\x1f\x7f]+)",
        re.escape(template),
    )
    return re.compile(pattern)


def test_matching_agrees_with_backtracking_regex() -> None:
    rng = random.Random(6570)
    alphabet = "ab./?x"
    for _ in range(1500):
        pieces = [rng.choice(["", "a", "/", ".x", "?", "b/"])]
        plus = rng.randrange(-1, 4)
        for i in range(rng.randrange(4)):
            pieces.append(f"{{+v{i}}}" if i == plus else f"{{v{i}}}")
            pieces.append(rng.choice(["a", "/", ".", "x/", "?", "ab"]))
        template = "".join(pieces)
        ours, reference = UriTemplate(template), _naive_regex(template)
        for _ in range(20):
            uri = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
            found = ours.match(uri)
            expected = reference.fullmatch(uri)
            if found is None:
                # Either no match at all, or our split hit an unsafe ".." value.
                assert expected is None or ".." in uri, (template, uri)
            else:
                assert expected is not None, (template, uri)
                assert ours.expand(**found) == uri, (template, uri)
