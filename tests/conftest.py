import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
MODELS = os.path.join(FIXTURES, "models")
for p in (ROOT, FIXTURES):
    if p not in sys.path:
        sys.path.insert(0, p)
