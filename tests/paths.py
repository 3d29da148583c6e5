"""Where the project's folders are, for tests and their helpers."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
TOOLS = os.path.join(ROOT, "tools")
MODELS = os.path.join(FIXTURES, "models")
