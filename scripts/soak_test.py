"""Unit tests of the soak's verdict (scripts/soak.py), run by `make test`:
python3 -m unittest discover -s scripts -p 'soak_test.py'."""
import unittest

import soak


def rows(**series):
    length = len(next(iter(series.values())))
    flat = {"rss_mib": [100.0] * length, "open_fds": [40.0] * length,
            "db_connections": [17.0] * length, "p99_ms": [4.0] * length}
    flat.update(series)
    return [{column: values[i] for column, values in flat.items()} for i in range(length)]


def upward(data):
    return [label for label, _, _, _, up in soak.verdicts(data) if up]


class Verdict(unittest.TestCase):
    def test_flat_series_pass(self):
        self.assertEqual(upward(rows(rss_mib=[100.0] * 30)), [])

    def test_noise_around_a_level_passes(self):
        noisy = [100 + (3 if i % 2 else -3) for i in range(30)]
        self.assertEqual(upward(rows(rss_mib=noisy, p99_ms=[4, 9, 4, 5, 4] * 6)), [])

    def test_a_slow_leak_fails(self):
        # 1 MiB a minute: 29 MiB over 30 minutes, above 10 % of 100 MiB plus 8 MiB.
        self.assertEqual(upward(rows(rss_mib=[100.0 + i for i in range(30)])), ["server RSS (MiB)"])

    def test_growth_within_tolerance_passes(self):
        self.assertEqual(upward(rows(rss_mib=[100.0 + i * 0.3 for i in range(30)])), [])

    def test_the_warm_up_minute_is_not_judged(self):
        self.assertEqual(upward(rows(rss_mib=[20.0] + [100.0] * 29, db_connections=[2] + [17] * 29)), [])

    def test_leaking_descriptors_and_connections_fail(self):
        leaking = rows(open_fds=[40.0 + i for i in range(10)], db_connections=[5.0 + i for i in range(10)])
        self.assertEqual(upward(leaking), ["open file descriptors", "database connections"])

    def test_one_slow_minute_is_not_a_trend(self):
        self.assertEqual(upward(rows(p99_ms=[4.0] * 29 + [400.0])), [])

    def test_rising_latency_fails(self):
        self.assertEqual(upward(rows(p99_ms=[4.0 + i for i in range(30)])), ["p99 latency (ms)"])

    def test_too_short_a_run_judges_nothing(self):
        self.assertFalse(soak.rises([1.0, 50.0, 100.0], 0.0, 1.0))

    def test_falling_series_pass(self):
        self.assertEqual(upward(rows(rss_mib=[200.0 - i for i in range(30)])), [])


if __name__ == "__main__":
    unittest.main()
