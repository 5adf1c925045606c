"""Checks that the strict Prometheus text parser used by the integration tests rejects what
it should: a parser that accepts everything would make the /metrics test meaningless."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import prometheus_text  # noqa: E402

GOOD = (
    "# HELP a_total A.\n"
    "# TYPE a_total counter\n"
    'a_total{x="1",y="q\\"\\\\\\n"} 3\n'
    "# TYPE h histogram\n"
    'h_bucket{le="0.5"} 1\n'
    'h_bucket{le="+Inf"} 2\n'
    "h_sum 1.5\n"
    "h_count 2\n"
)


class PrometheusTextTest(unittest.TestCase):
    def test_accepts_valid_text(self):
        families = prometheus_text.parse(GOOD)
        self.assertEqual(families["a_total"]["samples"][0][1], {"x": "1", "y": 'q"\\\n'})
        self.assertEqual(families["h"]["type"], "histogram")

    def test_rejects_broken_text(self):
        broken = [
            GOOD[:-1],                                                   # no final newline
            "a_total 1\n",                                               # no TYPE
            "# TYPE a counter\n# TYPE a counter\na 1\n",                 # TYPE twice
            "# TYPE a counter\na{x=\"1\"} 1\na{x=\"1\"} 2\n",            # duplicate series
            "# TYPE a counter\na{x=1} 1\n",                              # unquoted label
            "# TYPE a counter\na{x=\"\\q\"} 1\n",                        # bad escape
            "# TYPE a counter\na one\n",                                 # bad value
            "# TYPE 1a counter\n",                                       # bad name
            "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",  # not cumulative
            "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",                         # no +Inf
            "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",                      # count mismatch
            "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n",                               # no sum
        ]
        for text in broken:
            with self.subTest(text=text):
                with self.assertRaises(ValueError):
                    prometheus_text.parse(text)


if __name__ == "__main__":
    unittest.main()
