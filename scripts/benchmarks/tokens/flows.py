"""The tokens bench's tasks, as the scripted agent does them: the shop, the support form, the small pages.

Each flow checks what the page shows at its end (the order's name, items and total; the request
sent), so a side that answers quickly but wrongly fails instead of scoring well.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..support import BenchError
from ..support.shop_pages import COUNTRIES, ORDER_CONFIRMED, Product, ShopPage
from ..support.task_pages import SIGNED_UP, SUPPORT_SENT
from .agent import Agent, FlowFailed

__all__ = [
    "COUNTRY",
    "CUSTOMER",
    "NOTES",
    "ORDER_NUMBER",
    "Order",
    "QUANTITY",
    "SEARCH",
    "WANTED_CATEGORY",
    "check_out",
    "order_total",
    "shop_flow",
    "small_flow",
    "support_flow",
    "wanted_product",
]


SEARCH = "desk lamp"
WANTED_CATEGORY = "Office"
# Who orders, and what the eight fields of the checkout get.
CUSTOMER = {
    "Full name": "Ada Lovelace",
    "Email": "ada@example.com",
    "Phone": "+44 20 7946 0000",
    "Street address": "12 St James's Square",
    "City": "London",
    "Postal code": "SW1Y 4JH",
}
COUNTRY = COUNTRIES[3]
ORDER_NUMBER = "BS-12345"
NOTES = ("Call the printer about the invoice", "Order more paper")
QUANTITY = 2  # of the first product in the cart


@dataclass
class Order:
    """What the shop flow buys, as the bench works it out from the catalogue it generated."""

    first: Product
    names: list[str] = field(default_factory=list)  # the three products added, in order
    total: float = 0.0


def order_total(shop: ShopPage, names: list[str], first_quantity: int) -> float:
    prices = {product.name: product.price for product in shop.catalogue}
    return round(sum(prices[name] * (first_quantity if index == 0 else 1) for index, name in enumerate(names)), 2)


def wanted_product(shop: ShopPage) -> Product:
    """The product the shop flow looks for: one matching the search in the wanted category, else the first match."""
    matches = [product for product in shop.catalogue if SEARCH in product.name.lower()]
    if not matches:
        raise BenchError(f"no product of the shop matches {SEARCH!r}: give it more products (--tokens-products)")
    return next((product for product in matches if product.category == WANTED_CATEGORY), matches[0])


async def shop_flow(agent: Agent, shop: ShopPage, url: Callable[[str], str], opens_tab: bool) -> Order:
    """Search, filter, open a product, add three to the cart, change a quantity, check out, read the confirmation.

    Raises:
        FlowFailed: when a step finds the page other than it should be.
    """
    first = wanted_product(shop)
    order = Order(first)
    agent.step = "open the shop"
    if opens_tab:
        await agent.call("browser_tabs", {"action": "new"})
    await agent.act("browser_navigate", {"url": url("/shop?new")})
    agent.step = "search"
    search = await agent.ref("searchbox", "Search")
    await agent.act("browser_type", {"element": "the search box", "target": search, "text": SEARCH})
    found = [product for product in shop.catalogue if SEARCH in product.name.lower()]
    await agent.expect(f"Products found: {len(found)} of {shop.products}")
    agent.step = "filter"
    category = await agent.ref("combobox", "Category")
    await agent.act(
        "browser_select_option",
        {"element": "the category filter", "target": category, "values": [first.category]},
    )
    in_category = [product for product in found if product.category == first.category]
    await agent.expect(f"Products found: {len(in_category)} of {shop.products}")
    agent.step = "open a product"
    link = await agent.ref("link", first.name, within="article")
    await agent.act("browser_click", {"element": f"the link to {first.name}", "target": link})
    await agent.expect(f'heading "{first.name}"')
    agent.step = "add to cart"
    button = await agent.ref("button", "Add to cart")
    await agent.act("browser_click", {"element": "Add to cart", "target": button})
    order.names.append(first.name)
    for name, ref in await agent.refs("button", r"Add to cart: [^\"]+", 2):
        await agent.act("browser_click", {"element": name, "target": ref})
        order.names.append(name.removeprefix("Add to cart: "))
    await agent.expect("Cart (3)")
    await check_out(agent, shop, order)
    return order


async def check_out(agent: Agent, shop: ShopPage, order: Order) -> None:
    """From the product page, the cart in its cart: change a quantity, fill the checkout, place the order.

    Raises:
        FlowFailed: when a step finds the page other than it should be.
    """
    first = order.first
    agent.step = "open the cart"
    cart = await agent.ref("link", "Cart (3)")
    await agent.act("browser_click", {"element": "the cart", "target": cart})
    await agent.expect("Your cart")
    agent.step = "change a quantity"
    quantity = await agent.ref("spinbutton", f"Quantity of {first.name}")
    await agent.act("browser_type", {"element": f"quantity of {first.name}", "target": quantity, "text": str(QUANTITY)})
    order.total = order_total(shop, order.names, QUANTITY)
    await agent.expect(f"Total: ${order.total:.2f} ({QUANTITY + 2} items)")
    agent.step = "checkout"
    checkout = await agent.ref("link", "Checkout")
    await agent.act("browser_click", {"element": "Checkout", "target": checkout})
    agent.step = "fill the form"
    fields = [
        {"name": label, "type": "textbox", "target": await agent.ref("textbox", label), "value": value}
        for label, value in CUSTOMER.items()
    ]
    fields.append(
        {"name": "Country", "type": "combobox", "target": await agent.ref("combobox", "Country"), "value": COUNTRY}
    )
    terms = await agent.ref("checkbox", "I accept the terms of sale")
    fields.append({"name": "I accept the terms of sale", "type": "checkbox", "target": terms, "value": "true"})
    await agent.act("browser_fill_form", {"fields": fields})
    agent.step = "place the order"
    place = await agent.ref("button", "Place order")
    await agent.act("browser_click", {"element": "Place order", "target": place})
    agent.step = "read the confirmation"
    for needle in (
        ORDER_CONFIRMED,
        f"Thank you, {CUSTOMER['Full name']}!",
        f"{QUANTITY + 2} items, total ${order.total:.2f}",
    ):
        await agent.expect(needle)


async def support_flow(agent: Agent, url: Callable[[str], str]) -> None:
    """Fill the form and its part in the iframe at once, send it, accept the confirm dialog, read that it was sent.

    Raises:
        FlowFailed: when a step finds the page other than it should be.
    """
    agent.step = "open the form"
    await agent.act("browser_navigate", {"url": url("/support")})
    agent.step = "fill the form and its frame"
    fields = [
        {"name": "Your name", "type": "textbox", "target": await agent.ref("textbox", "Your name"),
         "value": CUSTOMER["Full name"]},
        {"name": "Your email", "type": "textbox", "target": await agent.ref("textbox", "Your email"),
         "value": CUSTOMER["Email"]},
        {"name": "Topic", "type": "combobox", "target": await agent.ref("combobox", "Topic"), "value": "Returns"},
        {"name": "Order number", "type": "textbox", "target": await agent.ref("textbox", "Order number"),
         "value": ORDER_NUMBER},
        {"name": "Message", "type": "textbox", "target": await agent.ref("textbox", "Message"),
         "value": "The lamp arrived broken; I would like to return it."},
    ]  # fmt: skip
    await agent.act("browser_fill_form", {"fields": fields})
    agent.step = "send"
    send = await agent.ref("button", "Send request")
    answer = await agent.act("browser_click", {"element": "Send request", "target": send})
    if not agent.opened_dialog(answer):
        raise FlowFailed(f"the click on Send request shows no dialog: {answer[:1000]}")
    agent.step = "accept the dialog"
    await agent.act("browser_handle_dialog", {"accept": True})
    await agent.expect(f"{SUPPORT_SENT}: {CUSTOMER['Full name']}, order {ORDER_NUMBER}, topic Returns")


async def small_flow(agent: Agent, url: Callable[[str], str], opens_tab: bool = False) -> None:
    """Small pages: a form of three fields and a button, one field at a time; then a form that resets itself
    once sent, two notes saved with it.

    Raises:
        FlowFailed: when a step finds the page other than it should be.
    """
    agent.step = "open the small form"
    if opens_tab:
        await agent.call("browser_tabs", {"action": "new"})
    await agent.act("browser_navigate", {"url": url("/small-form")})
    for label, value in (("Name", CUSTOMER["Full name"]), ("Email", CUSTOMER["Email"]), ("City", CUSTOMER["City"])):
        agent.step = f"type the {label.lower()}"
        field = await agent.ref("textbox", label)
        await agent.act("browser_type", {"element": label, "target": field, "text": value})
    agent.step = "sign up"
    button = await agent.ref("button", "Sign up")
    await agent.act("browser_click", {"element": "Sign up", "target": button})
    await agent.expect(f"{SIGNED_UP}: {CUSTOMER['Full name']}, {CUSTOMER['Email']}, {CUSTOMER['City']}")
    agent.step = "open the notes"
    await agent.act("browser_navigate", {"url": url("/small-notes")})
    for note in NOTES:
        agent.step = "type a note"
        field = await agent.ref("textbox", "Note")
        await agent.act("browser_type", {"element": "Note", "target": field, "text": note})
        agent.step = "save the note"
        button = await agent.ref("button", "Save note")
        await agent.act("browser_click", {"element": "Save note", "target": button})
        # The note is an item of the list now, and the field it was typed in is empty again.
        await agent.expect_match(agent.dialect.item(note))
        if agent.dialect.field_value("textbox", "Note", note).search(agent.view.text):
            raise FlowFailed(f"the note's field still shows {note!r} after it was saved:\n{agent.view.text[:2000]}")
