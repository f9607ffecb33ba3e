"""Allocation-heavy Python of our own: object churn, string building, hash
growth, list sorting. python3 churn.py N"""
import sys


class Item:
    __slots__ = ("id", "name", "tags")

    def __init__(self, i):
        self.id = i
        self.name = "item-%d-" % i * (1 + i % 5)
        self.tags = [str(i), hex(i * 7)]


def main(n):
    live = []
    for i in range(n):
        live.append(Item(i))
        if len(live) > 5000:
            del live[: len(live) // 2]
    parts = ["line %d %s\n" % (i, "x" * (i % 31)) for i in range(n // 4)]
    text = "".join(parts)
    table = {}
    for i, w in enumerate(text.split()):
        table["%s:%d" % (w, i % 1000)] = w * 2
    ordered = sorted(table, key=len)
    assert table and live and ordered
    print("ok", len(table))


main(int(sys.argv[1]))
