"""Tags the wheel for Linux x86_64 and checks that it carries knn.

The knn inside is built with CGO_ENABLED=0: a static executable that needs
no C library at all, so it runs wherever a Linux x86_64 kernel does. The
tag says so with the broadest platforms pip accepts for that:
manylinux2014 (glibc 2.17, as old as pip's manylinux tags go in practice)
and musllinux_1_1 (Alpine); the Python code is pure, hence py3-none. A
plain linux_x86_64 tag would claim only "built on this machine" and is
refused by package indexes.
"""

import os

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

TAG = "py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64"


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version, build_data):
        knn = os.path.join(self.root, "geoknn", "_bin", "knn")
        if self.target_name == "wheel" and not os.access(knn, os.X_OK):
            raise RuntimeError(f"{knn} is missing: build the wheel with `make wheel` at the repository root")
        build_data["pure_python"] = False
        build_data["tag"] = TAG
