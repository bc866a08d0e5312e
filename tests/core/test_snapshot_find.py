"""browser_find's search of a snapshot (broker/core/snapshot_find.py): what an agent reads of a match."""

from __future__ import annotations

import pytest

from broker.core.errors import InvalidRequest
from broker.core.snapshot_find import MAX_MATCHES, finder, found_lines
from broker.core.snapshot_tree import parse, render

SHOP = """- banner [ref=e1]:
  - link "Home" [ref=e2]
  - searchbox "Search" [ref=e3]
- main [ref=e4]:
  - heading "Shoes" [level=1] [ref=e5]
  - list [ref=e6]:
    - listitem [ref=e7]:
      - text: Red sneaker
      - button "Add to cart" [ref=e8]
    - listitem [ref=e9]:
      - text: Blue boot
      - button "Add to cart" [ref=e10]
    - listitem [ref=e11]:
      - text: Green sandal
      - button "Add to cart" [ref=e12]
  - iframe [ref=e13]:
    - button "Sign in" [ref=f1e2]
- contentinfo [ref=e14]:
  - link "Privacy" [ref=e15]"""


def find(yaml: str, **args: str) -> str:
    return "\n".join(found_lines(parse(yaml), finder(args)))


def test_a_match_comes_under_its_path_with_its_ref_and_its_neighbours() -> None:
    answer = find(SHOP, text="blue BOOT")
    assert answer.startswith("- 1 match\n```yaml\n")
    path = ["- main [ref=e4]:", "  - list [ref=e6]:", "    - listitem [ref=e9]:", "      - text: Blue boot"]
    shown = [line for line in answer.split("\n") if not line.strip().startswith("- …")]
    assert shown[shown.index(path[0]) : shown.index(path[0]) + 4] == path
    assert 'button "Add to cart" [ref=e10]' in answer
    # Its siblings beside it stand for the list; the rest of the page is left out.
    assert "Red sneaker" not in answer and "Home" not in answer and "Privacy" not in answer
    assert "- …" in answer


def test_a_match_in_a_frame_names_the_frame() -> None:
    answer = find(SHOP, regex="/sign in/i")
    assert '  - iframe [ref=e13]:\n    - button "Sign in" [ref=f1e2]' in answer


def test_matches_that_share_ancestors_share_their_lines() -> None:
    answer = find(SHOP, text="Add to cart")
    assert answer.startswith("- 3 matches")
    assert answer.count("- main [ref=e4]") == 1 and answer.count("- list [ref=e6]") == 1
    for ref in ("e8", "e10", "e12"):
        assert f"[ref={ref}]" in answer


def test_nothing_found_says_so() -> None:
    assert find(SHOP, text="checkout") == "- Nothing on the page matches 'checkout': browser_snapshot shows it all."


def test_a_regex_is_case_sensitive_unless_it_says_i() -> None:
    assert "Nothing" in find(SHOP, regex="shoes")
    assert "[ref=e5]" in find(SHOP, regex="/shoes/i")


def test_many_matches_show_the_first_ones_and_say_how_many() -> None:
    items = "\n".join(f'  - button "Item {index}" [ref=e{index + 2}]' for index in range(100))
    answer = find(f"- list [ref=e1]:\n{items}", text="Item")
    assert answer.startswith(f"- 100 matches; the first {MAX_MATCHES} are shown")
    assert f'"Item {MAX_MATCHES - 1}"' in answer and f'"Item {MAX_MATCHES + 5}"' not in answer


def test_on_a_long_page_a_find_is_a_small_part_of_the_snapshot() -> None:
    rows = "\n".join(
        f'    - row "Order {index} shipped" [ref=e{index + 3}]:\n      - cell "Order {index}"\n      - cell "shipped"'
        for index in range(400)
    )
    yaml = f"- main [ref=e1]:\n  - table [ref=e2]:\n{rows}"
    whole = len("\n".join(render(parse(yaml))))
    assert len(find(yaml, text="Order 217 ")) < 0.05 * whole


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({}, "needs `text`"),
        ({"text": "a", "regex": "b"}, "one of them"),
        ({"regex": "("}, "does not compile"),
        ({"regex": "/x/g"}, "flag 'g'"),
        ({"text": ""}, "words to find"),
    ],
)
def test_a_bad_search_is_refused_saying_why(args: dict[str, str], says: str) -> None:
    with pytest.raises(InvalidRequest, match=says):
        finder(args)
