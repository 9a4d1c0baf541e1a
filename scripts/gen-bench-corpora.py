#!/usr/bin/env python3
"""Writes the fixed JSON corpora of the benchmark (fixtures/bench/json-*).

Deterministic: the same files every time. Run from the repository root.
"""
import json
import os
import random

rng = random.Random(20261122)


def value(depth):
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.randrange(-1000, 100000)
    if kind == 1:
        return round(rng.uniform(-1e3, 1e3), rng.randrange(1, 5))
    if kind == 2:
        return rng.choice([True, False, None])
    if kind in (3, 4):
        alphabet = "abcdefghijklmnopqrstuvwxyz ÄéΩ\"\\\n\t/"
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
    if kind in (5, 6):
        return [value(depth + 1) for _ in range(rng.randrange(0, 5))]
    return {f"k{rng.randrange(100)}": value(depth + 1) for _ in range(rng.randrange(0, 5))}


def write(directory, documents):
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    for i, doc in enumerate(documents):
        with open(os.path.join(directory, f"{i:04d}.json"), "wb") as f:
            f.write(doc)


small = []
while len(small) < 250:
    doc = json.dumps(value(1), ensure_ascii=rng.random() < 0.5).encode()
    if 2 <= len(doc) <= 80:
        if rng.random() < 0.15:  # some malformed inputs, as in a real corpus
            cut = rng.randrange(1, len(doc))
            doc = doc[:cut]
        small.append(doc)
write("fixtures/bench/json-small", small)

large = []
while len(large) < 50:
    items = []
    size = 0
    while size < 2000:
        item = json.dumps(value(1))
        items.append(item)
        size += len(item) + 2
    doc = ("[" + ", ".join(items) + "]").encode()
    large.append(doc[:2048] if rng.random() < 0.1 else doc)
write("fixtures/bench/json-2k", large)
print(f"json-small: {len(small)} inputs, json-2k: {len(large)} inputs")
