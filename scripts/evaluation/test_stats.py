"""Known values for the evaluation's statistics: `python -m unittest scripts/evaluation/test_stats.py`."""

import itertools
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation import stats  # noqa: E402


def exact_two_sided(a, b):
    """The exact two-sided p of Mann-Whitney U without ties, by enumerating
    every way to split the ranks: an implementation independent of SciPy's."""
    n, m = len(a), len(b)
    ranked = sorted(a + b)
    rank = {v: i + 1 for i, v in enumerate(ranked)}
    u = sum(rank[x] for x in a) - n * (n + 1) / 2
    us = [sum(c) - n * (n + 1) / 2 for c in itertools.combinations(range(1, n + m + 1), n)]
    mean = n * m / 2
    extreme = sum(1 for x in us if abs(x - mean) >= abs(u - mean))
    return extreme / len(us)


class MannWhitney(unittest.TestCase):
    def test_tiny_samples_match_the_exact_distribution(self):
        for a, b in [([1, 2, 3], [4, 5, 6]), ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), ([3, 9, 1, 7], [2, 8, 5]),
                     ([10], [20, 30]), ([1.5, 2.5, 9.0], [3.0, 4.0, 8.0, 10.0, 11.0])]:
            with self.subTest(a=a, b=b):
                self.assertAlmostEqual(stats.p_value(a, b), exact_two_sided(a, b), places=12)

    def test_known_values(self):
        # 2/C(10,5): complete separation of five against five.
        self.assertAlmostEqual(stats.p_value([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), 2 / 252, places=12)
        # R's ?wilcox.test example (ties; normal approximation with continuity
        # correction): W = 58, p-value = 0.1329.
        x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
        y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
        self.assertAlmostEqual(stats.p_value(x, y), 0.1329, places=4)
        # Ties within and across samples, computed with SciPy 1.17
        # (mannwhitneyu, two-sided, tie-corrected normal approximation).
        self.assertAlmostEqual(stats.p_value([10, 20, 20, 30], [20, 30, 30, 40]), 0.17203370892, places=9)
        self.assertAlmostEqual(stats.p_value([121, 121], [113, 120]), 0.22067136192, places=9)

    def test_symmetric_and_constant(self):
        a, b = [5, 9, 12, 14], [1, 3, 8]
        self.assertAlmostEqual(stats.p_value(a, b), stats.p_value(b, a), places=12)
        self.assertEqual(stats.p_value([7, 7, 7], [7, 7]), 1.0)
        with self.assertRaises(ValueError):
            stats.p_value([], [1])


class VarghaDelaney(unittest.TestCase):
    def test_known_values(self):
        self.assertEqual(stats.a12([5, 6], [1, 2]), 1.0)
        self.assertEqual(stats.a12([1, 2], [5, 6]), 0.0)
        self.assertEqual(stats.a12([1, 2, 3], [1, 2, 3]), 0.5)
        # pairs: (1,2)<,(1,3)<,(2,2)=,(2,3)<,(2,2)=,(2,3)< -> 1/6
        self.assertAlmostEqual(stats.a12([1, 2, 2], [2, 3]), 1 / 6)
        self.assertAlmostEqual(stats.a12([3], [1, 3, 5, 7]), (1 + 0.5) / 4)

    def test_complement(self):
        a, b = [4, 8, 8, 1], [8, 2, 5]
        self.assertAlmostEqual(stats.a12(a, b) + stats.a12(b, a), 1.0)
        self.assertEqual(stats.magnitude(0.5), "negligible")
        self.assertEqual(stats.magnitude(0.75), "large")


class Ranks(unittest.TestCase):
    def test_ties_share_the_mean_rank(self):
        self.assertEqual(stats.ranks({"a": 3, "b": 3, "c": 1}), {"a": 1.5, "b": 1.5, "c": 3.0})
        self.assertEqual(stats.ranks({"a": 1, "b": 2, "c": 3}), {"c": 1.0, "b": 2.0, "a": 3.0})

    def test_mean_rank_over_targets_uses_medians(self):
        coverage = {"t1": {"a": [10, 30, 20], "b": [5, 40, 15]}, "t2": {"a": [1, 1, 1], "b": [2, 2, 2]}}
        self.assertEqual(stats.mean_ranks(coverage), {"a": 1.5, "b": 1.5})

    def test_quartiles(self):
        self.assertEqual(stats.quartiles([1, 2, 3, 4, 5]), (2, 3, 4))
        self.assertEqual(stats.quartiles([7]), (7, 7, 7))


if __name__ == "__main__":
    unittest.main()
