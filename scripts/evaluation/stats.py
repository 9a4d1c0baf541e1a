"""The statistics of a fuzzer evaluation, as FuzzBench reports them.

- Two-sided Mann-Whitney U on final coverage, from SciPy
  (`scipy.stats.mannwhitneyu`: the exact distribution for small samples
  without ties, the normal approximation with tie correction otherwise).
- Vargha-Delaney A12: the probability that a trial of A beats one of B,
  ties counting half.
- Mean rank of each configuration across targets, by median final coverage.
"""

from statistics import median

from scipy.stats import mannwhitneyu


def p_value(a: list, b: list) -> float:
    """Two-sided Mann-Whitney U p-value; 1.0 when both samples are constant and equal."""
    if len(a) == 0 or len(b) == 0:
        raise ValueError("Mann-Whitney U needs at least one value on each side")
    if len(set(a) | set(b)) == 1:
        return 1.0
    return float(mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue)


def a12(a: list, b: list) -> float:
    """Vargha-Delaney A12: P(A > B) + 0.5 * P(A = B) over all pairs."""
    if len(a) == 0 or len(b) == 0:
        raise ValueError("A12 needs at least one value on each side")
    wins = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)
    return wins / (len(a) * len(b))


def magnitude(a12_value: float) -> str:
    """Vargha and Delaney's thresholds on |A12 - 0.5|."""
    d = abs(a12_value - 0.5)
    return "negligible" if d < 0.06 else "small" if d < 0.14 else "medium" if d < 0.21 else "large"


def ranks(medians: dict) -> dict:
    """Rank 1 for the highest median; tied values share the mean of their ranks."""
    ordered = sorted(medians.items(), key=lambda item: -item[1])
    result, i = {}, 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1][1] == ordered[i][1]:
            j += 1
        for k in range(i, j + 1):
            result[ordered[k][0]] = (i + j) / 2 + 1
        i = j + 1
    return result


def mean_ranks(final_coverage: dict) -> dict:
    """final_coverage[target][config] = [values] → config → mean rank over targets."""
    per_config = {}
    for by_config in final_coverage.values():
        for config, rank in ranks({c: median(v) for c, v in by_config.items()}).items():
            per_config.setdefault(config, []).append(rank)
    return {config: sum(r) / len(r) for config, r in per_config.items()}


def quartiles(values: list) -> tuple:
    """(q1, median, q3) by linear interpolation between order statistics."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")

    def at(q):
        pos = q * (len(ordered) - 1)
        low = int(pos)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)

    return at(0.25), at(0.5), at(0.75)
