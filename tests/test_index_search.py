"""Ranking and filtering of `SymbolIndex.search`: exact > prefix > word > fuzzy, ties to
case-exact names, open files and shorter names; kind/path/container filters; the session
overlay; and that results stay right once the search structures are segmented."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentls.index import SymbolIndex

ROOT = Path("/ws")


def make_index(files: dict[str, str]) -> SymbolIndex:
    index = SymbolIndex(None)
    for name, text in files.items():
        index.update_file(ROOT / name, text, 0, len(text))
    return index


def names(index: SymbolIndex, query: str, **kw: object) -> list[str]:
    result = index.search(query, **kw)  # type: ignore[arg-type]
    return [f"{s.container}.{s.name}" if s.container else s.name for s in result.symbols]


CORPUS = {
    "svc/users.py": (
        "class UserService:\n"
        "    def fetch(self): pass\n"
        "    def fetch_all(self): pass\n"
        "def user_service_factory(): pass\n"
        "class UserServiceTest: pass\n"
        "def _user_helper(): pass\n"
        "user = 1\n"
    ),
    "svc/http.py": (
        "class HttpResponseCode: pass\n"
        "class HTTPServer: pass\n"
        "def handle_request_code(): pass\n"
        "class User: pass\n"
    ),
    "web/app.ts": (
        "export class UserServ {}\n"
        "export function userServe() {}\n"
        "export interface Fetcher { fetch(): void }\n"
    ),
}


@pytest.fixture
def index() -> SymbolIndex:
    return make_index(CORPUS)


def test_exact_beats_prefix_beats_word_beats_fuzzy(index: SymbolIndex) -> None:
    got = names(index, "user")
    # exact (case-exact first), then prefixes shortest first, then word matches.
    assert got[:2] == ["user", "User"]
    assert got.index("UserServ") < got.index("UserService") < got.index("UserServiceTest")
    assert got.index("UserServiceTest") < got.index("_user_helper")


def test_camel_and_snake_word_queries(index: SymbolIndex) -> None:
    for query in ("user serv", "UserServ", "user_serv"):
        got = names(index, query)
        assert "UserService" in got, query
        assert "user_service_factory" in got, query
    # A word inside a name ("Server" in HTTPServer) matches at its start.
    assert "HTTPServer" in names(index, "server")[:2]
    # Word matches rank above letters-in-order matches.
    got = names(index, "code")
    assert got.index("HttpResponseCode") < len(got)
    assert set(got[:2]) == {"HttpResponseCode", "handle_request_code"}


def test_case_exact_wins_ties(index: SymbolIndex) -> None:
    assert names(index, "UserServ")[0] == "UserServ"
    assert names(index, "userServe")[0] == "userServe"


def test_fuzzy_letters_in_order(index: SymbolIndex) -> None:
    got = names(index, "hrc")
    assert got[0] == "HttpResponseCode"
    assert "handle_request_code" in got
    assert names(index, "zzzq") == []


def test_shorter_names_first_among_prefixes(index: SymbolIndex) -> None:
    got = names(index, "fetch")
    assert got[:2] == ["Fetcher.fetch", "UserService.fetch"] or got[0].endswith("fetch")
    assert got.index("UserService.fetch") < got.index("UserService.fetch_all")


def test_open_files_win_ties() -> None:
    index = make_index({"a.py": "def run(): pass\n", "b.py": "def run(): pass\n"})
    first = index.search("run", open_paths=[ROOT / "b.py"]).symbols[0]
    assert first.path == ROOT / "b.py"
    first = index.search("run", open_paths=[ROOT / "a.py"]).symbols[0]
    assert first.path == ROOT / "a.py"


def test_kind_path_and_container_filters(index: SymbolIndex) -> None:
    assert names(index, "user", kind="function") == [
        "userServe",
        "user_service_factory",
        "_user_helper",
    ]
    assert names(index, "user", kind=["class", "variable"])[:2] == ["user", "User"]
    assert set(names(index, "user", path_prefix=ROOT / "web")) == {"UserServ", "userServe"}
    assert names(index, "UserService.fetch") == ["UserService.fetch", "UserService.fetch_all"]
    assert names(index, "Fetcher::fetch") == ["Fetcher.fetch"]


def test_empty_query_lists_by_filter(index: SymbolIndex) -> None:
    assert names(index, "", kind="interface") == ["Fetcher"]
    listed = names(index, "", path_prefix=ROOT / "web")
    assert listed == ["UserServ", "userServe", "Fetcher", "Fetcher.fetch"]
    assert names(index, "") == []


def test_limit(index: SymbolIndex) -> None:
    assert len(index.search("u", limit=3).symbols) == 3


def test_results_carry_location_and_first_line(index: SymbolIndex) -> None:
    (sym,) = index.search("fetch_all").symbols
    assert sym.path == ROOT / "svc/users.py"
    assert sym.kind == "method"
    assert sym.selection_range.start == (2, 8)
    assert sym.line_text == "def fetch_all(self): pass"
    assert sym.children == ()


def test_overlay_replaces_and_hides_files(index: SymbolIndex) -> None:
    overlay: dict[Path, str | bytes | None] = {
        ROOT / "svc/users.py": "class UserRepository: pass\n",
        ROOT / "svc/http.py": None,
        ROOT / "new.go": "package x\nfunc UserLookup() {}\n",
    }
    got = names(index, "user", overlay=overlay)
    assert "UserRepository" in got
    assert "UserLookup" in got
    assert "UserService" not in got
    assert "User" not in got
    # The index itself is unchanged.
    assert "UserService" in names(index, "user")


def test_ranking_survives_segment_folding() -> None:
    files = {
        f"pkg/mod{i}.py": f"class Model{i}: pass\ndef helper_{i}(): pass\n" for i in range(400)
    }
    files["pkg/user.py"] = "class UserService: pass\n"
    index = make_index(files)
    assert names(index, "UserServ") == ["UserService"]  # folds loose records into segments
    index.update_file(ROOT / "pkg/user.py", "class UserAccount: pass\n", 1, 1)
    assert names(index, "user") == ["UserAccount"]
    assert names(index, "model12")[0] == "Model12"
    assert names(index, "hlp399")[0] == "helper_399"
    index.remove_file(ROOT / "pkg/mod7.py")
    assert "Model7" not in names(index, "Model7")


def test_fuzzy_is_a_fallback_only_when_nothing_starts_with_the_query() -> None:
    index = make_index({"m.py": "def parse_args(): pass\nclass PatternSearch: pass\n"})
    # "pars" starts a name: letters-in-order matches would only add noise below it.
    assert names(index, "pars") == ["parse_args"]
    # Nothing starts with "ptrs": the fuzzy fallback finds PatternSearch.
    assert names(index, "ptrs") == ["PatternSearch"]


def test_common_and_rare_prefixes_rank_alike() -> None:
    """A prefix that starts hundreds of names and one that starts a few take different
    lookup paths; both return exact first, then shortest names, then by name."""
    body = "".join(f"def get_item_{i}(): pass\n" for i in range(700))
    index = make_index({"items.py": body, "other.py": "def get(): pass\ndef getter(): pass\n"})
    rare = names(index, "get_item_5", limit=200)
    assert rare == ["get_item_5"] + [f"get_item_5{i}" for i in range(10)] + [
        f"get_item_5{i:02d}" for i in range(100)
    ]
    common = names(index, "get", limit=15)
    assert common[:2] == ["get", "getter"]
    assert common[2:] == [f"get_item_{i}" for i in range(10)] + [f"get_item_1{i}" for i in range(3)]


def test_word_matches_found_far_down_a_common_word() -> None:
    """ "getG": every `get_value_N` has a word starting with "get" but none with "g" after
    it; the two real word matches are the longest names and must still be found."""
    body = "".join(f"def get_value_{i}(): pass\n" for i in range(1500))
    body += "def widget_get_group_handler(): pass\n"
    body += "def a_really_long_prefix_then_get_green_apples(): pass\n"
    index = make_index({"values.py": body})
    assert names(index, "getG") == [
        "widget_get_group_handler",
        "a_really_long_prefix_then_get_green_apples",
    ]
    assert names(index, "get_val", limit=3) == ["get_value_0", "get_value_1", "get_value_2"]


def test_results_stay_right_while_dead_entries_are_compacted_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Re-indexing many files of the base structure leaves dead entries in it; past a
    limit the structure is rebuilt on a background thread while queries keep answering
    correctly."""
    files = {
        f"f{n}.py": "".join(f"def fn_0_{n}_{i}(): pass\n" for i in range(600)) for n in range(40)
    }
    index = make_index({"other.py": "class Stable: pass\n", **files})
    index.compact()
    with caplog.at_level(logging.INFO, logger="agentls.index.symbol_index"):
        for n in range(25):
            body = "".join(f"def fn_1_{n}_{i}(): pass\n" for i in range(600))
            index.update_file(ROOT / f"f{n}.py", body, 1, len(body))
            assert names(index, f"fn_1_{n}_599") == [f"fn_1_{n}_599"]
            assert f"fn_0_{n}_599" not in names(index, f"fn_0_{n}_599")  # the old one is gone
            assert names(index, "Stable") == ["Stable"]
    assert "compacting in the background" in caplog.text


def test_typing_in_one_file_never_compacts_the_whole_index(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A file edited over and over replaces its own entries (merges drop the dead ones),
    so the whole-index rebuild, a stall on a big workspace, never starts."""
    index = make_index({"other.py": "class Stable: pass\n"})
    with caplog.at_level(logging.INFO, logger="agentls.index.symbol_index"):
        for version in range(40):
            body = "".join(f"def fn_{version}_{i}(): pass\n" for i in range(600))
            index.update_file(ROOT / "big.py", body, version, len(body))
            assert names(index, f"fn_{version}_599") == [f"fn_{version}_599"]
            assert names(index, f"fn_{version - 1}_599") == []
            assert names(index, "Stable") == ["Stable"]
    assert "compacting" not in caplog.text


def test_queued_edits_of_open_documents_are_answered_inline_when_small() -> None:
    """A query after a keystroke may apply the queued incremental re-parse itself (no
    thread hop); a big queued file, or any other queued change, sends it to a thread."""
    small = "".join(f"def small_{i}(): pass\n" for i in range(300))
    big = "".join(f"def big_{i}(): pass\n" for i in range(5000))
    index = make_index({"small.py": small, "big.py": big})
    index.build(
        [ROOT / "small.py", ROOT / "big.py"],
        read=lambda p: (small if "small" in p.name else big).encode(),
    )
    index.update_file(ROOT / "small.py", small + "def typed(): pass\n", -1, -1)
    names(index, "typed")  # folds the edit
    assert index.reparses_incrementally(str(ROOT / "small.py"))
    queued: list[str] | None = [str(ROOT / "small.py")]
    index.updates_waiting = lambda besides: queued
    assert index.answers_now()
    queued = [str(ROOT / "big.py")]  # its re-index would fold 5,000 symbols
    assert not index.answers_now()
    queued = None  # something else is queued or being applied
    assert not index.answers_now()
