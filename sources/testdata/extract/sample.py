#!/usr/bin/env python3
"""Module docstring.

def not_a_function():
"""

import os
from typing import List

CONSTANT = 3
OTHER = "x"


@decorator
def top(a, b):
    """Docstring."""
    if a:
        return b

    # comment inside
    return a


class Greeter(Base):
    greeting = "hi"

    def __init__(self, name):
        self.name = name

    async def greet(self) -> str:
        return f"{self.greeting} {self.name}"


def spans(
    x,
    y,
):
    return x + y


if __name__ == "__main__":
    top(1, 2)
else:
    pass
