"""A shopping cart: items, a subtotal and a discounted total."""

from dataclasses import dataclass, field

from shop.pricing import apply_discount


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 1


@dataclass
class Cart:
    items: list[Item] = field(default_factory=list)
    discount_percent: float = 0.0

    def add(self, name: str, price: float, quantity: int = 1) -> None:
        self.items.append(Item(name, price, quantity))

    def subtotal(self) -> float:
        return sum(item.price for item in self.items)

    def total(self) -> float:
        return apply_discount(self.subtotal(), self.discount_percent)
