"""Pharmacy (``com.elderphone.pharmacy``): a life-service app to reorder medicines.

Products can reach the cart three ways (Refill on a prescription, Add to cart, Buy now).
Placing the order asks for confirmation in a payment dialog over the dimmed cart; paying
shows an "Order placed" toast and the order list. Cart and orders are app data.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from virtual_phone.apps.base import App, Dialog, Screen, Ui
from virtual_phone.apps.kit import (
    ON_SURFACE_VARIANT,
    SURFACE_CONTAINER,
    SURFACE_HIGH,
    WHITE,
    Column,
    Trailing,
    alert,
    button,
    cancel_and,
    divider,
    edit_text,
    icon,
    icon_button,
    list_page,
    list_row,
    measure,
    radio,
    scroll_list,
    text,
    text_line,
    toolbar,
    toolbar_action,
    toolbar_height,
    trailing_icon_button,
)
from virtual_phone.apps.updates import WhatsNewDialog, push_with_news
from virtual_phone.widgets import Color, Rect, TextBuffer, View

PACKAGE = "com.elderphone.pharmacy"
UI = "com.elderphone.pharmacy.ui"
GREEN: Color = (0, 121, 107)
GREEN_CONTAINER: Color = (224, 242, 241)
CARD = "Visa ****4242"


@dataclass(frozen=True, slots=True)
class Product:
    id: str
    name: str
    detail: str
    price: int  # cents
    prescription: bool = False


PRODUCTS: tuple[Product, ...] = (
    Product("lisinopril", "Lisinopril 10 mg", "Blood pressure - 30 tablets", 1250, True),
    Product("metformin", "Metformin 500 mg", "Diabetes - 60 tablets", 890, True),
    Product("atorvastatin", "Atorvastatin 20 mg", "Cholesterol - 30 tablets", 1475, True),
    Product("vitamin_d", "Vitamin D3 1000 IU", "Supplement - 90 softgels", 999),
    Product("acetaminophen", "Acetaminophen 500 mg", "Pain relief - 100 caplets", 749),
    Product("allergy", "Loratadine 10 mg", "Allergy relief - 30 tablets", 1199),
    Product("bp_monitor", "Blood pressure monitor", "Upper arm cuff, large display", 3999),
    Product("pill_box", "Weekly pill organizer", "AM/PM, 14 compartments", 699),
    Product("eye_drops", "Lubricant eye drops", "Dry eye relief - 15 ml", 859),
)
DELIVERY = (("home", "Home delivery", 299), ("pickup", "Store pickup", 0))


def money(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def catalogue(ui: Ui) -> tuple[Product, ...]:
    """The products in the order the app lists them; version 2 lists Acetaminophen
    before Vitamin D3."""
    if ui.version < 2:
        return PRODUCTS
    order = [p.id for p in PRODUCTS]
    i, j = order.index("vitamin_d"), order.index("acetaminophen")
    order[i], order[j] = order[j], order[i]
    return tuple(product(pid) for pid in order)


def open_cart(ui: Ui) -> None:
    """Open the cart; version 2 announces its new delivery option there, once."""
    news = None
    if ui.version >= 2:
        news = WhatsNewDialog(
            "whats_new",
            "Free delivery",
            "Orders over $25 now ship free to your door.",
        )
    push_with_news(ui, CartScreen(), news)


def product(pid: str) -> Product:
    return next(p for p in PRODUCTS if p.id == pid)


def _data(ui: Ui) -> dict[str, Any]:
    return ui.host.app_data(PACKAGE)


def add_to_cart(ui: Ui, pid: str, quantity: int) -> None:
    cart: list[dict[str, Any]] = _data(ui)["cart"]
    line = next((line for line in cart if line["id"] == pid), None)
    if line is None:
        cart.append({"id": pid, "qty": quantity})
    else:
        line["qty"] += quantity


def cart_count(ui: Ui) -> int:
    return sum(line["qty"] for line in _data(ui)["cart"])


def totals(ui: Ui) -> tuple[int, int, int]:
    """(items, delivery fee, total) in cents."""
    data = _data(ui)
    items = sum(product(line["id"]).price * line["qty"] for line in data["cart"])
    fee = next(f for key, _label, f in DELIVERY if key == data["delivery"])
    return items, fee, items + fee


def _section_title(ui: Ui, col: Column, title: str, *, rid: str = "") -> View:
    """A bold green heading over a group of rows."""
    r = col.place(ui.sp(16) * 2 + ui.dp(8))
    return text(
        ui,
        Rect(r.left + ui.dp(16), r.top, r.right, r.bottom),
        title,
        size=16,
        bold=True,
        color=GREEN,
        rid=rid,
    )


def _cart_action(ui: Ui) -> View:
    count = cart_count(ui)
    view = toolbar_action(
        ui,
        0,
        "cart",
        f"Cart, {count} item{'s' if count != 1 else ''}",
        partial(open_cart, ui),
        rid=f"{PACKAGE}:id/action_cart",
    )
    r = view.rect
    if count:
        view.add(
            View(
                Rect(r.right - ui.dp(20), r.top, r.right, r.top + ui.dp(20)),
                bg=(179, 38, 30),
                radius=ui.dp(10),
                label=str(count),
                font_px=ui.dp(12),
                color=WHITE,
                align="center",
                xml=False,
            )
        )
    return view


class HomeScreen(Screen):
    screen_id = "pharmacy/home"
    activity = f"{UI}.MainActivity"

    def __init__(self) -> None:
        super().__init__()
        self.query = TextBuffer(hint="Search medicines")

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(c, cls="android.widget.FrameLayout", rid=f"{PACKAGE}:id/home_layout")
        bar_h = toolbar_height(ui)
        orders = toolbar_action(
            ui,
            1,
            "history",
            "My orders",
            lambda: ui.push(OrdersScreen()),
            rid=f"{PACKAGE}:id/action_orders",
        )
        root.add(
            toolbar(
                ui,
                "CarePlus Pharmacy",
                rid=f"{PACKAGE}:id/toolbar",
                actions=[orders, _cart_action(ui)],
                color=GREEN,
            )
        )
        sh = max(ui.dp(56), ui.sp(18) + ui.dp(24))
        sr = Rect(c.left + ui.dp(16), c.top + bar_h, c.right - ui.dp(16), c.top + bar_h + sh)
        box = View(
            sr,
            cls="android.widget.LinearLayout",
            rid=f"{PACKAGE}:id/search_box",
            bg=SURFACE_HIGH,
            radius=sh // 2,
        )
        box.add(
            icon(
                ui,
                Rect(
                    sr.left + ui.dp(16),
                    sr.center[1] - ui.dp(12),
                    sr.left + ui.dp(40),
                    sr.center[1] + ui.dp(12),
                ),
                "search",
            )
        )
        box.add(
            edit_text(
                ui,
                Rect(
                    sr.left + ui.dp(48),
                    sr.top + ui.dp(4),
                    sr.right - ui.dp(16),
                    sr.bottom - ui.dp(4),
                ),
                self.query,
                rid=f"{PACKAGE}:id/search_input",
                pad=ui.dp(4),
            )
        )
        root.add(box)
        top = sr.bottom + ui.dp(8)
        col = Column(c.left, top, c.width)
        rows: list[View] = []
        query = self.query.value.strip().lower()
        matches = [p for p in catalogue(ui) if query in p.name.lower() or query in p.detail.lower()]
        for title, group in (
            ("My prescriptions", [p for p in matches if p.prescription]),
            ("Health products", [p for p in matches if not p.prescription]),
        ):
            if not group:
                continue
            rows.append(_section_title(ui, col, title, rid=f"{PACKAGE}:id/section_title"))
            for item in group:
                rows.append(self._row(ui, col, item))
        if not matches:
            rows.append(
                text(
                    ui,
                    col.place(ui.dp(120)),
                    f'No results for "{self.query.value}"',
                    size=16,
                    align="center",
                    color=ON_SURFACE_VARIANT,
                    rid=f"{PACKAGE}:id/empty_view",
                )
            )
        root.add(
            scroll_list(
                ui,
                self,
                "products",
                Rect(c.left, top, c.right, c.bottom),
                rows,
                rid=f"{PACKAGE}:id/product_list",
                bottom_pad=ui.dp(16),
            )
        )
        return root

    def _row(self, ui: Ui, col: Column, item: Product) -> View:
        def refill() -> None:
            add_to_cart(ui, item.id, 1)
            ui.toast(f"{item.name} added to cart")

        trailing = None
        if item.prescription:
            width = max(ui.dp(88), int(ui.sp(14) * 0.6 * 6) + ui.dp(32))
            trailing = Trailing(
                width,
                lambda r: button(
                    ui,
                    Rect(r.left, r.center[1] - ui.dp(20), r.right, r.center[1] + ui.dp(20)),
                    "Refill",
                    refill,
                    rid=f"{PACKAGE}:id/refill_button",
                    size=14,
                    color=GREEN,
                    desc=f"Refill {item.name}",
                ),
            )
        return list_row(
            ui,
            col,
            item.name,
            summary=f"{item.detail} - {money(item.price)}",
            icon_name="pill",
            icon_bg=GREEN_CONTAINER,
            icon_color=GREEN,
            on_click=lambda: ui.push(ProductScreen(item.id)),
            title_rid=f"{PACKAGE}:id/product_name",
            summary_rid=f"{PACKAGE}:id/product_detail",
            icon_rid=f"{PACKAGE}:id/product_icon",
            trailing=trailing,
        )


class ProductScreen(Screen):
    activity = f"{UI}.ProductActivity"

    def __init__(self, pid: str) -> None:
        super().__init__()
        self.pid = pid
        self.quantity = 1
        self.screen_id = f"pharmacy/product/{pid}"

    def build(self, ui: Ui) -> View:
        c = ui.content
        item = product(self.pid)
        bar_h = toolbar_height(ui)
        root = View(c, cls="android.widget.LinearLayout", rid=f"{PACKAGE}:id/product_layout")
        root.add(
            toolbar(
                ui,
                "Product",
                up=ui.pop,
                rid=f"{PACKAGE}:id/toolbar",
                actions=[_cart_action(ui)],
            )
        )
        col = Column(c.left + ui.dp(24), c.top + bar_h + ui.dp(16), c.width - ui.dp(48))
        views: list[View] = []
        ir = col.place(ui.dp(160))
        views.append(
            icon(
                ui,
                Rect(ir.center[0] - ui.dp(80), ir.top, ir.center[0] + ui.dp(80), ir.bottom),
                "pill",
                color=GREEN,
                bg=GREEN_CONTAINER,
                rid=f"{PACKAGE}:id/product_image",
            )
        )
        col.skip(ui.dp(16))
        views.append(
            text(
                ui,
                col.place(measure(ui, item.name, 26, col.width)),
                item.name,
                size=26,
                rid=f"{PACKAGE}:id/product_name",
            )
        )
        views.append(
            text(
                ui,
                col.place(measure(ui, item.detail, 16, col.width) + ui.dp(8)),
                item.detail,
                size=16,
                color=ON_SURFACE_VARIANT,
                rid=f"{PACKAGE}:id/product_detail",
            )
        )
        if item.prescription:
            note = "Prescription on file - refills remaining: 3"
            views.append(
                text(
                    ui,
                    col.place(measure(ui, note, 14, col.width) + ui.dp(8)),
                    note,
                    size=14,
                    color=GREEN,
                    rid=f"{PACKAGE}:id/rx_note",
                )
            )
        views.append(
            text_line(
                ui,
                col,
                money(item.price),
                size=28,
                bold=True,
                rid=f"{PACKAGE}:id/product_price",
            )
        )
        col.skip(ui.dp(16))
        qr = col.place(ui.dp(56))
        views.append(
            text(ui, Rect(qr.left, qr.top, qr.left + ui.dp(120), qr.bottom), "Quantity", size=16)
        )
        b = ui.dp(48)
        x = qr.left + ui.dp(128)
        views.append(
            icon_button(
                ui,
                Rect(x, qr.top + ui.dp(4), x + b, qr.top + ui.dp(4) + b),
                "minus",
                "Decrease quantity",
                self._less,
                rid=f"{PACKAGE}:id/quantity_minus",
                enabled=self.quantity > 1,
                bg=SURFACE_CONTAINER,
            )
        )
        views.append(
            text(
                ui,
                Rect(x + b, qr.top, x + b + ui.dp(64), qr.bottom),
                str(self.quantity),
                size=20,
                align="center",
                rid=f"{PACKAGE}:id/quantity",
            )
        )
        views.append(
            icon_button(
                ui,
                Rect(
                    x + b + ui.dp(64),
                    qr.top + ui.dp(4),
                    x + 2 * b + ui.dp(64),
                    qr.top + ui.dp(4) + b,
                ),
                "plus",
                "Increase quantity",
                self._more,
                rid=f"{PACKAGE}:id/quantity_plus",
                enabled=self.quantity < 9,
                bg=SURFACE_CONTAINER,
            )
        )
        col.skip(ui.dp(24))
        bh = max(ui.dp(56), ui.sp(16) + ui.dp(28))

        def add() -> None:
            add_to_cart(ui, item.id, self.quantity)
            ui.toast("Added to cart")

        def buy() -> None:
            add_to_cart(ui, item.id, self.quantity)
            open_cart(ui)

        views.append(
            button(
                ui,
                col.place(bh),
                "Add to basket" if ui.version >= 2 else "Add to cart",  # version 2 renames it
                add,
                rid=f"{PACKAGE}:id/add_to_cart",
                style="outlined",
                color=GREEN,
            )
        )
        col.skip(ui.dp(12))
        views.append(
            button(ui, col.place(bh), "Buy now", buy, rid=f"{PACKAGE}:id/buy_now", color=GREEN)
        )
        root.add(
            scroll_list(
                ui,
                self,
                "product",
                Rect(c.left, c.top + bar_h, c.right, c.bottom),
                views,
                rid=f"{PACKAGE}:id/product_scroll",
                cls="android.widget.ScrollView",
                bottom_pad=ui.dp(16),
            )
        )
        return root

    def _less(self) -> None:
        self.quantity = max(1, self.quantity - 1)

    def _more(self) -> None:
        self.quantity = min(9, self.quantity + 1)


class CartScreen(Screen):
    screen_id = "pharmacy/cart"
    activity = f"{UI}.CartActivity"

    def build(self, ui: Ui) -> View:
        c = ui.content
        data = _data(ui)
        bar = toolbar(ui, "Cart", up=ui.pop, rid=f"{PACKAGE}:id/toolbar")
        col = Column(c.left, bar.rect.bottom, c.width)
        rows: list[View] = []
        for line in data["cart"]:
            item = product(line["id"])
            rows.append(
                list_row(
                    ui,
                    col,
                    item.name,
                    summary=f"Qty {line['qty']} - {money(item.price * line['qty'])}",
                    icon_name="pill",
                    icon_bg=GREEN_CONTAINER,
                    icon_color=GREEN,
                    title_rid=f"{PACKAGE}:id/cart_item_name",
                    summary_rid=f"{PACKAGE}:id/cart_item_detail",
                    icon_rid=f"{PACKAGE}:id/product_icon",
                    trailing=trailing_icon_button(
                        ui,
                        "delete",
                        f"Remove {item.name}",
                        partial(data["cart"].remove, line),
                        rid=f"{PACKAGE}:id/remove_item",
                    ),
                )
            )
        if not data["cart"]:
            rows.append(
                text(
                    ui,
                    col.place(ui.dp(160)),
                    "Your cart is empty",
                    size=18,
                    align="center",
                    color=ON_SURFACE_VARIANT,
                    rid=f"{PACKAGE}:id/empty_cart",
                )
            )
        else:
            rows.append(divider(ui, col))
            rows.append(_section_title(ui, col, "Delivery"))
            rh = max(ui.dp(56), ui.sp(16) + ui.dp(24))
            for key, label, fee in DELIVERY:
                r = col.place(rh)

                def choose(key: str = key) -> None:
                    data["delivery"] = key

                rows.append(
                    radio(
                        ui,
                        Rect(r.left + ui.dp(16), r.top, r.right - ui.dp(16), r.bottom),
                        f"{label} ({money(fee) if fee else 'free'})",
                        data["delivery"] == key,
                        choose,
                        rid=f"{PACKAGE}:id/delivery_{key}",
                    )
                )
            rows.append(
                list_row(
                    ui,
                    col,
                    "Payment",
                    summary=CARD,
                    icon_name="key",
                    title_rid=f"{PACKAGE}:id/payment_title",
                    summary_rid=f"{PACKAGE}:id/payment_method",
                )
            )
            items, fee, total = totals(ui)
            for label, cents, rid in (
                ("Items", items, "subtotal"),
                ("Delivery", fee, "delivery_fee"),
                ("Total", total, "total"),
            ):
                r = col.place(ui.sp(18) * 3 // 2 + ui.dp(4))
                rows.append(
                    text(
                        ui,
                        Rect(r.left + ui.dp(16), r.top, r.center[0], r.bottom),
                        label,
                        size=18,
                        bold=label == "Total",
                    )
                )
                rows.append(
                    text(
                        ui,
                        Rect(r.center[0], r.top, r.right - ui.dp(16), r.bottom),
                        money(cents),
                        size=18,
                        align="end",
                        bold=label == "Total",
                        rid=f"{PACKAGE}:id/{rid}",
                    )
                )
            col.skip(ui.dp(16))
            bh = max(ui.dp(56), ui.sp(16) + ui.dp(28))
            br = col.place(bh)
            rows.append(
                button(
                    ui,
                    Rect(br.left + ui.dp(16), br.top, br.right - ui.dp(16), br.bottom),
                    "Place order",
                    lambda: ui.show_dialog(PaymentDialog()),
                    rid=f"{PACKAGE}:id/place_order",
                    color=GREEN,
                )
            )
        return list_page(
            ui,
            self,
            bar,
            rows,
            rid=f"{PACKAGE}:id/cart_layout",
            list_rid=f"{PACKAGE}:id/cart_list",
            key="cart",
            bottom_pad=ui.dp(24),
        )


class PaymentDialog(Dialog):
    """Confirm payment: Cancel keeps the cart; Pay places the order."""

    dialog_id = "confirm_payment"

    def build(self, ui: Ui) -> View:
        _items, _fee, total = totals(ui)
        return alert(
            ui,
            title="Confirm payment",
            message=f"Pay {money(total)} with {CARD}?",
            buttons=cancel_and(ui, "Pay", lambda: self._pay(ui)),
        )

    def _pay(self, ui: Ui) -> None:
        data = _data(ui)
        _items, _fee, total = totals(ui)
        number = 1001 + len(data["orders"])
        data["orders"].insert(
            0,
            {
                "number": number,
                "total": total,
                "delivery": data["delivery"],
                "items": [f"{product(line['id']).name} x{line['qty']}" for line in data["cart"]],
            },
        )
        data["cart"] = []
        ui.close_dialog()
        ui.pop()
        ui.push(OrdersScreen())
        ui.toast("Order placed")


class OrdersScreen(Screen):
    screen_id = "pharmacy/orders"
    activity = f"{UI}.OrdersActivity"

    def build(self, ui: Ui) -> View:
        c = ui.content
        data = _data(ui)
        bar = toolbar(ui, "My orders", up=ui.pop, rid=f"{PACKAGE}:id/toolbar")
        col = Column(c.left, bar.rect.bottom, c.width)
        rows: list[View] = []
        for order in data["orders"]:
            how = "Home delivery" if order["delivery"] == "home" else "Store pickup"
            rows.append(
                list_row(
                    ui,
                    col,
                    f"Order #{order['number']} - {money(order['total'])}",
                    summary=f"Processing - {how}\n" + "\n".join(order["items"]),
                    icon_name="check",
                    icon_bg=GREEN_CONTAINER,
                    icon_color=GREEN,
                    title_rid=f"{PACKAGE}:id/order_title",
                    summary_rid=f"{PACKAGE}:id/order_detail",
                    icon_rid=f"{PACKAGE}:id/order_icon",
                )
            )
        if not rows:
            rows.append(
                text(
                    ui,
                    col.place(ui.dp(160)),
                    "No orders yet",
                    size=18,
                    align="center",
                    color=ON_SURFACE_VARIANT,
                    rid=f"{PACKAGE}:id/empty_orders",
                )
            )
        return list_page(
            ui,
            self,
            bar,
            rows,
            rid=f"{PACKAGE}:id/orders_layout",
            list_rid=f"{PACKAGE}:id/orders_list",
            key="orders",
        )


class PharmacyApp(App):
    package = PACKAGE
    versions = (1, 2)
    label = "Pharmacy"
    activity = f"{UI}.MainActivity"
    icon = "pill"
    icon_bg = GREEN

    def default_data(self) -> dict[str, Any]:
        return {"cart": [], "orders": [], "delivery": "home"}

    def root(self) -> Screen:
        return HomeScreen()
