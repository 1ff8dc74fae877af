"""Prices and discounts."""


def apply_discount(price: float, percent: float) -> float:
    """The price after taking `percent` off (e.g. 10 for 10%), rounded to cents."""
    return round(price * percent / 100, 2)
