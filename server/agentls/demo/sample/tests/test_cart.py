from shop.cart import Cart
from shop.pricing import apply_discount


def test_discount_takes_percent_off() -> None:
    assert apply_discount(200.0, 10) == 180.0


def test_subtotal_counts_quantities() -> None:
    cart = Cart()
    cart.add("pen", 1.5, quantity=4)
    cart.add("pad", 3.0)
    assert cart.subtotal() == 9.0


def test_total_with_discount() -> None:
    cart = Cart(discount_percent=25)
    cart.add("book", 20.0, quantity=2)
    assert cart.total() == 30.0
