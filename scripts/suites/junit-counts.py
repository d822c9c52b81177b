"""Prints `E executed, S skipped, F failed` for a JUnit XML report (pytest --junitxml), or
`no report`; exits 1 when the report is missing, a test failed or none ran."""

import sys
import xml.etree.ElementTree as ET

try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print('no report')
    raise SystemExit(1)
suites = [root] if root.tag == 'testsuite' else list(root)
total = sum(int(s.get('tests', 0)) for s in suites)
skipped = sum(int(s.get('skipped', 0)) for s in suites)
bad = sum(int(s.get('failures', 0)) + int(s.get('errors', 0)) for s in suites)
print(f'{total - skipped} executed, {skipped} skipped, {bad} failed')
raise SystemExit(1 if bad or total - skipped == 0 else 0)
