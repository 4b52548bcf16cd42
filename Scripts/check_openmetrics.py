#!/usr/bin/env python3
"""Reads an OpenMetrics 1.0 exposition on stdin with prometheus_client's strict parser.

Prints one line per metric family (name, type, number of samples) and exits 0, or prints the
parser's complaint and exits 1. Used by the serve tests to check what /metrics returns when a
scraper asks for OpenMetrics.
"""
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def main() -> int:
    text = sys.stdin.read()
    try:
        for family in text_string_to_metric_families(text):
            print(f"{family.name} {family.type} {len(family.samples)}")
    except Exception as error:  # the parser raises ValueError and others for malformed text
        print(f"invalid OpenMetrics: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
