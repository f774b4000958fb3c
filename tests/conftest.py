import os
import sys

# Make ``common_instances`` importable as a top-level package of the test tree.
sys.path.insert(0, os.path.dirname(__file__))
