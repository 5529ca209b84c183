# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MOSS"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.moss_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%moss_src_root", config.moss_src_root))
config.substitutions.append(("%cuda_path", config.moss_cuda_path))
config.substitutions.append(("%moss_tools_dir", config.moss_tools_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# The whitelist variable must not leak from the caller's shell into tests.
config.environment.pop("MOSS_CODEC_GEMM_CONFIG", None)

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.moss_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["moss-opt", "moss-aot"], tool_dirs)

# Tests that run ptxas need the CUDA toolkit (not a GPU).
if os.access(os.path.join(config.moss_cuda_path, "bin", "ptxas"), os.X_OK):
    config.available_features.add("ptxas")

# moss-bench and moss-tune exist where the runtime was built (a CUDA
# compiler was found); their argument checks need no GPU.
for tool, sub in (("moss-bench", "benchmarks/moss-bench/moss-bench"),
                  ("moss-tune", "benchmarks/moss-tune/moss-tune")):
    path = os.path.join(config.moss_obj_root, sub)
    if os.access(path, os.X_OK):
        config.available_features.add(tool)
        config.substitutions.append(("%" + tool.replace("-", "_"), path))
