# lit.cfg.py - runs Loom's GoogleTest unit tests under lit.
import os
import lit.formats

config.name = "Loom-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.loom_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
